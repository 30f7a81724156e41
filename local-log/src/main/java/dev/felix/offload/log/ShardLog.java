package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.recovery.Problem;
import dev.felix.offload.log.recovery.ShardInspection;
import dev.felix.offload.log.recovery.ShardInspection.SegmentPlan;
import dev.felix.offload.log.recovery.ShardInspector;
import dev.felix.offload.log.side.EpochHistory;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ReplicaState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A shard directory as a log: segments in id order, each beginning where the one before ends, the
 * newest one active (appended to), the rest sealed (never written again).
 *
 * <h2>Open</h2>
 * Recovery runs through {@link ShardInspector}, the one place that judges corruption: the newest
 * segment is scanned in full with checksums verified, sealed segments record header by record header.
 * What the rules allow is repaired (a torn tail cut off, a blank first segment deleted; checksum
 * damage at the tail only with the opt-in); anything else fails the open with the
 * {@link CorruptionException} naming the shard, segment and byte. Indexes that fail to load are
 * rebuilt. A segment's header base offset is authoritative; its file name is only an id.
 *
 * <h2>Side files</h2>
 * The {@code replica} file is authoritative: one that does not decode fails the open; a raised
 * generation is durable (ballot first, then replica) before {@link #acceptGeneration} returns, and
 * the commit offset is written behind its advances by a {@link CommitWriter}. A truncation or reset
 * that would discard a record below the commit offset is refused with {@link BelowCommitException}.
 * The {@code producers} snapshot and {@code epochs} are derived: saved at rollover (producers) or at a
 * generation start (epochs) without a flush, ignored when damaged, and rebuilt from the log's marks.
 * An idempotent producer's batch the log already holds is not written again.
 *
 * <h2>Parts</h2>
 * This class is the façade: it holds the write lock, the flush policy and the log's life, and hands
 * each job to its part. {@link LogAppends}: appends with producer dedup, and the producer state and
 * generation history they derive. {@link LogStructure}: the segments and every change to which there
 * are (roll, cut, reset, deletion), each publishing a new {@link LogView}; the reads over one are
 * {@link LogReads}. {@link LogReplica}: the accepted generation, its leader and the commit offset.
 * What opening does to each judged segment is {@link SegmentRecovery}.
 *
 * <h2>Concurrency</h2>
 * One writer appends; any number of readers may read at the same time and see only whole records
 * (the active segment's size is published after its bytes are written). Truncation, reset and
 * segment deletion exclude readers while they run.
 */
public final class ShardLog implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(ShardLog.class);

    private final Path dir;
    private final String shard;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ScheduledExecutorService flusher;
    private final LogStructure structure;
    private final LogAppends appends;
    private final LogReplica replica;
    private boolean closed;

    private ShardLog(Path dir, ShardLogConfig config, LogStructure structure, LogAppends appends, LogReplica replica) {
        this.dir = dir;
        this.shard = DataRoot.Shard.nameOf(dir);
        this.structure = structure;
        this.appends = appends;
        this.replica = replica;
        if (config.fsyncPolicy() instanceof FsyncPolicy.Periodic periodic) {
            this.flusher = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "shard-log-flush-" + shard);
                t.setDaemon(true);
                return t;
            });
            long nanos = periodic.interval().toNanos();
            flusher.scheduleWithFixedDelay(this::flushIfDirty, nanos, nanos, TimeUnit.NANOSECONDS);
        } else {
            this.flusher = null;
        }
    }

    /**
     * Opens (creating when absent) the shard directory {@code dir}, recovering it first. An empty
     * directory becomes a log whose first offset is 0; use {@link #reset} to place it elsewhere.
     *
     * @throws CorruptionException when the directory holds damage recovery must not repair
     */
    public static ShardLog open(Path dir, ShardLogConfig config) throws IOException, CorruptionException {
        Files.createDirectories(dir);
        ShardInspection inspection = ShardInspector.inspect(dir, config.recovery(), ShardInspector.Depth.NEWEST_SEGMENT);
        if (inspection.verdict() == ShardInspection.Verdict.CORRUPT) {
            for (Problem p : inspection.problems()) {
                if (!p.repairable() && !p.derived()) {
                    throw p.cause();
                }
            }
            throw new IllegalStateException("corrupt verdict without a fatal problem in " + dir);
        }
        String shard = DataRoot.Shard.nameOf(dir);
        List<SegmentPlan> plans = inspection.segments();
        List<LogView.Sealed> sealed = new ArrayList<>();
        for (int i = 0; i < plans.size() - 1; i++) {
            SegmentPlan plan = plans.get(i);
            SegmentFile file = plan.file();
            SegmentHeader header = plan.scan().header();
            SegmentIndex index = SegmentRecovery.loadOrRebuildIndex(file, shard, header, plan.scan().validEnd(), config);
            sealed.add(new LogView.Sealed(file, header, plan.scan().nextOffset(), plan.scan().validEnd(), index));
        }
        // Before anything is written: a replica or ballot that does not decode fails the open.
        LogReplica replica = LogReplica.open(dir, config.fsyncPolicy() instanceof FsyncPolicy.OnCommit);
        SegmentWriter active;
        try {
            if (plans.isEmpty()) {
                active = SegmentWriter.create(SegmentFile.in(dir, 0), SegmentHeader.v3(0, SegmentRecovery.nowMicros()),
                        config.indexSpacingBytes());
            } else {
                active = SegmentRecovery.reopenNewest(plans.get(plans.size() - 1), shard, config);
            }
        } catch (IOException | RuntimeException e) {
            replica.close(); // stops its commit writer; nothing is behind yet
            throw e;
        }
        EpochHistory epochs = EpochsFile.loadOrEmpty(dir).truncatedAt(active.nextOffset());
        LogStructure structure = new LogStructure(dir, config, sealed, active);
        LogAppends appends = new LogAppends(dir, config, structure, epochs);
        ShardLog log = new ShardLog(dir, config, structure, appends, replica);
        try {
            appends.loadProducers();
        } catch (IOException | CorruptionException | RuntimeException e) {
            log.closeQuietly();
            throw e;
        }
        return log;
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: closing after a failed open: {}", shard, e.toString());
        }
    }

    /**
     * A segment's sparse index built from its record headers (the first {@code size} bytes), with the
     * writer's spacing rule: an entry for the first record, then one each {@code spacingBytes}.
     */
    public static SegmentIndex rebuildIndexOf(SegmentFile file, String shard, long size, int spacingBytes)
            throws IOException, CorruptionException {
        return SegmentRecovery.rebuildIndexOf(file, shard, size, spacingBytes);
    }

    private interface Locked<T> {
        T run() throws IOException;
    }

    /** Runs {@code job} as the writer, on an open log. */
    private <T> T asWriter(Locked<T> job) throws IOException {
        writeLock.lock();
        try {
            ensureOpen();
            return job.run();
        } finally {
            writeLock.unlock();
        }
    }

    /** Runs {@code job} as the writer with readers excluded: it removes or shortens files. */
    private <T> T asWriterAlone(Locked<T> job) throws IOException {
        return asWriter(() -> {
            structure.excludeReaders();
            try {
                return job.run();
            } finally {
                structure.admitReaders();
            }
        });
    }

    // ---------------------------------------------------------------- appends

    /** Appends a plain record; answers its offset. */
    public long append(long timestampMicros, byte[] payload) throws IOException {
        return asWriter(() -> appends.append(timestampMicros, payload));
    }

    /**
     * Appends an idempotent producer's batch: a batch-open record tagged with the producer, the
     * sequence and the batch's record count, then batch-continue records. The batch is kept in one
     * segment. A batch the log already holds is not written again: its first offset is the answer.
     * Answers the first record's offset.
     */
    public long appendBatch(long producerId, long sequence, long timestampMicros, List<byte[]> payloads)
            throws IOException {
        return asWriter(() -> appends.appendBatch(producerId, sequence, timestampMicros, payloads));
    }

    /**
     * Appends a leader's generation-start record. Refused unless generation-start is finalized; the
     * log first rolls onto a v4 segment unless the active one already is v4.
     */
    public long appendGenerationStart(long generation, long timestampMicros) throws IOException {
        appends.requireGenerationStart();
        return asWriter(() -> appends.appendGenerationStart(generation, timestampMicros));
    }

    /** Forces appended records to the device now, whatever the policy. */
    public void flush() throws IOException {
        asWriter(() -> {
            structure.view().active().sync();
            appends.synced();
            return null;
        });
    }

    private void flushIfDirty() {
        writeLock.lock();
        try {
            if (!closed && appends.unsynced()) {
                structure.view().active().sync();
                appends.synced();
            }
        } catch (IOException e) {
            LOG.error("{}: periodic flush failed; retrying at the next interval", shard, e);
        } finally {
            writeLock.unlock();
        }
    }

    // ---------------------------------------------------------------- reads

    /**
     * Reads records from {@code offset}: at most {@code maxRecords}, and no more than {@code maxBytes}
     * of encoded records unless the first record alone is larger (it is returned anyway, so a reader
     * always makes progress). Reads cross segment boundaries; every checksum is verified. Below the
     * first offset the answer is {@link ReadResult.Trimmed}.
     *
     * @throws CorruptionException when a record read is damaged
     */
    public ReadResult read(long offset, int maxRecords, long maxBytes) throws IOException, CorruptionException {
        if (maxRecords <= 0) {
            throw new IllegalArgumentException("maxRecords must be positive, got " + maxRecords);
        }
        ensureOpen();
        return structure.read(offset, maxRecords, maxBytes);
    }

    // ---------------------------------------------------------------- structure

    /** The offset of the oldest record held (the next offset when the log is empty). */
    public long firstOffset() {
        return structure.view().firstOffset();
    }

    /** One past the newest record. */
    public long nextOffset() {
        return structure.view().active().nextOffset();
    }

    /** The segments, oldest first; the last is active. */
    public List<SegmentInfo> segments() {
        LogView v = structure.view();
        List<SegmentInfo> out = new ArrayList<>(v.sealed().size() + 1);
        for (LogView.Sealed s : v.sealed()) {
            out.add(new SegmentInfo(s.file(), s.header().version(), s.header().baseOffset(), s.nextOffset(), s.size(),
                    false));
        }
        SegmentWriter a = v.active();
        out.add(new SegmentInfo(a.file(), a.header().version(), a.header().baseOffset(), a.nextOffset(), a.size(), true));
        return out;
    }

    public Path directory() {
        return dir;
    }

    /**
     * Deletes, oldest first, every sealed segment whose records all lie below {@code offset} (log,
     * then index). The active segment is never deleted. Answers the segments removed.
     */
    public List<SegmentFile> deleteSegmentsBelow(long offset) throws IOException {
        return asWriterAlone(() -> {
            List<SegmentFile> removed = structure.deleteBelow(offset);
            if (!removed.isEmpty()) {
                appends.forgetBelow(structure.view().firstOffset());
            }
            return removed;
        });
    }

    /**
     * Removes every record at or after {@code offset}: later segments are deleted (newest first, so a
     * crash leaves a contiguous prefix) and the segment holding the offset is cut there and becomes
     * the active segment. At or past the end it does nothing; at or below the first offset it is
     * {@link #reset(long)} to {@code offset}.
     *
     * @throws BelowCommitException when {@code offset} lies below the commit offset
     */
    public void truncate(long offset) throws IOException {
        asWriterAlone(() -> {
            LogView v = structure.view();
            if (Long.compareUnsigned(offset, v.active().nextOffset()) >= 0) {
                return null;
            }
            replica.refuseBelowCommit("truncation", offset);
            if (Long.compareUnsigned(offset, v.firstOffset()) <= 0) {
                resetAlone(offset);
                return null;
            }
            appends.forgetFrom(offset);
            structure.cutAt(offset);
            appends.rebuildProducers();
            return null;
        });
    }

    /**
     * Removes every segment (newest first) and starts an empty log whose first offset is
     * {@code baseOffset}, in a segment with a new id (ids are never reused).
     *
     * @throws BelowCommitException when the log holds a record below the commit offset
     */
    public void reset(long baseOffset) throws IOException {
        asWriterAlone(() -> {
            resetAlone(baseOffset);
            return null;
        });
    }

    private void resetAlone(long baseOffset) throws IOException {
        LogView v = structure.view();
        if (Long.compareUnsigned(v.firstOffset(), v.active().nextOffset()) < 0) {
            replica.refuseBelowCommit("reset", v.firstOffset());
        }
        appends.forgetAll();
        structure.resetTo(baseOffset);
        appends.synced();
    }

    // ---------------------------------------------------------------- replication

    /** The accepted generation and the commit offset as this log knows them (the file may lag). */
    public ReplicaState replicaState() {
        return replica.state();
    }

    /** The leader accepted at the current generation, when the ballot names one. */
    public Optional<String> acceptedLeader() {
        return replica.leader();
    }

    /** The generation history. */
    public EpochHistory epochs() {
        writeLock.lock();
        try {
            return appends.epochs();
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Accepts {@code leader} at {@code generation}: the ballot, then the replica file, both durable
     * before this returns, so a leader this broker has seen replaced is refused after a restart too.
     * A lower generation is refused; at the current one only the leader already accepted is.
     */
    public void acceptGeneration(long generation, String leader) throws IOException {
        asWriter(() -> {
            replica.accept(generation, leader);
            return null;
        });
    }

    /**
     * Moves the commit offset up (a lower one is ignored); the file is written behind, as the fsync
     * policy says.
     */
    public void advanceCommit(long commit) {
        boolean raised;
        writeLock.lock();
        try {
            ensureOpen();
            raised = replica.raiseCommit(commit);
        } finally {
            writeLock.unlock();
        }
        if (raised) {
            replica.commitAdvanced();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("shard log " + shard + " is closed");
        }
    }

    /** Flushes the active segment and its index, and closes. */
    @Override
    public void close() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (flusher != null) {
                flusher.shutdownNow();
            }
            SegmentWriter active = structure.view().active();
            try {
                active.sync();
                active.writeIndex();
            } finally {
                active.close();
                replica.close(); // the commit offset is always written at shutdown
            }
        } finally {
            writeLock.unlock();
        }
    }
}
