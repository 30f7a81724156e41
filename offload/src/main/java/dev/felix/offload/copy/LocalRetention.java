package dev.felix.offload.copy;

/**
 * How much stays on local disk once segments have a verified copy in the store. Only segments with
 * a durable, matching manifest entry are ever unlinked, oldest first, never the active one.
 *
 * <p>{@link #removable} is the one count of how many may go: the offload pass asks it with its own
 * setting, retention with {@link KeepBytes} of {@code local.retention.bytes} (its age limit is a
 * second reason of its own). Each then removes a segment only once its copy is proven.
 */
public sealed interface LocalRetention {

    /**
     * How many of a shard's oldest segments this lets go, from the sizes of its segment files oldest
     * first; the last is the active segment, which never goes. Each kind answers for itself (Java 17
     * has no pattern switch over the kinds).
     */
    int removable(long[] sizesOldestFirst);

    /** Unlink nothing. */
    record KeepAll() implements LocalRetention {
        @Override
        public int removable(long[] sizesOldestFirst) {
            return 0;
        }
    }

    /** Keep the newest {@code segments} segments (the active one counts). */
    record KeepSegments(int segments) implements LocalRetention {
        public KeepSegments {
            if (segments < 1) {
                throw new IllegalArgumentException("keep at least the active segment locally, got " + segments);
            }
        }

        @Override
        public int removable(long[] sizesOldestFirst) {
            int count = sizesOldestFirst.length;
            return Math.max(0, Math.min(count - 1, count - segments));
        }
    }

    /** Keep the newest segments whose sizes add up to at most {@code bytes} (the active one always stays). */
    record KeepBytes(long bytes) implements LocalRetention {
        public KeepBytes {
            if (bytes < 0) {
                throw new IllegalArgumentException("local bytes to keep must not be negative, got " + bytes);
            }
        }

        /** The fewest oldest segments after which the rest add up to at most {@code bytes}. */
        @Override
        public int removable(long[] sizesOldestFirst) {
            int count = sizesOldestFirst.length;
            if (count <= 1) {
                return 0;
            }
            long kept = sizesOldestFirst[count - 1];
            int keepCount = 1;
            for (int i = count - 2; i >= 0; i--) {
                if (kept + sizesOldestFirst[i] > bytes) {
                    break;
                }
                kept += sizesOldestFirst[i];
                keepCount++;
            }
            return count - keepCount;
        }
    }
}
