package dev.felix.offload.pass;

/**
 * How much stays on local disk once segments have a verified copy in the store. Only segments with
 * a durable, matching manifest entry are ever unlinked, oldest first, never the active one.
 */
public sealed interface LocalRetention {

    /** Unlink nothing. */
    record KeepAll() implements LocalRetention {
    }

    /** Keep the newest {@code segments} segments (the active one counts). */
    record KeepSegments(int segments) implements LocalRetention {
        public KeepSegments {
            if (segments < 1) {
                throw new IllegalArgumentException("keep at least the active segment locally, got " + segments);
            }
        }
    }

    /** Keep the newest segments whose sizes add up to at most {@code bytes} (the active one always stays). */
    record KeepBytes(long bytes) implements LocalRetention {
        public KeepBytes {
            if (bytes < 0) {
                throw new IllegalArgumentException("local bytes to keep must not be negative, got " + bytes);
            }
        }
    }
}
