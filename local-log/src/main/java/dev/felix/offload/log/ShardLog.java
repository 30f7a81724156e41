package dev.felix.offload.log;

import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.log.recovery.Problem;
import dev.felix.offload.log.side.Ballot;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.BallotOpening;
import dev.felix.offload.log.side.DerivedLoad;
import dev.felix.offload.log.side.EpochHistory;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ProducerSnapshot;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import dev.felix.offload.log.recovery.ShardInspection;
import dev.felix.offload.log.recovery.ShardInspection.SegmentPlan;
import dev.felix.offload.log.recovery.ShardInspector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

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
 * This class holds the writer's state and its locks: appends with producer dedup, rolls, truncation,
 * reset and the replica's generation and commit. What readers see is a {@link LogView}, published
 * whole; the reads over it are {@link LogReads}; what opening does to each judged segment is
 * {@link SegmentRecovery}.
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
    private final ShardLogConfig config;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantReadWriteLock structure = new ReentrantReadWriteLock();
    private final ScheduledExecutorService flusher;
    private volatile LogView view;
    private long nextSegmentId;
    private final ProducerState producers;
    private EpochHistory epochs;
    private volatile ReplicaState replica;
    private volatile Optional<String> leader;
    private final CommitWriter commitWriter;
    private boolean dirty;
    private boolean closed;

    private ShardLog(Path dir, ShardLogConfig config, List<LogView.Sealed> sealed, SegmentWriter active, ReplicaState replica,
                     Optional<String> leader, EpochHistory epochs) {
        this.dir = dir;
        this.shard = dir.getFileName().toString();
        this.config = config;
        this.view = new LogView(List.copyOf(sealed), active);
        this.nextSegmentId = active.file().id() + 1;
        this.replica = replica;
        this.leader = leader;
        this.epochs = epochs;
        this.producers = new ProducerState();
        this.commitWriter = new CommitWriter(dir, replica, () -> this.replica,
                config.fsyncPolicy() instanceof FsyncPolicy.OnCommit);
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
        String shard = dir.getFileName().toString();
        List<SegmentPlan> plans = inspection.segments();
        List<LogView.Sealed> sealed = new ArrayList<>();
        for (int i = 0; i < plans.size() - 1; i++) {
            SegmentPlan plan = plans.get(i);
            SegmentFile file = plan.file();
            SegmentHeader header = plan.scan().header();
            SegmentIndex index = SegmentRecovery.loadOrRebuildIndex(file, shard, header, plan.scan().validEnd(), config);
            sealed.add(new LogView.Sealed(file, header, plan.scan().nextOffset(), plan.scan().validEnd(), index));
        }
        // Authoritative: a replica or ballot that does not decode fails the open, before anything is written.
        ReplicaState replica = ReplicaFile.load(dir);
        Optional<Ballot> ballot = BallotFile.FILE.load(dir);
        BallotOpening opening = BallotOpening.decide(ballot, replica.generation());
        if (opening.raisesReplica()) {
            // A raise that crashed between the ballot and the replica: finish it.
            replica = replica.withGeneration(opening.generation());
            ReplicaFile.FILE.save(dir, replica);
        }
        SegmentWriter active;
        if (plans.isEmpty()) {
            active = SegmentWriter.create(SegmentFile.in(dir, 0), SegmentHeader.v3(0, SegmentRecovery.nowMicros()),
                    config.indexSpacingBytes());
        } else {
            SegmentPlan newest = plans.get(plans.size() - 1);
            active = SegmentRecovery.reopenNewest(newest, shard, config);
        }
        EpochHistory epochs = EpochsFile.loadOrEmpty(dir).truncatedAt(active.nextOffset());
        ShardLog log = new ShardLog(dir, config, sealed, active, replica, opening.leader(), epochs);
        try {
            log.loadProducers();
        } catch (IOException | CorruptionException | RuntimeException e) {
            log.closeQuietly();
            throw e;
        }
        return log;
    }

    /** Producer state: the snapshot when it describes this log, then the marks after it; else the whole log. */
    private void loadProducers() throws IOException, CorruptionException {
        long first = firstOffset();
        long next = nextOffset();
        DerivedLoad<ProducerSnapshot> snapshot = ProducersFile.load(dir, first, next);
        long replayFrom = first;
        if (snapshot.value().isPresent()) {
            ProducerState loaded = ProducerState.of(snapshot.value().get());
            producers.replaceWith(loaded);
            replayFrom = snapshot.value().get().asOf();
        } else if (snapshot.problem().isPresent()) {
            LOG.info("{}: producer snapshot ignored ({}); rebuilding from the log", shard,
                    snapshot.problem().get().getMessage());
        }
        replayMarks(replayFrom);
    }

    /** Feeds the record headers from {@code from} to the end of the log to the producer state. */
    private void replayMarks(long from) throws IOException, CorruptionException {
        LogView v = view;
        int segments = v.sealed().size() + 1;
        for (int i = v.locate(from); i < segments; i++) {
            boolean isActive = i == v.sealed().size();
            SegmentFile file = isActive ? v.active().file() : v.sealed().get(i).file();
            long end = isActive ? v.active().size() : v.sealed().get(i).size();
            try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), false, end)) {
                RecordHeader h;
                while ((h = scanner.nextHeader()) != null) {
                    if (Long.compareUnsigned(h.offset(), from) >= 0) {
                        producers.observe(h.kind(), h.offset(), h.tag());
                    }
                }
            }
        }
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

    // ---------------------------------------------------------------- appends

    /** Appends a plain record; answers its offset. */
    public long append(long timestampMicros, byte[] payload) throws IOException {
        return appendRecords(SegmentHeader.VERSION_2, first -> List.of(Record.plain(first, timestampMicros, payload)));
    }

    /**
     * Appends an idempotent producer's batch: a batch-open record tagged with the producer, the
     * sequence and the batch's record count, then batch-continue records. The batch is kept in one
     * segment. Answers the first record's offset.
     */
    public long appendBatch(long producerId, long sequence, long timestampMicros, List<byte[]> payloads)
            throws IOException {
        if (payloads.isEmpty()) {
            throw new IllegalArgumentException("a batch holds at least one record");
        }
        BatchTag tag = new BatchTag(producerId, sequence, payloads.size());
        writeLock.lock();
        try {
            ensureOpen();
            OptionalLong held = producers.heldBatch(producerId, sequence, this::sequenceAt);
            if (held.isPresent()) {
                long heldLength = producers.batchLength(producerId, held.getAsLong());
                if (heldLength != payloads.size()) {
                    throw new IllegalArgumentException("producer " + Long.toUnsignedString(producerId) + " sequence "
                            + Long.toUnsignedString(sequence) + " is held as a batch of " + heldLength
                            + " records; this one has " + payloads.size());
                }
                return held.getAsLong(); // already held: the original offsets, nothing written
            }
        } finally {
            writeLock.unlock();
        }
        return appendRecords(SegmentHeader.VERSION_3, first -> {
            List<Record> records = new ArrayList<>(payloads.size());
            records.add(Record.batchOpen(first, timestampMicros, tag, payloads.get(0)));
            for (int i = 1; i < payloads.size(); i++) {
                records.add(Record.batchContinue(first + i, timestampMicros, payloads.get(i)));
            }
            return records;
        });
    }

    /**
     * Appends a leader's generation-start record. Refused unless generation-start is finalized; the
     * log first rolls onto a v4 segment unless the active one already is v4.
     */
    public long appendGenerationStart(long generation, long timestampMicros) throws IOException {
        if (!config.generationStartFinalized()) {
            throw new IllegalStateException("generation-start records are not finalized for this fleet; "
                    + "writing one would make the shard unreadable to builds before segment v4");
        }
        long offset = appendRecords(SegmentHeader.VERSION_4, first -> List.of(Record.generationStart(first,
                timestampMicros, generation)));
        writeLock.lock();
        try {
            epochs = epochs.append(generation, offset);
            saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
        } finally {
            writeLock.unlock();
        }
        return offset;
    }

    /** The sequence in the batch-open record at {@code offset}, for the producer state's look-ups. */
    private long sequenceAt(long offset) throws IOException {
        try {
            ReadResult r = read(offset, 1, 1);
            if (r instanceof ReadResult.Records records && !records.records().isEmpty()
                    && records.records().get(0).tag() != null) {
                return records.records().get(0).tag().sequence();
            }
            return -1;
        } catch (CorruptionException e) {
            throw new IOException("reading the batch at offset " + Long.toUnsignedString(offset) + ": " + e.getMessage(), e);
        }
    }

    private interface DerivedWrite {
        void run() throws IOException;
    }

    /** A derived file's write: a failure costs a longer open later, never a record, so it is only logged. */
    private void saveDerived(DerivedWrite write, String what) {
        try {
            write.run();
        } catch (IOException e) {
            LOG.warn("{}: could not save {} ({}); it is rebuilt from the log when needed", shard, what, e.toString());
        }
    }

    private interface RecordsAt {
        List<Record> at(long firstOffset);
    }

    private long appendRecords(int requiredVersion, RecordsAt build) throws IOException {
        writeLock.lock();
        try {
            ensureOpen();
            // Built (and so size-checked) before anything is written: an oversized payload throws here.
            List<Record> records = build.at(view.active().nextOffset());
            long bytes = 0;
            for (Record r : records) {
                bytes += r.encodedLength();
            }
            SegmentWriter active = view.active();
            if (active.header().version() < requiredVersion) {
                active = roll(requiredVersion);
            } else if (!active.isEmpty() && active.size() + bytes > config.segmentSizeBytes()) {
                active = roll(requiredVersion);
            }
            if (active.nextOffset() != records.get(0).offset()) {
                records = build.at(active.nextOffset());
            }
            active.appendAll(records);
            for (Record r : records) {
                producers.observe(r.kind(), r.offset(), r.tag());
            }
            if (config.fsyncPolicy() instanceof FsyncPolicy.OnCommit) {
                active.sync();
            } else {
                dirty = true;
            }
            return records.get(0).offset();
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Seals the active segment and starts the next at its next offset. Segments stay at v4 once the
     * log has one; otherwise new segments are v3. An empty active segment of too old a version is
     * replaced in place instead of being left behind empty.
     */
    private SegmentWriter roll(int requiredVersion) throws IOException {
        LogView v = view;
        SegmentWriter old = v.active();
        int version = Math.max(SegmentHeader.VERSION_3,
                Math.max(requiredVersion, old.header().version() >= SegmentHeader.VERSION_4 ? SegmentHeader.VERSION_4 : 0));
        long base = old.nextOffset();
        if (old.isEmpty()) {
            structure.writeLock().lock();
            try {
                old.close();
                Files.deleteIfExists(old.file().index());
                Files.delete(old.file().log());
                SegmentWriter fresh = SegmentWriter.create(old.file(), new SegmentHeader(version, base, SegmentRecovery.nowMicros()),
                        config.indexSpacingBytes());
                view = new LogView(v.sealed(), fresh);
                return fresh;
            } finally {
                structure.writeLock().unlock();
            }
        }
        old.seal();
        List<LogView.Sealed> sealed = new ArrayList<>(v.sealed());
        sealed.add(new LogView.Sealed(old.file(), old.header(), old.nextOffset(), old.size(), old.index()));
        SegmentWriter fresh = SegmentWriter.create(SegmentFile.in(dir, nextSegmentId++),
                new SegmentHeader(version, base, SegmentRecovery.nowMicros()), config.indexSpacingBytes());
        view = new LogView(List.copyOf(sealed), fresh);
        dirty = false;
        ProducerSnapshot snapshot = producers.snapshot(base);
        saveDerived(() -> ProducersFile.FILE.save(dir, snapshot), "the producer snapshot");
        return fresh;
    }

    /** Forces appended records to the device now, whatever the policy. */
    public void flush() throws IOException {
        writeLock.lock();
        try {
            ensureOpen();
            view.active().sync();
            dirty = false;
        } finally {
            writeLock.unlock();
        }
    }

    private void flushIfDirty() {
        writeLock.lock();
        try {
            if (!closed && dirty) {
                view.active().sync();
                dirty = false;
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
        structure.readLock().lock();
        try {
            ensureOpen();
            LogView v = view;
            long first = v.firstOffset();
            if (Long.compareUnsigned(offset, first) < 0) {
                return new ReadResult.Trimmed(first);
            }
            return LogReads.read(v, shard, offset, maxRecords, maxBytes);
        } finally {
            structure.readLock().unlock();
        }
    }

    // ---------------------------------------------------------------- structure

    /** The offset of the oldest record held (the next offset when the log is empty). */
    public long firstOffset() {
        return view.firstOffset();
    }

    /** One past the newest record. */
    public long nextOffset() {
        return view.active().nextOffset();
    }

    /** The segments, oldest first; the last is active. */
    public List<SegmentInfo> segments() {
        LogView v = view;
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
        writeLock.lock();
        structure.writeLock().lock();
        try {
            ensureOpen();
            LogView v = view;
            List<LogView.Sealed> keep = new ArrayList<>(v.sealed());
            List<SegmentFile> removed = new ArrayList<>();
            while (!keep.isEmpty() && Long.compareUnsigned(keep.get(0).nextOffset(), offset) <= 0) {
                LogView.Sealed s = keep.get(0);
                Files.delete(s.file().log());
                Files.deleteIfExists(s.file().index());
                keep.remove(0);
                view = new LogView(List.copyOf(keep), v.active());
                removed.add(s.file());
            }
            if (!removed.isEmpty()) {
                DurableFiles.fsyncDirectory(dir);
                producers.forgetBelow(view.firstOffset());
            }
            return removed;
        } finally {
            structure.writeLock().unlock();
            writeLock.unlock();
        }
    }

    /**
     * Removes every record at or after {@code offset}: later segments are deleted (newest first, so a
     * crash leaves a contiguous prefix) and the segment holding the offset is cut there and becomes
     * the active segment. At or past the end it does nothing; at or below the first offset it is
     * {@link #reset(long)} to {@code offset}.
     */
    public void truncate(long offset) throws IOException {
        writeLock.lock();
        structure.writeLock().lock();
        try {
            ensureOpen();
            LogView v = view;
            if (Long.compareUnsigned(offset, v.active().nextOffset()) >= 0) {
                return;
            }
            if (Long.compareUnsigned(offset, replica.commit()) < 0) {
                throw new BelowCommitException(shard, "truncation", offset, replica.commit());
            }
            if (Long.compareUnsigned(offset, v.firstOffset()) <= 0) {
                resetLocked(offset);
                return;
            }
            // The snapshot would describe records about to be replaced: gone, durably, before any change.
            ProducersFile.FILE.remove(dir);
            epochs = epochs.truncatedAt(offset);
            saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
            int holder = v.locate(offset);
            List<LogView.Sealed> sealed = v.sealed();
            // Newest first: the active segment, then sealed ones above the holder.
            SegmentWriter active = v.active();
            active.close();
            if (holder < sealed.size()) {
                deleteFiles(active.file());
                for (int i = sealed.size() - 1; i > holder; i--) {
                    deleteFiles(sealed.get(i).file());
                }
                DurableFiles.fsyncDirectory(dir);
            }
            SegmentFile file;
            SegmentHeader header;
            long end;
            if (holder < sealed.size()) {
                LogView.Sealed s = sealed.get(holder);
                file = s.file();
                header = s.header();
                end = s.size();
            } else {
                file = active.file();
                header = active.header();
                end = active.size();
            }
            long cut = positionOf(file, end, offset);
            try (FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
                ch.force(true);
            }
            SegmentIndex index = SegmentRecovery.rebuildIndex(file, shard, cut, config.indexSpacingBytes());
            SegmentWriter reopened = SegmentWriter.reopen(file, header, cut, offset, index, config.indexSpacingBytes());
            view = new LogView(List.copyOf(sealed.subList(0, Math.min(holder, sealed.size()))), reopened);
            producers.replaceWith(new ProducerState());
            try {
                replayMarks(view.firstOffset());
            } catch (CorruptionException e) {
                throw new IOException("rebuilding producer state after truncation: " + e.getMessage(), e);
            }
        } finally {
            structure.writeLock().unlock();
            writeLock.unlock();
        }
    }

    /** Byte position of the record holding {@code offset}, by record headers. */
    private long positionOf(SegmentFile file, long end, long offset) throws IOException {
        try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), false, end)) {
            RecordHeader h;
            while ((h = scanner.nextHeader()) != null) {
                if (h.offset() == offset) {
                    return h.position();
                }
            }
            throw new IllegalStateException("offset " + offset + " not found in " + file.logName());
        } catch (CorruptionException e) {
            throw new IOException("cannot truncate: " + e.getMessage(), e);
        }
    }

    /**
     * Removes every segment (newest first) and starts an empty log whose first offset is
     * {@code baseOffset}, in a segment with a new id (ids are never reused).
     */
    public void reset(long baseOffset) throws IOException {
        writeLock.lock();
        structure.writeLock().lock();
        try {
            ensureOpen();
            resetLocked(baseOffset);
        } finally {
            structure.writeLock().unlock();
            writeLock.unlock();
        }
    }

    private void resetLocked(long baseOffset) throws IOException {
        LogView v = view;
        long first = v.firstOffset();
        long next = v.active().nextOffset();
        if (Long.compareUnsigned(first, next) < 0 && Long.compareUnsigned(first, replica.commit()) < 0) {
            throw new BelowCommitException(shard, "reset", first, replica.commit());
        }
        ProducersFile.FILE.remove(dir);
        producers.replaceWith(new ProducerState());
        epochs = EpochHistory.empty();
        saveDerived(() -> EpochsFile.FILE.save(dir, epochs), "epochs");
        v.active().close();
        deleteFiles(v.active().file());
        for (int i = v.sealed().size() - 1; i >= 0; i--) {
            deleteFiles(v.sealed().get(i).file());
        }
        DurableFiles.fsyncDirectory(dir);
        int version = v.active().header().version() >= SegmentHeader.VERSION_4 ? SegmentHeader.VERSION_4
                : SegmentHeader.VERSION_3;
        SegmentWriter fresh = SegmentWriter.create(SegmentFile.in(dir, nextSegmentId++),
                new SegmentHeader(version, baseOffset, SegmentRecovery.nowMicros()), config.indexSpacingBytes());
        view = new LogView(List.of(), fresh);
        dirty = false;
    }

    private static void deleteFiles(SegmentFile file) throws IOException {
        Files.deleteIfExists(file.log());
        Files.deleteIfExists(file.index());
    }

    /** The accepted generation and the commit offset as this log knows them (the file may lag). */
    public ReplicaState replicaState() {
        return replica;
    }

    /** The leader accepted at the current generation, when the ballot names one. */
    public Optional<String> acceptedLeader() {
        return leader;
    }

    /** The generation history. */
    public EpochHistory epochs() {
        writeLock.lock();
        try {
            return epochs;
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
        writeLock.lock();
        try {
            ensureOpen();
            ReplicaState current = replica;
            int cmp = Long.compareUnsigned(generation, current.generation());
            if (cmp < 0) {
                throw new IllegalArgumentException("generation " + Long.toUnsignedString(generation) + " is below the "
                        + "accepted generation " + Long.toUnsignedString(current.generation()));
            }
            if (cmp == 0) {
                if (this.leader.isPresent() && this.leader.get().equals(leader)) {
                    return;
                }
                throw new IllegalArgumentException("generation " + Long.toUnsignedString(generation)
                        + " is already accepted" + this.leader.map(l -> " from leader " + l).orElse(" with no leader"));
            }
            synchronized (commitWriter.fileLock) {
                BallotFile.FILE.save(dir, new Ballot(generation, leader));
                ReplicaState raised = current.withGeneration(generation);
                ReplicaFile.FILE.save(dir, raised);
                replica = raised;
                this.leader = Optional.of(leader);
                commitWriter.wroteItself(raised);
            }
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Moves the commit offset up (a lower one is ignored); the file is written behind, as the fsync
     * policy says.
     */
    public void advanceCommit(long commit) {
        writeLock.lock();
        try {
            ensureOpen();
            if (Long.compareUnsigned(commit, replica.commit()) <= 0) {
                return;
            }
            replica = replica.withCommit(commit);
        } finally {
            writeLock.unlock();
        }
        commitWriter.advanced();
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
            SegmentWriter active = view.active();
            try {
                active.sync();
                active.writeIndex();
            } finally {
                active.close();
                commitWriter.close(); // the commit offset is always written at shutdown
            }
        } finally {
            writeLock.unlock();
        }
    }
}
