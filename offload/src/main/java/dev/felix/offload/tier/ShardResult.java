package dev.felix.offload.tier;

import java.util.List;

/**
 * What one pass did for one shard.
 *
 * @param shard     the shard directory name
 * @param complete  true when every eligible segment was offloaded
 * @param uploaded  segments copied, verified and recorded
 * @param unlinked  local segment ids removed after their copies were proven
 * @param pending   sealed segments left for a later pass (not eligible yet, or failed)
 * @param problem   why the shard stopped early, or null
 */
public record ShardResult(String shard, boolean complete, List<SegmentUpload> uploaded, List<Long> unlinked,
                          int pending, String problem) {

    public ShardResult {
        uploaded = List.copyOf(uploaded);
        unlinked = List.copyOf(unlinked);
    }

    public long bytesUploaded() {
        return uploaded.stream().mapToLong(SegmentUpload::bytes).sum();
    }
}
