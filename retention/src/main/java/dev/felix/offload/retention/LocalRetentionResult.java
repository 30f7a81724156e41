package dev.felix.offload.retention;

import java.util.List;

/**
 * What local retention did to one shard.
 *
 * @param removedSegments ids of the segments unlinked, oldest first
 * @param removedBytes    their data files' bytes
 * @param localBytesAfter bytes of the data files left
 * @param blockedBy       why a segment past a local limit stayed (not offloaded yet, or its local
 *                        bytes differ from its entry), or null when nothing past a limit stayed
 */
public record LocalRetentionResult(List<Long> removedSegments, long removedBytes, long localBytesAfter,
                                   String blockedBy) {

    public LocalRetentionResult {
        removedSegments = List.copyOf(removedSegments);
    }

    /** Nothing done to a shard holding {@code localBytes}. */
    public static LocalRetentionResult nothing(long localBytes) {
        return new LocalRetentionResult(List.of(), 0, localBytes, null);
    }
}
