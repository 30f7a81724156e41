package dev.felix.offload.retention;

import java.util.Objects;

/**
 * Something a retention pass met in a shard that an operator must look at, whatever it then did:
 * the pass reports it as a failure (exit 1, {@code /health} degraded) and counts it by kind.
 *
 * @param kind    what it is
 * @param shard   the shard's name
 * @param segment the segment id
 * @param byteAt  the first byte at which the local segment differs from its copy or fails its
 *                checks, or -1 where no byte is concerned
 * @param detail  what was found and what was done
 */
public record RetentionProblem(Kind kind, String shard, long segment, long byteAt, String detail) {

    public enum Kind {
        /**
         * A sealed local segment fails its record checksums while its entry stands; it goes once the
         * copy re-verified against the entry, and stays otherwise.
         */
        LOCAL_DAMAGED("local-damaged"),
        /** A sealed local segment scans clean but holds other bytes than its entry: ambiguous, kept. */
        LOCAL_MISMATCH("local-mismatch"),
        /** A segment's largest record timestamp lies ahead of the clock: kept, time retention waits. */
        FUTURE_TIMESTAMP("future-timestamp"),
        /**
         * The copy of a segment recorded without a proof (under {@code --verify none}, or whose proof
         * was lost) was checked before its local file could go and holds other bytes: kept locally.
         */
        COPY_UNPROVEN("copy-unproven");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public RetentionProblem {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(shard, "shard");
        Objects.requireNonNull(detail, "detail");
    }

    /** One line: kind, segment, byte and detail. */
    public String describe() {
        return kind.label() + " in segment " + Long.toUnsignedString(segment)
                + (byteAt >= 0 ? " at byte " + byteAt : "") + ": " + detail;
    }
}
