package dev.felix.offload.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * How one scheduled run of a pass ended.
 *
 * @param pass         the pass's name
 * @param status       how it ended
 * @param scheduledFor the fire time it ran for (or when a run was requested)
 * @param started      when it started, by the scheduler's clock
 * @param finished     when it ended, by the scheduler's clock
 * @param error        what it threw, as one line, or null
 * @param findings     what the run found, as the pass answered it; null when it threw or had nothing to say
 *                     (it ended at a stop before doing anything)
 */
public record PassOutcome(String pass, Status status, Instant scheduledFor, Instant started, Instant finished,
                          String error, Findings findings) {

    /**
     * What one run of a pass found, beyond whether it threw: a line for logs and {@code /health}, and
     * what went wrong in it.
     *
     * @param problems what went wrong (empty when all went well)
     */
    public record Findings(String summary, List<String> problems) {
        public Findings {
            problems = List.copyOf(problems);
        }

        public boolean ok() {
            return problems.isEmpty();
        }
    }

    public enum Status {
        /** It returned normally (also when it ended early because a stop was requested). */
        SUCCEEDED,
        /** It threw. */
        FAILED,
        /** The scheduler's stop ran out of patience and interrupted it. */
        ABANDONED
    }

    public boolean succeeded() {
        return status == Status.SUCCEEDED;
    }

    public Duration duration() {
        return Duration.between(started, finished);
    }
}
