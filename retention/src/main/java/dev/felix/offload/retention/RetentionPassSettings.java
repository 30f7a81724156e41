package dev.felix.offload.retention;

import java.util.Objects;

/**
 * How a retention pass runs.
 *
 * @param keyPrefix            the key prefix offload writes under (the same as its
 *                             {@code OffloadSettings.keyPrefix()}), without slashes at its ends, or empty
 * @param deleteBatchSize      keys per delete request for expired entries and deleted streams, 1 to 1000
 * @param removeDeletedStreams whether the pass finishes the directories under {@code .deleted/}
 * @param sweepOrphans         whether the pass ends with an orphan sweep
 * @param orphanSweep          how that sweep runs
 */
public record RetentionPassSettings(String keyPrefix, int deleteBatchSize, boolean removeDeletedStreams,
                                    boolean sweepOrphans, OrphanSweepSettings orphanSweep) {

    public RetentionPassSettings {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(orphanSweep, "orphanSweep");
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
    }

    /** No key prefix, 1000 keys a request, deleted streams removed, orphans swept with an hour's grace. */
    public static RetentionPassSettings defaults() {
        return new RetentionPassSettings("", 1000, true, true, OrphanSweepSettings.defaults());
    }

    public RetentionPassSettings withKeyPrefix(String value) {
        return new RetentionPassSettings(value, deleteBatchSize, removeDeletedStreams, sweepOrphans, orphanSweep);
    }

    public RetentionPassSettings withDeleteBatchSize(int value) {
        return new RetentionPassSettings(keyPrefix, value, removeDeletedStreams, sweepOrphans,
                orphanSweep.withDeleteBatchSize(value));
    }

    public RetentionPassSettings withRemoveDeletedStreams(boolean value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, value, sweepOrphans, orphanSweep);
    }

    public RetentionPassSettings withSweepOrphans(boolean value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, removeDeletedStreams, value, orphanSweep);
    }

    public RetentionPassSettings withOrphanSweep(OrphanSweepSettings value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, removeDeletedStreams, sweepOrphans, value);
    }
}
