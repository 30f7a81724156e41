package dev.felix.offload.retention;

import dev.felix.offload.root.KeyOwnership;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What remote retention did to one shard.
 *
 * @param expiredSegments ids of the segments whose entries left the manifest
 * @param expiredBytes    the bytes those entries recorded
 * @param objectsDeleted  objects deleted (segments and indexes; an index that never existed counts)
 * @param objectsLeft     keys of expired objects not deleted; orphans now, which the orphan sweep removes
 * @param deleteProblem   why objects were left (a stop, or the store's error); null when none were
 * @param totalBytesAfter bytes the shard holds after, local and remote, each segment counted once
 * @param blockedBy       why an entry past a limit stayed (its segment is still on local disk, say), empty when none did
 * @param objectsKept     keys of expired entries that were not the shard's to delete (outside its
 *                        prefix, or named by another live shard), with why; they stay in the store
 */
public record RemoteRetentionResult(List<Long> expiredSegments, long expiredBytes, int objectsDeleted,
                                    List<String> objectsLeft, DeleteShortfall deleteProblem, long totalBytesAfter,
                                    Optional<RetentionBlock> blockedBy, Map<String, KeyOwnership.Refusal> objectsKept) {

    public RemoteRetentionResult {
        expiredSegments = List.copyOf(expiredSegments);
        objectsLeft = List.copyOf(objectsLeft);
        java.util.Objects.requireNonNull(blockedBy, "blockedBy");
        objectsKept = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(objectsKept));
    }

    /** A result in which every expired object was the shard's own. */
    public RemoteRetentionResult(List<Long> expiredSegments, long expiredBytes, int objectsDeleted,
                                 List<String> objectsLeft, DeleteShortfall deleteProblem, long totalBytesAfter,
                                 Optional<RetentionBlock> blockedBy) {
        this(expiredSegments, expiredBytes, objectsDeleted, objectsLeft, deleteProblem, totalBytesAfter, blockedBy, Map.of());
    }

    /** Nothing done to a shard holding {@code totalBytes}. */
    public static RemoteRetentionResult nothing(long totalBytes) {
        return new RemoteRetentionResult(List.of(), 0, 0, List.of(), null, totalBytes, Optional.empty());
    }

    /** True when objects were left because the store failed (not because of a stop). */
    public boolean deleteFailed() {
        return !objectsLeft.isEmpty() && deleteProblem instanceof DeleteShortfall.StoreFailed;
    }
}
