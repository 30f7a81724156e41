package dev.felix.offload.log.format;

import java.util.Objects;

/**
 * Where corruption was found: the shard (its directory name), the segment id (the number in the
 * file name, not an offset) and the byte position in the file.
 *
 * @param shard      the shard directory name, or a descriptive label when the file stands alone
 * @param segmentId  the segment id, or {@link #UNKNOWN_SEGMENT} when the file name carries none
 * @param position   the byte position in the file
 */
public record CorruptionSite(String shard, long segmentId, long position) {

    /** The segment id of a file whose name is not a segment id. */
    public static final long UNKNOWN_SEGMENT = -1;

    public CorruptionSite {
        Objects.requireNonNull(shard, "shard");
    }

    /** The same shard and segment at another byte position. */
    public CorruptionSite at(long newPosition) {
        return new CorruptionSite(shard, segmentId, newPosition);
    }

    @Override
    public String toString() {
        String segment = segmentId == UNKNOWN_SEGMENT ? "?" : Long.toString(segmentId);
        return "shard " + shard + ", segment " + segment + ", byte " + position;
    }
}
