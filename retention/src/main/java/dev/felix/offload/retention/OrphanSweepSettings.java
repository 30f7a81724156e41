package dev.felix.offload.retention;

import java.time.Duration;
import java.util.Objects;

/**
 * How the orphan sweep runs.
 *
 * @param grace           how long an object must have been seen unnamed before it is deleted
 * @param dryRun          report what would be deleted, delete nothing, write nothing
 * @param deleteBatchSize keys per delete request, 1 to 1000
 */
public record OrphanSweepSettings(Duration grace, boolean dryRun, int deleteBatchSize) {

    /** The grace period by default: one hour. */
    public static final Duration DEFAULT_GRACE = Duration.ofHours(1);

    public OrphanSweepSettings {
        Objects.requireNonNull(grace, "grace");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("orphan grace period must not be negative, got " + grace);
        }
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
    }

    /** One hour of grace, deleting, 1000 keys a request. */
    public static OrphanSweepSettings defaults() {
        return new OrphanSweepSettings(DEFAULT_GRACE, false, 1000);
    }

    public OrphanSweepSettings withGrace(Duration value) {
        return new OrphanSweepSettings(value, dryRun, deleteBatchSize);
    }

    public OrphanSweepSettings withDryRun(boolean value) {
        return new OrphanSweepSettings(grace, value, deleteBatchSize);
    }

    public OrphanSweepSettings withDeleteBatchSize(int value) {
        return new OrphanSweepSettings(grace, dryRun, value);
    }
}
