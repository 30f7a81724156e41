package dev.felix.offload.schedule;

import java.time.Duration;
import java.time.Instant;

/**
 * How one scheduled run of a pass ended.
 *
 * @param pass         the pass's name
 * @param status       how it ended
 * @param scheduledFor the fire time it ran for (or when a run was requested)
 * @param started      when it started, by the scheduler's clock
 * @param finished     when it ended, by the scheduler's clock
 * @param error        what it threw, as one line, or null
 */
public record PassOutcome(String pass, Status status, Instant scheduledFor, Instant started, Instant finished,
                          String error) {

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
