package dev.felix.offload.log.recovery;

import dev.felix.offload.log.format.CorruptionException;

/**
 * One thing wrong with a shard's files, as fsck reports it.
 *
 * @param file       the file name within the shard directory
 * @param kind       a {@code CorruptionKind} spec name, or for an index {@code IndexMissing} or
 *                   {@code IndexBaseOffset}
 * @param segmentId  the segment id the file belongs to
 * @param position   the byte position in the file (where a repair would truncate, for a record)
 * @param repairable whether recovery may repair it (indexes are always rebuilt, so always true for them)
 * @param index      true when the problem is in an index file, which never changes a shard's verdict
 * @param message    a sentence for a person, without the kind and position (which are fields)
 * @param cause      the corruption behind it, when one was raised
 */
public record Problem(String file, String kind, long segmentId, long position, boolean repairable,
                      boolean index, String message, CorruptionException cause) {
}
