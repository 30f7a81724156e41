package dev.felix.offload.log;

import dev.felix.offload.log.recovery.RecoveryOptions;

import java.util.Objects;

/**
 * How a {@link ShardLog} writes and recovers.
 *
 * @param segmentSizeBytes         roll to a new segment when the next append would grow the active one
 *                                 past this (a record larger than it gets a segment of its own)
 * @param indexSpacingBytes        bytes of segment data between sparse index entries
 * @param fsyncPolicy              when appends are forced to the device
 * @param generationStartFinalized whether generation-start records may be written (they need v4
 *                                 segments, which builds before v4 cannot open)
 * @param recovery                 what recovery may repair at open
 */
public record ShardLogConfig(long segmentSizeBytes, int indexSpacingBytes, FsyncPolicy fsyncPolicy,
                             boolean generationStartFinalized, RecoveryOptions recovery) {

    /** 64 MiB segments. */
    public static final long DEFAULT_SEGMENT_SIZE_BYTES = 64L * 1024 * 1024;

    public ShardLogConfig {
        if (segmentSizeBytes < 64) {
            throw new IllegalArgumentException("segmentSizeBytes must be at least 64, got " + segmentSizeBytes);
        }
        if (indexSpacingBytes <= 0) {
            throw new IllegalArgumentException("indexSpacingBytes must be positive, got " + indexSpacingBytes);
        }
        Objects.requireNonNull(fsyncPolicy, "fsyncPolicy");
        Objects.requireNonNull(recovery, "recovery");
    }

    /** 64 MiB segments, 4 KiB index spacing, fsync on commit, no generation-start records, default recovery. */
    public static ShardLogConfig defaults() {
        return new ShardLogConfig(DEFAULT_SEGMENT_SIZE_BYTES, SegmentWriter.DEFAULT_INDEX_SPACING_BYTES,
                FsyncPolicy.onCommit(), false, RecoveryOptions.DEFAULT);
    }

    public ShardLogConfig withSegmentSizeBytes(long bytes) {
        return new ShardLogConfig(bytes, indexSpacingBytes, fsyncPolicy, generationStartFinalized, recovery);
    }

    public ShardLogConfig withIndexSpacingBytes(int bytes) {
        return new ShardLogConfig(segmentSizeBytes, bytes, fsyncPolicy, generationStartFinalized, recovery);
    }

    public ShardLogConfig withFsyncPolicy(FsyncPolicy policy) {
        return new ShardLogConfig(segmentSizeBytes, indexSpacingBytes, policy, generationStartFinalized, recovery);
    }

    public ShardLogConfig withGenerationStartFinalized(boolean finalized) {
        return new ShardLogConfig(segmentSizeBytes, indexSpacingBytes, fsyncPolicy, finalized, recovery);
    }

    public ShardLogConfig withRecovery(RecoveryOptions options) {
        return new ShardLogConfig(segmentSizeBytes, indexSpacingBytes, fsyncPolicy, generationStartFinalized, options);
    }
}
