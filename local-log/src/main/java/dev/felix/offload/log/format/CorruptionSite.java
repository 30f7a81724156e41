package dev.felix.offload.log.format;

import java.util.Objects;

/**
 * Where corruption was found: the shard (its directory name), the segment id (the number in the
 * file name, not an offset), the byte position in the file, and for files that are not a segment's
 * data (an index, the manifest, a side file) the file's name.
 *
 * @param shard      the shard directory name, or a descriptive label when the file stands alone
 * @param segmentId  the segment id, or {@link #UNKNOWN_SEGMENT} when the file belongs to no segment
 * @param position   the byte position in the file
 * @param file       the file's name when it is not the segment's data file, else null
 */
public record CorruptionSite(String shard, long segmentId, long position, String file) {

    /** The segment id of a file that belongs to no one segment. */
    public static final long UNKNOWN_SEGMENT = -1;

    public CorruptionSite {
        Objects.requireNonNull(shard, "shard");
    }

    /** A site in a segment's data file. */
    public CorruptionSite(String shard, long segmentId, long position) {
        this(shard, segmentId, position, null);
    }

    /** A site in a shard file that belongs to no one segment, such as {@code offload.manifest}. */
    public static CorruptionSite inFile(String shard, String file, long position) {
        return new CorruptionSite(shard, UNKNOWN_SEGMENT, position, Objects.requireNonNull(file, "file"));
    }

    /** The same file at another byte position. */
    public CorruptionSite at(long newPosition) {
        return new CorruptionSite(shard, segmentId, newPosition, file);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("shard ").append(shard);
        if (file != null) {
            s.append(", file ").append(file);
        }
        if (segmentId != UNKNOWN_SEGMENT) {
            s.append(", segment ").append(Long.toUnsignedString(segmentId));
        } else if (file == null) {
            s.append(", segment ?");
        }
        return s.append(", byte ").append(position).toString();
    }
}
