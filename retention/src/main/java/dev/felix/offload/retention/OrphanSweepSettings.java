package dev.felix.offload.retention;

import java.time.Duration;
import java.util.Objects;

/**
 * How the orphan sweep runs.
 *
 * @param grace           how long an object must have been seen unnamed before it is deleted
 * @param dryRun          report what would be deleted, delete nothing, write nothing
 * @param deleteBatchSize keys per delete request, 1 to 1000
 * @param fullSweepEvery  how often the sweep lists the node's whole prefix; between, it checks only the
 *                        keys of the root's journal of pending writes ({@link dev.felix.offload.root.PendingKeys}).
 *                        Zero: every pass lists everything, as before the journal existed
 * @param fullSweep       this run lists the whole prefix whatever the cadence says (an operator's one-shot)
 */
public record OrphanSweepSettings(Duration grace, boolean dryRun, int deleteBatchSize, Duration fullSweepEvery,
                                  boolean fullSweep) {

    /** The grace period by default: one hour. */
    public static final Duration DEFAULT_GRACE = Duration.ofHours(1);
    /** A daemon's and the retention command's full listing of the node's prefix by default: once a day. */
    public static final Duration DEFAULT_FULL_SWEEP_EVERY = Duration.ofHours(24);

    public OrphanSweepSettings {
        Objects.requireNonNull(grace, "grace");
        Objects.requireNonNull(fullSweepEvery, "fullSweepEvery");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("orphan grace period must not be negative, got " + grace);
        }
        if (fullSweepEvery.isNegative()) {
            throw new IllegalArgumentException("full sweep interval must not be negative, got " + fullSweepEvery);
        }
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
    }

    /**
     * Listing the whole prefix at every pass: a library caller that chose no cadence keeps the sweep as
     * it was before the journal; the configuration file's {@code orphans.full-sweep-every} defaults to
     * {@link #DEFAULT_FULL_SWEEP_EVERY}.
     */
    public OrphanSweepSettings(Duration grace, boolean dryRun, int deleteBatchSize) {
        this(grace, dryRun, deleteBatchSize, Duration.ZERO, false);
    }

    /** One hour of grace, deleting, 1000 keys a request, a full listing at every pass. */
    public static OrphanSweepSettings defaults() {
        return new OrphanSweepSettings(DEFAULT_GRACE, false, 1000);
    }

    public OrphanSweepSettings withGrace(Duration value) {
        return new OrphanSweepSettings(value, dryRun, deleteBatchSize, fullSweepEvery, fullSweep);
    }

    public OrphanSweepSettings withDryRun(boolean value) {
        return new OrphanSweepSettings(grace, value, deleteBatchSize, fullSweepEvery, fullSweep);
    }

    public OrphanSweepSettings withDeleteBatchSize(int value) {
        return new OrphanSweepSettings(grace, dryRun, value, fullSweepEvery, fullSweep);
    }

    public OrphanSweepSettings withFullSweepEvery(Duration value) {
        return new OrphanSweepSettings(grace, dryRun, deleteBatchSize, value, fullSweep);
    }

    public OrphanSweepSettings withFullSweep(boolean value) {
        return new OrphanSweepSettings(grace, dryRun, deleteBatchSize, fullSweepEvery, value);
    }
}
