package dev.felix.offload.pass;

import dev.felix.offload.copy.CopyProofKind;

/**
 * One segment a pass copied to the store and recorded.
 *
 * @param segmentId  the segment id
 * @param baseOffset its first offset
 * @param lastOffset its last offset
 * @param bytes      the bytes uploaded (the segment's valid bytes)
 * @param crc32      their CRC32
 * @param key        the object's key
 * @param verifiedBy how the copy was proven
 * @param attempts   uploads it took
 */
public record SegmentUpload(long segmentId, long baseOffset, long lastOffset, long bytes, long crc32, String key,
                            CopyProofKind verifiedBy, int attempts) {
}
