package dev.felix.offload.root;

import java.util.Objects;

/**
 * Object keys of offloaded segments: {@code [prefix/]<node id>/<shard>/<base>-<segment>.segment}
 * with both numbers zero-padded to 20 digits, and, for a segment larger than
 * {@link #INDEX_OBJECT_ABOVE_BYTES}, the companion {@code .index} beside it. The shard
 * part is the shard's name under the data root ({@link dev.felix.offload.log.DataRoot.Shard#name()}):
 * a root-level shard's directory name, or {@code groups/<dir>}, {@code dead-letters/<dir>}, so no
 * two shards of a root share a key. Keys are deterministic, so a segment uploaded again meets its
 * earlier copy; uploads are create-only, so they never replace an object at the key (the offload
 * pass adopts a key holding its very bytes and stops at one holding others). A manifest entry keeps
 * the key it was written with, and readers use that, never a recomputed one.
 */
public final class SegmentKeys {

    public static final String SEGMENT_SUFFIX = ".segment";
    public static final String INDEX_SUFFIX = ".index";

    /**
     * Segments of at most this many bytes (4 MiB, one chunk of a reader's cache) are offloaded without
     * an index object: a reader fetches such a segment in one ranged GET whatever offset it wants, and
     * scans it from its start, so the index would save no request and cost each upload one or two
     * (for 64 KiB segments it doubled the requests per segment). Readers treat an index object of a
     * small segment offloaded before this rule as absent; once retention deleted its segment, the
     * orphan sweep's full listing finds it beside no segment and deletes it.
     */
    public static final long INDEX_OBJECT_ABOVE_BYTES = 4L * 1024 * 1024;

    /** Whether a segment of {@code validBytes} gets an index object beside it. */
    public static boolean hasIndexObject(long validBytes) {
        return validBytes > INDEX_OBJECT_ABOVE_BYTES;
    }

    private final String prefix;
    private final String nodeId;

    /**
     * @param prefix a key prefix without leading or trailing slash, or empty
     * @param nodeId a validated node id
     */
    public SegmentKeys(String prefix, String nodeId) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.startsWith("/") || prefix.endsWith("/")) {
            throw new IllegalArgumentException("key prefix must not start or end with '/': " + prefix);
        }
        this.prefix = prefix;
        this.nodeId = NodeId.validate(nodeId, "configuration");
    }

    /** The prefix every key of this node starts with, ending in a slash. */
    public String nodePrefix() {
        return (prefix.isEmpty() ? "" : prefix + "/") + nodeId + "/";
    }

    /** The prefix of one shard's keys (by its name under the data root), ending in a slash. */
    public String shardPrefix(String shardDirectory) {
        return nodePrefix() + shardDirectory + "/";
    }

    /** The key of a segment's bytes. */
    public String segmentKey(String shardDirectory, long baseOffset, long segmentId) {
        return shardPrefix(shardDirectory) + pad(baseOffset) + "-" + pad(segmentId) + SEGMENT_SUFFIX;
    }

    /** The key of the sparse index beside a segment's key. */
    public static String indexKeyFor(String segmentKey) {
        if (!segmentKey.endsWith(SEGMENT_SUFFIX)) {
            throw new IllegalArgumentException("not a segment key: " + segmentKey);
        }
        return segmentKey.substring(0, segmentKey.length() - SEGMENT_SUFFIX.length()) + INDEX_SUFFIX;
    }

    public String nodeId() {
        return nodeId;
    }

    private static String pad(long value) {
        String digits = Long.toUnsignedString(value);
        return "0".repeat(20 - digits.length()) + digits;
    }
}
