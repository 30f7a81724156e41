package dev.felix.offload.retention;

import java.util.Objects;

/**
 * A shard whose unnamed objects the orphan sweep keeps, every one, because it cannot tell orphans
 * from history there. Reported once per shard per sweep.
 *
 * @param shard   the shard directory name, as the keys' prefix names it
 * @param reason  why the sweep keeps them
 * @param objects segment and index keys under the shard's prefix that no manifest names
 * @param bytes   their total size
 * @param detail  what the sweep saw, for an operator
 */
public record HeldShard(String shard, Reason reason, int objects, long bytes, String detail) {

    /** Why a shard's unnamed objects are kept. */
    public enum Reason {
        /**
         * The data root has nothing under the shard's name, and no deleted-stream clean-up is
         * finishing it: a lost disk, a volume that did not mount, a directory moved away. Its objects
         * may be the only copy of its history; {@code felix-offload restore} brings them back,
         * {@code felix-offload forget-shard} deletes them.
         */
        MISSING_SHARD("missing-shard"),
        /**
         * The shard's manifest names far fewer segments than the store holds for it (see
         * {@link OrphanSweep#STALE_MANIFEST_MIN_UNNAMED}): a manifest restored from an old snapshot.
         */
        STALE_MANIFEST("stale-manifest"),
        /**
         * Something stands under the shard's name that the sweep will not read as a shard: a link
         * the root does not list, a file, a directory it may not read, a manifest that does not decode.
         */
        UNREADABLE("unreadable-shard");

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        /** The name reports and metrics use. */
        public String label() {
            return label;
        }
    }

    public HeldShard {
        Objects.requireNonNull(shard, "shard");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
    }

    /** One line for logs and health reasons. */
    public String describe() {
        return reason.label() + " " + shard + ": " + objects + " objects (" + bytes + " bytes) kept; " + detail;
    }
}
