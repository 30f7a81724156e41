package dev.felix.offload.schedule;

import java.time.Instant;

/** Hears of scheduled runs as they start and end, for logs and metrics. Called on the pass's own thread. */
public interface PassListener {

    default void started(String pass, Instant scheduledFor) {
    }

    default void finished(PassOutcome outcome) {
    }

    static PassListener none() {
        return new PassListener() { };
    }
}
