package dev.felix.offload.tier;

import java.time.Duration;
import java.util.List;

/**
 * What one offload pass did over a data root.
 *
 * @param nodeId  the node id keys were written under
 * @param shards  per-shard results, by shard name
 * @param elapsed how long the pass took
 */
public record PassReport(String nodeId, List<ShardResult> shards, Duration elapsed) {

    public PassReport {
        shards = List.copyOf(shards);
    }

    /** True when every shard offloaded every eligible segment. */
    public boolean complete() {
        return shards.stream().allMatch(ShardResult::complete);
    }

    public int segmentsUploaded() {
        return shards.stream().mapToInt(s -> s.uploaded().size()).sum();
    }

    public long bytesUploaded() {
        return shards.stream().mapToLong(ShardResult::bytesUploaded).sum();
    }

    public int segmentsUnlinked() {
        return shards.stream().mapToInt(s -> s.unlinked().size()).sum();
    }
}
