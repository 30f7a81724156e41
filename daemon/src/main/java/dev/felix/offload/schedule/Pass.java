package dev.felix.offload.schedule;

import dev.felix.offload.copy.StopSignal;

/**
 * Work a {@link PassScheduler} runs on a schedule: an offload, retention or scrub pass. It should
 * check {@code stop} between units of work and end early, leaving nothing half-written, once it is
 * set; a pass that keeps running past the scheduler's patience is interrupted. Whatever it throws is
 * recorded as a failed run, and the next run happens on schedule. What it answers is the run's
 * {@link PassOutcome#findings()}.
 */
@FunctionalInterface
public interface Pass {

    /** Runs once; answers what the run found, or null when there is nothing to say. */
    PassOutcome.Findings run(StopSignal stop) throws Exception;
}
