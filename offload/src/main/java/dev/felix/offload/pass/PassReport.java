package dev.felix.offload.pass;

import java.time.Duration;
import java.util.List;

/**
 * What one offload pass did over a data root.
 *
 * @param nodeId  the node id keys were written under
 * @param shards  per-shard results, by shard name
 * @param elapsed how long the pass took
 * @param cacheShardsLeftAlone cache and counter shards the pass did not touch, by name: compaction
 *                             trims their segments in place, so a copy would go stale
 * @param unreadable           names that may be shards but could not be examined, each with why
 */
public record PassReport(String nodeId, List<ShardResult> shards, Duration elapsed, List<String> cacheShardsLeftAlone,
                         List<String> unreadable) {

    /** Why cache and counter shards are never offloaded, for reports. */
    public static final String CACHE_SHARDS_REASON = "cache and counter shards are compacted in place, so a copy would go stale";

    public PassReport {
        shards = List.copyOf(shards);
        cacheShardsLeftAlone = List.copyOf(cacheShardsLeftAlone);
        unreadable = List.copyOf(unreadable);
    }

    public PassReport(String nodeId, List<ShardResult> shards, Duration elapsed) {
        this(nodeId, shards, elapsed, List.of(), List.of());
    }

    /**
     * True when every shard offloaded every eligible segment and no name that may be a shard was
     * skipped as unreadable: a shard the pass could not look into may hold segments nobody copied.
     */
    public boolean complete() {
        return unreadable.isEmpty() && shards.stream().allMatch(ShardResult::complete);
    }

    /** The key collisions that stopped shards, in shard order. */
    public List<KeyCollision> collisions() {
        return shards.stream().map(ShardResult::collision).filter(java.util.Objects::nonNull).toList();
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
