package dev.felix.offload.retention;

import java.util.List;
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
 * @param keys    for {@link Reason#UNRECORDED_HISTORY}: the segment keys kept; empty otherwise
 * @param span    for {@link Reason#UNRECORDED_HISTORY}: the base offsets of the segment objects kept; null otherwise
 */
public record HeldShard(String shard, Reason reason, int objects, long bytes, String detail, List<String> keys,
                        Span span) {

    /** The lowest and highest base offset among kept segment objects. */
    public record Span(long firstBase, long lastBase) {
    }

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
         * The shard is here, but the store holds segment objects of it that its manifest does not name
         * and whose offsets nothing else holds (no local segment, no other entry): what a lost disk
         * leaves when the broker came back first, a manifest from an old snapshot, a restore over a
         * listing that lagged, a broker's rewrite that erased an entry. Possibly the only copy of those
         * records: kept, never swept. {@code felix-offload restore --shard S --merge} records them.
         */
        UNRECORDED_HISTORY("unrecorded-history"),
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
        keys = List.copyOf(keys);
    }

    /** A held shard without keys or offsets to name (a missing or unreadable one). */
    public HeldShard(String shard, Reason reason, int objects, long bytes, String detail) {
        this(shard, reason, objects, bytes, detail, List.of(), null);
    }

    /** One line for logs and health reasons. */
    public String describe() {
        return reason.label() + " " + shard + ": " + objects + " objects (" + bytes + " bytes) kept; " + detail;
    }
}
