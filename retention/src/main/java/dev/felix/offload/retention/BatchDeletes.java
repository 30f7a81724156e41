package dev.felix.offload.retention;

import dev.felix.offload.pass.StopSignal;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ObjectDeleter;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import dev.felix.offload.root.SegmentKeys;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Deletes keys in batches, stopping at the first failed batch or when asked to stop. */
final class BatchDeletes {

    /**
     * @param deleted keys in batches that were deleted
     * @param left    keys not deleted: the failed batch and every later one
     * @param problem the store's error, {@value RemoteRetentionResult#STOPPED} when a stop was requested, or null
     */
    record Outcome(List<String> deleted, List<String> left, String problem) {
    }

    /**
     * Keys split by {@link KeyOwnership}: those the shard may delete, and those it must keep, with why.
     */
    record Split(List<String> deletable, Map<String, KeyOwnership.Refusal> kept) {
    }

    private BatchDeletes() {
    }

    /** A short account of kept keys for a log line: how many for each reason, and one example key. */
    static String describe(Map<String, KeyOwnership.Refusal> kept) {
        Map<KeyOwnership.Refusal, Integer> counts = new java.util.EnumMap<>(KeyOwnership.Refusal.class);
        kept.values().forEach(r -> counts.merge(r, 1, Integer::sum));
        return counts + (kept.isEmpty() ? "" : ", e.g. " + kept.keySet().iterator().next());
    }

    /**
     * Splits a shard's keys into those it may delete and those it must keep.
     *
     * @param shardIsLive false for a deleted stream's directory: then any live manifest naming a key keeps it
     */
    static Split split(List<String> keys, String shard, boolean shardIsLive, KeyOwnership ownership, LiveKeys live) {
        List<String> deletable = new ArrayList<>(keys.size());
        Map<String, KeyOwnership.Refusal> kept = new LinkedHashMap<>();
        for (String key : keys) {
            Optional<KeyOwnership.Refusal> refusal = shardIsLive ? ownership.refusal(shard, key, live)
                    : ownership.refusalForDeletedShard(shard, key, live);
            if (refusal.isPresent()) {
                kept.put(key, refusal.get());
            } else {
                deletable.add(key);
            }
        }
        return new Split(deletable, kept);
    }

    /** The objects of an entry: its segment and, for a segment key, the index beside it. */
    static List<String> objectsOf(ManifestEntry entry) {
        String key = entry.objectKey();
        return key.endsWith(SegmentKeys.SEGMENT_SUFFIX) ? List.of(key, SegmentKeys.indexKeyFor(key)) : List.of(key);
    }

    static Outcome delete(ObjectDeleter store, List<String> keys, int batchSize, StopSignal stop, RetentionHook hook,
                          RetentionStep step, String shard) throws IOException {
        List<String> deleted = new ArrayList<>(keys.size());
        for (int from = 0; from < keys.size(); from += batchSize) {
            if (stop.stopRequested()) {
                return new Outcome(deleted, keys.subList(from, keys.size()), RemoteRetentionResult.STOPPED);
            }
            List<String> batch = keys.subList(from, Math.min(keys.size(), from + batchSize));
            try {
                store.deleteAll(batch);
            } catch (StoreException e) {
                return new Outcome(deleted, keys.subList(from, keys.size()), e.getMessage());
            }
            deleted.addAll(batch);
            hook.reached(step, shard, batch.size() + " objects");
        }
        return new Outcome(deleted, List.of(), null);
    }
}
