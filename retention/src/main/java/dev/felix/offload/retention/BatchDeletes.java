package dev.felix.offload.retention;

import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.store.ObjectDeleter;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.SegmentKeys;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Deletes permitted keys in batches, stopping at the first failed batch or when asked to stop. */
final class BatchDeletes {

    /**
     * @param deleted   keys in batches that were deleted
     * @param left      keys not deleted: the failed batch and every later one
     * @param shortfall why keys were left (a stop, or the store's failure), or null when none were
     */
    record Outcome(List<String> deleted, List<String> left, DeleteShortfall shortfall) {

        /** The store's failure, when a batch failed (a stop is none). */
        java.util.Optional<DeleteShortfall.StoreFailed> failure() {
            return shortfall instanceof DeleteShortfall.StoreFailed f ? java.util.Optional.of(f) : java.util.Optional.empty();
        }

        /** Why keys were left, for output; null when none were. */
        String problem() {
            return shortfall == null ? null : shortfall.label();
        }
    }

    /** Verdicts of {@link ObjectRelease} split: the permits to delete, and the keys kept with why. */
    record Split(List<ObjectRelease.Permit> deletable, Map<String, ObjectRelease.Verdict.Kept> kept) {

        /** The kept keys whose owner refused them, by refusal: what the reports of expired copies say. */
        Map<String, KeyOwnership.Refusal> refusals() {
            Map<String, KeyOwnership.Refusal> out = new LinkedHashMap<>();
            kept.forEach((k, v) -> {
                if (v.refusal() != null) {
                    out.put(k, v.refusal());
                }
            });
            return out;
        }

        boolean anyRefused(KeyOwnership.Refusal refusal) {
            return kept.values().stream().anyMatch(v -> v.refusal() == refusal);
        }
    }

    private BatchDeletes() {
    }

    /** A short account of kept keys for a log line: how many for each reason, and one example key. */
    static String describe(Map<String, ObjectRelease.Verdict.Kept> kept) {
        Map<String, Integer> counts = new java.util.TreeMap<>();
        kept.values().forEach(v -> counts.merge(v.refusal() != null ? v.refusal().toString() : v.reason().label(), 1,
                Integer::sum));
        return counts + (kept.isEmpty() ? "" : ", e.g. " + kept.keySet().iterator().next());
    }

    /** Splits verdicts into permits and kept keys. */
    static Split split(List<ObjectRelease.Verdict> verdicts) {
        List<ObjectRelease.Permit> deletable = new ArrayList<>(verdicts.size());
        Map<String, ObjectRelease.Verdict.Kept> kept = new LinkedHashMap<>();
        for (ObjectRelease.Verdict v : verdicts) {
            if (v instanceof ObjectRelease.Verdict.Deletable d) {
                deletable.add(d.permit());
            } else {
                kept.put(v.key(), (ObjectRelease.Verdict.Kept) v);
            }
        }
        return new Split(deletable, kept);
    }

    /**
     * The objects of an entry: its segment and, for a segment key of a segment large enough for one
     * ({@link SegmentKeys#hasIndexObject}), the index beside it. (An index a small segment got before
     * that rule is left to the full sweep, which deletes an index whose segment is gone.)
     */
    static List<String> objectsOf(ManifestEntry entry) {
        String key = entry.objectKey();
        return key.endsWith(SegmentKeys.SEGMENT_SUFFIX) && SegmentKeys.hasIndexObject(entry.sizeBytes())
                ? List.of(key, SegmentKeys.indexKeyFor(key)) : List.of(key);
    }

    /**
     * Deletes the permitted keys in batches of {@code batchSize}: the only way this module deletes an
     * object, so every delete passed the conservation rule ({@link ObjectRelease}).
     */
    static Outcome delete(ObjectDeleter store, List<ObjectRelease.Permit> permits, int batchSize, StopSignal stop,
                          RetentionHook hook, RetentionStep step, String shard) throws IOException {
        List<String> keys = permits.stream().map(ObjectRelease.Permit::key).toList();
        List<String> deleted = new ArrayList<>(keys.size());
        for (int from = 0; from < keys.size(); from += batchSize) {
            if (stop.stopRequested()) {
                return new Outcome(deleted, keys.subList(from, keys.size()), new DeleteShortfall.Stopped());
            }
            List<String> batch = keys.subList(from, Math.min(keys.size(), from + batchSize));
            try {
                store.deleteAll(batch);
            } catch (StoreException e) {
                return new Outcome(deleted, keys.subList(from, keys.size()),
                        new DeleteShortfall.StoreFailed(String.valueOf(e.getMessage())));
            }
            deleted.addAll(batch);
            hook.reached(step, shard, batch.size() + " objects");
        }
        return new Outcome(deleted, List.of(), null);
    }
}
