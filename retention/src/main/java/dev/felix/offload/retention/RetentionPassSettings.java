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
 * @param unlinkSettle         how long an entry stands before local retention may unlink its segment
 *                             ({@link dev.felix.offload.copy.LocalRelease})
 */
public record RetentionPassSettings(String keyPrefix, int deleteBatchSize, boolean removeDeletedStreams,
                                    boolean sweepOrphans, OrphanSweepSettings orphanSweep,
                                    java.time.Duration unlinkSettle) {

    public RetentionPassSettings {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(orphanSweep, "orphanSweep");
        Objects.requireNonNull(unlinkSettle, "unlinkSettle");
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
    }

    /** As the canonical constructor, with the default settle time. */
    public RetentionPassSettings(String keyPrefix, int deleteBatchSize, boolean removeDeletedStreams,
                                 boolean sweepOrphans, OrphanSweepSettings orphanSweep) {
        this(keyPrefix, deleteBatchSize, removeDeletedStreams, sweepOrphans, orphanSweep,
                dev.felix.offload.copy.LocalRelease.DEFAULT_SETTLE);
    }

    /**
     * No key prefix, 1000 keys a request, deleted streams removed, orphans swept with an hour's grace,
     * entries settling for 5 s.
     */
    public static RetentionPassSettings defaults() {
        return new RetentionPassSettings("", 1000, true, true, OrphanSweepSettings.defaults());
    }

    public RetentionPassSettings withUnlinkSettle(java.time.Duration value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, removeDeletedStreams, sweepOrphans, orphanSweep,
                value);
    }

    public RetentionPassSettings withKeyPrefix(String value) {
        return new RetentionPassSettings(value, deleteBatchSize, removeDeletedStreams, sweepOrphans, orphanSweep, unlinkSettle);
    }

    public RetentionPassSettings withDeleteBatchSize(int value) {
        return new RetentionPassSettings(keyPrefix, value, removeDeletedStreams, sweepOrphans,
                orphanSweep.withDeleteBatchSize(value), unlinkSettle);
    }

    public RetentionPassSettings withRemoveDeletedStreams(boolean value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, value, sweepOrphans, orphanSweep, unlinkSettle);
    }

    public RetentionPassSettings withSweepOrphans(boolean value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, removeDeletedStreams, value, orphanSweep, unlinkSettle);
    }

    public RetentionPassSettings withOrphanSweep(OrphanSweepSettings value) {
        return new RetentionPassSettings(keyPrefix, deleteBatchSize, removeDeletedStreams, sweepOrphans, value, unlinkSettle);
    }
}
