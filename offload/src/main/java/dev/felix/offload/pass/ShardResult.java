package dev.felix.offload.pass;

import java.util.List;

/**
 * What one pass did for one shard.
 *
 * @param shard     the shard directory name
 * @param complete  true when every eligible segment was offloaded
 * @param uploaded  segments copied, verified and recorded
 * @param unlinked  local segment ids removed after their copies were proven
 * @param pending   sealed segments left for a later pass (not eligible yet, or failed)
 * @param problem   why the shard stopped early, or null
 * @param collision the upload that found its key holding other bytes, when that is what stopped the
 *                  shard (then {@code problem} describes it too); null otherwise
 * @param stop      why the shard stopped early, as a type; null when it did not
 * @param settling  when the segments local retention would let go, kept only because their entries
 *                  have not stood the settle time yet, may all go; null when none waits so
 */
public record ShardResult(String shard, boolean complete, List<SegmentUpload> uploaded, List<Long> unlinked,
                          int pending, String problem, KeyCollision collision, ShardStop stop,
                          java.time.Instant settling) {

    public ShardResult {
        if (stop == null && problem != null) {
            stop = collision != null ? new ShardStop.Collision(collision) : new ShardStop.Failed();
        }
        uploaded = List.copyOf(uploaded);
        unlinked = List.copyOf(unlinked);
        if (collision != null && complete) {
            throw new IllegalArgumentException("a shard with a key collision is not complete");
        }
    }

    /** A result without segments settling. */
    public ShardResult(String shard, boolean complete, List<SegmentUpload> uploaded, List<Long> unlinked, int pending,
                       String problem, KeyCollision collision, ShardStop stop) {
        this(shard, complete, uploaded, unlinked, pending, problem, collision, stop, null);
    }

    /** This result with {@code until} as when its settling segments may go. */
    public ShardResult settlingUntil(java.time.Instant until) {
        return new ShardResult(shard, complete, uploaded, unlinked, pending, problem, collision, stop, until);
    }

    /**
     * This result with {@code more} segments unlinked after it settled, and {@code stillSettling} as
     * when those still settling may go (null: none).
     */
    public ShardResult withSettledUnlinks(List<Long> more, java.time.Instant stillSettling) {
        List<Long> all = new java.util.ArrayList<>(unlinked);
        all.addAll(more);
        return new ShardResult(shard, complete, uploaded, all, pending, problem, collision, stop, stillSettling);
    }

    /** This result, not complete, with {@code why} as its problem (a step after the pass's own failed). */
    public ShardResult failedAfter(String why) {
        return new ShardResult(shard, false, uploaded, unlinked, pending, problem == null ? why : problem + "; " + why,
                collision, null, null);
    }

    /** A result whose stop, if any, follows from its collision or else its problem. */
    public ShardResult(String shard, boolean complete, List<SegmentUpload> uploaded, List<Long> unlinked, int pending,
                       String problem, KeyCollision collision) {
        this(shard, complete, uploaded, unlinked, pending, problem, collision, null);
    }

    /** A result without a key collision. */
    public ShardResult(String shard, boolean complete, List<SegmentUpload> uploaded, List<Long> unlinked, int pending,
                       String problem) {
        this(shard, complete, uploaded, unlinked, pending, problem, null, null);
    }

    public long bytesUploaded() {
        return uploaded.stream().mapToLong(SegmentUpload::bytes).sum();
    }
}
