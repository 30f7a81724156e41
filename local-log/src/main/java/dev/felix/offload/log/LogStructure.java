package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScanner;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link ShardLog}'s segments and the changes to which segments there are: a roll onto a new
 * segment, a cut at an offset, a reset to an empty log, the deletion of old segments. Each change
 * publishes a new {@link LogView}. Segment ids are never reused.
 *
 * <p>The caller holds the log's write lock for every change. Changes that remove or shorten files
 * run with readers excluded ({@link #excludeReaders}); reads ({@link #read}) hold the read side.
 */
final class LogStructure {

    private final Path dir;
    private final String shard;
    private final ShardLogConfig config;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile LogView view;
    private long nextSegmentId;

    LogStructure(Path dir, ShardLogConfig config, List<LogView.Sealed> sealed, SegmentWriter active) {
        this.dir = dir;
        this.shard = DataRoot.Shard.nameOf(dir);
        this.config = config;
        this.view = new LogView(List.copyOf(sealed), active);
        this.nextSegmentId = active.file().id() + 1;
    }

    LogView view() {
        return view;
    }

    /** Keeps readers out until {@link #admitReaders}: files are about to be removed or shortened. */
    void excludeReaders() {
        lock.writeLock().lock();
    }

    void admitReaders() {
        lock.writeLock().unlock();
    }

    /** See {@link ShardLog#read}; the caller has checked the arguments and that the log is open. */
    ReadResult read(long offset, int maxRecords, long maxBytes) throws IOException, CorruptionException {
        lock.readLock().lock();
        try {
            LogView v = view;
            long first = v.firstOffset();
            if (Long.compareUnsigned(offset, first) < 0) {
                return new ReadResult.Trimmed(first);
            }
            return LogReads.read(v, shard, offset, maxRecords, maxBytes);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Starts a new active segment at the next offset, of at least {@code requiredVersion}. Segments
     * stay at v4 once the log has one; otherwise new segments are v3. An empty active segment is
     * replaced in place rather than left behind empty. Answers true when the old one was sealed.
     */
    boolean roll(int requiredVersion) throws IOException {
        LogView v = view;
        SegmentWriter old = v.active();
        int version = Math.max(SegmentHeader.VERSION_3,
                Math.max(requiredVersion, old.header().version() >= SegmentHeader.VERSION_4 ? SegmentHeader.VERSION_4 : 0));
        long base = old.nextOffset();
        if (old.isEmpty()) {
            excludeReaders();
            try {
                old.close();
                Files.deleteIfExists(old.file().index());
                Files.delete(old.file().log());
                SegmentWriter fresh = SegmentWriter.create(old.file(), new SegmentHeader(version, base, SegmentRecovery.nowMicros()),
                        config.indexSpacingBytes());
                view = new LogView(v.sealed(), fresh);
                return false;
            } finally {
                admitReaders();
            }
        }
        old.seal();
        List<LogView.Sealed> sealed = new ArrayList<>(v.sealed());
        sealed.add(new LogView.Sealed(old.file(), old.header(), old.nextOffset(), old.size(), old.index()));
        SegmentWriter fresh = SegmentWriter.create(SegmentFile.in(dir, nextSegmentId++),
                new SegmentHeader(version, base, SegmentRecovery.nowMicros()), config.indexSpacingBytes());
        view = new LogView(List.copyOf(sealed), fresh);
        return true;
    }

    /**
     * Deletes, oldest first, every sealed segment whose records all lie below {@code offset}; see
     * {@link ShardLog#deleteSegmentsBelow}. Readers are excluded by the caller.
     */
    List<SegmentFile> deleteBelow(long offset) throws IOException {
        LogView v = view;
        List<LogView.Sealed> keep = new ArrayList<>(v.sealed());
        List<SegmentFile> removed = new ArrayList<>();
        while (!keep.isEmpty() && Long.compareUnsigned(keep.get(0).nextOffset(), offset) <= 0) {
            LogView.Sealed s = keep.get(0);
            Files.delete(s.file().log());
            Files.deleteIfExists(s.file().index());
            keep.remove(0);
            // Published after each deletion, so a failure part way leaves a view naming only files that exist.
            view = new LogView(List.copyOf(keep), v.active());
            removed.add(s.file());
        }
        if (!removed.isEmpty()) {
            DurableFiles.fsyncDirectory(dir);
        }
        return removed;
    }

    /**
     * Removes every record at or after {@code offset}, which lies above the first offset and below
     * the next: later segments are deleted, newest first (so a crash leaves a contiguous prefix),
     * and the segment holding the offset is cut there and becomes the active one. Readers are
     * excluded by the caller.
     */
    void cutAt(long offset) throws IOException {
        LogView v = view;
        int holder = v.locate(offset);
        List<LogView.Sealed> sealed = v.sealed();
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
    }

    /** Byte position of the record holding {@code offset}, by record headers. */
    private long positionOf(SegmentFile file, long end, long offset) throws IOException {
        try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), ScanDepth.HEADERS, end)) {
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
     * Removes every segment, newest first, and starts an empty log at {@code baseOffset} in a
     * segment with a new id; a log that had reached v4 stays there. Readers are excluded by the caller.
     */
    void resetTo(long baseOffset) throws IOException {
        LogView v = view;
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
    }

    private static void deleteFiles(SegmentFile file) throws IOException {
        Files.deleteIfExists(file.log());
        Files.deleteIfExists(file.index());
    }
}
