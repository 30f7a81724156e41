package dev.felix.offload.pass;

/**
 * An upload found its key already holding an object with other bytes than its own: another
 * shard's (a stream deleted and created again under the same name, a second root under the same
 * node id) or a stale one. The upload does not replace it, the segment is not recorded and nothing
 * is deleted; a later pass tries again, which succeeds once the object's owner has cleaned it up.
 *
 * @param segmentId     the segment being offloaded
 * @param key           the key that was taken (the segment's, or its index's)
 * @param foundSize     the size of the object found there
 * @param foundCrc32    the CRC32 of the object found there
 * @param expectedSize  the size this upload would have written
 * @param expectedCrc32 the CRC32 this upload would have written
 */
public record KeyCollision(long segmentId, String key, long foundSize, long foundCrc32, long expectedSize,
                           long expectedCrc32) {

    /** One line for an operator. */
    public String describe() {
        return String.format("segment %s not recorded: key %s already holds another object (%d bytes, crc32 %08x; "
                        + "this upload is %d bytes, crc32 %08x); it was left as it is and nothing was deleted, the next "
                        + "pass tries again", Long.toUnsignedString(segmentId), key, foundSize, foundCrc32, expectedSize,
                expectedCrc32);
    }
}
