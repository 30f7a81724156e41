package dev.felix.offload.retention;

import java.util.Objects;

/**
 * Why a run of batch deletes left keys behind: the pass was asked to stop, or the store failed a
 * batch. Callers tell the two apart by type (a stop is no failure to report); {@link #label()} is
 * for output only.
 */
public sealed interface DeleteShortfall {

    /** What a report or a log line says of it. */
    String label();

    /** A stop was requested before every batch was deleted. */
    record Stopped() implements DeleteShortfall {
        @Override
        public String label() {
            return "stopped";
        }
    }

    /** The store failed a batch; the keys of that batch and every later one were left. */
    record StoreFailed(String error) implements DeleteShortfall {
        public StoreFailed {
            Objects.requireNonNull(error, "error");
        }

        @Override
        public String label() {
            return error;
        }
    }
}
