package dev.felix.offload.log.recovery;

import dev.felix.offload.log.format.CorruptionException;

/**
 * One thing wrong with a shard's files, as fsck reports it.
 *
 * @param file       the file name within the shard directory
 * @param kind       a {@code CorruptionKind} spec name, or for an index {@code IndexMissing} or
 *                   {@code IndexBaseOffset}
 * @param segmentId  the segment id the file belongs to, or {@code CorruptionSite.UNKNOWN_SEGMENT} for a
 *                   shard file that belongs to no segment (replica, producers, ...)
 * @param position   the byte position in the file (where a repair would truncate, for a record)
 * @param repairable whether recovery may repair it (derived files are rebuilt, so always true for them)
 * @param derived    true when the file is derived (an index, epochs, producers, keys.idx): rebuilt or
 *                   ignored, it never changes a shard's verdict
 * @param message    a sentence for a person, without the kind and position (which are fields)
 * @param cause      the corruption behind it, when one was raised
 */
public record Problem(String file, String kind, long segmentId, long position, boolean repairable,
                      boolean derived, String message, CorruptionException cause) {

    /** True when this problem is the corruption {@code k} (a decision on the type, not on {@link #kind}'s text). */
    public boolean is(dev.felix.offload.log.format.CorruptionKind k) {
        return cause != null && cause.kind() == k;
    }
}
