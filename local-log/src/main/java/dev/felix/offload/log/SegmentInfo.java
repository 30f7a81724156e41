package dev.felix.offload.log;

/**
 * A segment of an open shard log, as callers outside the log see it.
 *
 * @param file       its files
 * @param version    its header's version
 * @param baseOffset the offset of its first record
 * @param nextOffset one past its last record (equal to the base when it holds none)
 * @param size       its valid bytes, header included
 * @param active     true for the segment being appended to; false once it is sealed
 */
public record SegmentInfo(SegmentFile file, int version, long baseOffset, long nextOffset, long size,
                          boolean active) {

    public long recordCount() {
        return nextOffset - baseOffset;
    }

    /** The last offset it holds; only when it holds a record. */
    public long lastOffset() {
        if (nextOffset == baseOffset) {
            throw new IllegalStateException(file.logName() + " holds no record");
        }
        return nextOffset - 1;
    }
}
