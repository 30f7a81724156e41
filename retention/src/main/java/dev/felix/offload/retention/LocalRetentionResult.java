package dev.felix.offload.retention;

import java.util.List;
import java.util.Optional;

/**
 * What local retention did to one shard.
 *
 * @param removedSegments ids of the segments unlinked, oldest first
 * @param removedBytes    their data files' bytes
 * @param localBytesAfter bytes of the data files left
 * @param blockedBy       why a segment past a local limit stayed (not offloaded yet, or kept by the
 *                        local-release rule), empty when nothing past a limit stayed
 */
public record LocalRetentionResult(List<Long> removedSegments, long removedBytes, long localBytesAfter,
                                   Optional<RetentionBlock> blockedBy) {

    public LocalRetentionResult {
        removedSegments = List.copyOf(removedSegments);
        java.util.Objects.requireNonNull(blockedBy, "blockedBy");
    }

    /** Nothing done to a shard holding {@code localBytes}. */
    public static LocalRetentionResult nothing(long localBytes) {
        return new LocalRetentionResult(List.of(), 0, localBytes, Optional.empty());
    }
}
