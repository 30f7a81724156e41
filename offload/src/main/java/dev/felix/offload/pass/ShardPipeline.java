package dev.felix.offload.pass;

import dev.felix.offload.copy.LargestTimestamps;

import dev.felix.offload.copy.HeldOffsets;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * One attempt at the shard, pipelined: the shard's thread selects and scans segment after segment,
 * oldest first, and hands each to the pass's uploads as soon as the bytes in flight allow, so one
 * segment is scanned while older ones upload and several upload at once. Commits stay on this
 * thread and in order: a segment is recorded only once every older one of the shard is. At the
 * first older segment that fails, nothing younger is recorded (their objects, named by no
 * manifest, are orphans for the sweep, or adopted by the next pass's upload) and that failure is
 * the shard's result. The shard's uploads have all ended before its result is returned.
 */
final class ShardPipeline {
    private static final Logger LOG = LoggerFactory.getLogger(ShardPipeline.class);

    /** At most this many verified segments wait to be recorded together. */
    static final int RECORD_BATCH = 64;
    /** A verified segment waits at most about this long to be recorded with later ones. */
    static final long RECORD_DELAY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    /** A segment handed to the uploads, and how its upload ended; committed by the shard's own thread. */
    static final class InFlight {
        final int index;
        final LocalSegment seg;
        final SegmentPreparation.Prepared prepared;
        final SegmentScan scan;
        final long last;
        volatile SegmentUpload upload;
        volatile Throwable failure;
        /** Set after {@code upload} or {@code failure}, before the upload's bytes are given back. */
        volatile boolean ended;
        /** {@link System#nanoTime} when it ended, set just before {@code ended}. */
        volatile long endedAt;

        InFlight(int index, LocalSegment seg, SegmentPreparation.Prepared prepared, long last) {
            this.index = index;
            this.seg = seg;
            this.prepared = prepared;
            this.scan = prepared.scan();
            this.last = last;
        }
    }

    /** Why the shard stops before its last eligible segment. */
    static final class Ending {
        String problem;
        KeyCollision collision;
        ShardStop stop;
        int pending;

        Ending(String problem, ShardStop stop, int pending) {
            this.problem = problem;
            this.stop = stop;
            this.pending = pending;
        }
    }

    /** The steps of one segment, up to its verified copy. */
    private final SegmentUploader uploader;
    /** Step UNLINKED, once the shard's segments are recorded. */
    private final ShardRelease release;
    private final String shard;
    private final StepHook hook;
    /** One past the last committed record, when the shard has a {@code replica} file. */
    private final OptionalLong commitOffset;
    /** Checked before each segment begins: a stop ends the shard between two segments. */
    private final BooleanSupplier stopRequested;
    private final ManifestStore manifests;
    private final List<LocalSegment> locals;
    private final List<SegmentUpload> uploaded;
    private final List<Long> unlinked;
    private final InFlightUploads lanes;
    /** Asked before each manifest write that records copies. */
    private final RecordGuard guard;
    private final Map<Long, Long> crcOfValidBytes = new HashMap<>();
    private final CopyProofs proofs;
    /** Uploads begun and not yet committed, oldest first; touched by the shard's thread only. */
    private final Deque<InFlight> flying = new ArrayDeque<>();
    /** Set once the shard's prefix was listed (or found not worth listing) before its first upload. */
    private boolean listed;
    /** Set when copies were recorded without the lease confirmed (a stop): nothing is unlinked after. */
    private boolean recordedUnconfirmed;
    /** Set by the first commit that fails. */
    private Ending failed;
    /**
     * Set when an upload's own exception is thrown on from its commit: nothing younger than it may be
     * recorded after that, or the manifest would skip the failed segment for good (entries only grow
     * upwards, so a later pass would take it for older than the manifest).
     */
    private boolean thrown;

    /**
     * The shard's largest-timestamps file, read at the pass's first recording and kept: while the pass
     * holds the root nothing else writes it, and reading it again at every recording made each one
     * cost the whole shard's lines (thousands of small segments: a recording every few dozen).
     */
    private LargestTimestamps largestTimestamps;

    ShardPipeline(SegmentUploader uploader, ShardRelease release, OptionalLong commitOffset,
                  BooleanSupplier stopRequested, ManifestStore manifests, List<LocalSegment> locals,
                  List<SegmentUpload> uploaded, List<Long> unlinked, InFlightUploads lanes, RecordGuard guard)
            throws IOException {
        this.uploader = uploader;
        this.release = release;
        this.shard = uploader.shard();
        this.hook = uploader.hook();
        this.commitOffset = commitOffset;
        this.stopRequested = stopRequested;
        this.manifests = manifests;
        this.locals = locals;
        this.uploaded = uploaded;
        this.unlinked = unlinked;
        this.lanes = lanes;
        this.guard = guard;
        this.proofs = CopyProofs.read(release.shardDir());
    }

    ShardResult run() throws IOException {
        Ending later;
        try {
            try {
                later = send();
            } catch (IOException | RuntimeException | Error e) {
                // Thrown while preparing a younger segment: the older ones in flight began before it, and
                // would have been recorded before it was reached; an older failure is what stopped the shard.
                try {
                    commitAll();
                } catch (IOException | RuntimeException | Error older) {
                    older.addSuppressed(e);
                    throw older;
                }
                if (failed == null) {
                    throw e;
                }
                later = null;
            }
            commitAll();
        } finally {
            lanes.awaitUntil(() -> flying.stream().allMatch(f -> f.ended), false);
            flying.clear();
        }
        Ending end = failed != null ? failed : later;
        java.time.Instant settling = recordedUnconfirmed ? null
                : release.unlink(manifests, locals, crcOfValidBytes, proofs, unlinked);
        if (end == null) {
            return new ShardResult(shard, true, uploaded, unlinked, 0, null, null, null).settlingUntil(settling);
        }
        return new ShardResult(shard, end.problem == null && end.pending == 0, uploaded, unlinked, end.pending,
                end.problem, end.collision, end.stop).settlingUntil(settling);
    }

    /**
     * Selects, scans and hands out segments until the last or the first that stops the shard;
     * answers why it stopped there (null when it did not), which stands only if every older
     * segment in flight commits.
     */
    private Ending send() throws IOException {
        for (int i = 0; i < locals.size() - 1; i++) {
            commitEnded();
            if (failed != null) {
                return null;
            }
            LocalSegment seg = locals.get(i);
            LocalSegment next = locals.get(i + 1);
            Manifest manifest = manifests.manifest();
            if (seg.hasEntryIn(manifest)) {
                continue;
            }
            if (stopRequested.getAsBoolean()) {
                return stoppedBefore(seg, i);
            }
            ManifestEntry newest = manifest.newestEntry().orElse(null);
            if (newest != null && Long.compareUnsigned(seg.header().baseOffset(), newest.lastOffset()) <= 0) {
                // Older than what the manifest already holds (entries only ever grow upwards): copied already
                // only if the entries hold every one of its offsets, under whatever boundaries.
                Ending uncovered = coveredByEntries(manifest, seg, next, i);
                if (uncovered != null) {
                    return uncovered;
                }
                continue;
            }
            hook.reached(OffloadStep.SELECTED, shard, seg.file().id());

            SegmentPreparation.Prepared prepared = uploader.prepare(seg);
            SegmentScan scan = prepared.scan();
            if (!scan.isClean()) {
                return new Ending("not uploaded, corrupt: " + scan.failure().getMessage(), null,
                        countPending(locals, i));
            }
            if (scan.nextOffset() != next.header().baseOffset()) {
                return new Ending("not uploaded: " + seg.file().logName() + " ends before offset "
                        + Long.toUnsignedString(scan.nextOffset()) + " but " + next.file().logName() + " begins at "
                        + Long.toUnsignedString(next.header().baseOffset()) + "; it is not sealed", null,
                        countPending(locals, i));
            }
            if (scan.recordCount() == 0) {
                continue; // an empty sealed segment holds nothing to copy
            }
            long last = scan.nextOffset() - 1;
            if (commitOffset.isPresent() && Long.compareUnsigned(last, commitOffset.getAsLong()) >= 0) {
                return null; // not yet committed by a majority, so not eligible yet: a later pass takes it
            }
            hook.reached(OffloadStep.VALIDATED, shard, seg.file().id());

            InFlightUploads.Reservation bytes = lanes.reserve(scan.validEnd());
            try {
                // While the bytes are not free, older segments that finished are recorded meanwhile.
                while (!bytes.awaitOr(this::recordDue)) {
                    commitEnded();
                    if (failed != null) {
                        bytes.release();
                        return null;
                    }
                }
                if (stopRequested.getAsBoolean()) {
                    bytes.release();
                    return stoppedBefore(seg, i);
                }
            } catch (IOException | RuntimeException | Error e) {
                bytes.release();
                throw e;
            }
            if (!listed) {
                listed = true;
                uploader.listShard(countPending(locals, i), manifest.entries().size());
            }
            if (!uploader.journalCovers(seg)) {
                uploader.nameForJournal(upcoming(manifest, i));
            }
            InFlight f = new InFlight(i, seg, prepared, last);
            bytes.run(() -> upload(f)); // only once handed over: the final wait waits for it to end
            flying.addLast(f);
        }
        return null;
    }

    /** Sealed segments from the {@code i}th on that the manifest does not hold yet, at most {@link JournalAhead#SEGMENTS}. */
    private List<LocalSegment> upcoming(Manifest manifest, int i) {
        List<LocalSegment> out = new ArrayList<>();
        for (int j = i; j < locals.size() - 1 && out.size() < JournalAhead.SEGMENTS; j++) {
            if (!locals.get(j).hasEntryIn(manifest)) {
                out.add(locals.get(j));
            }
        }
        return out;
    }

    /**
     * Null when every offset of sealed segment {@code seg} (up to where {@code next} begins) is held by
     * the manifest's entries; else why the shard cannot be complete: the segment's records from the
     * first one no entry holds have no copy, and recording it would overlap an entry.
     */
    private Ending coveredByEntries(Manifest manifest, LocalSegment seg, LocalSegment next, int i) {
        long base = seg.header().baseOffset();
        long end = next.header().baseOffset();
        if (Long.compareUnsigned(end, base) <= 0) {
            return null; // holds no record
        }
        List<HeldOffsets.Range> ranges = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            ranges.add(new HeldOffsets.Range(e.baseOffset(), e.lastOffset(), HeldOffsets.Source.ENTRIES));
        }
        Long missing = HeldOffsets.of(List.of(), ranges).firstNotHeld(base, end - 1);
        if (missing == null) {
            return null;
        }
        String problem = "segment " + Long.toUnsignedString(seg.file().id()) + " (offsets " + Long.toUnsignedString(base)
                + ".." + Long.toUnsignedString(end - 1) + ") lies partly under the manifest's entries, whose boundaries "
                + "differ from the local log's; offsets " + Long.toUnsignedString(missing) + ".."
                + Long.toUnsignedString(end - 1) + " have no copy and cannot be recorded without overlapping an entry "
                + "(a restore beside a re-created shard?); they stay local, and this shard is not complete";
        LOG.error("{}: {}", shard, problem);
        return new Ending(problem, new ShardStop.PartlyCovered(seg.file().id(), base, missing, end - 1),
                countPending(locals, i));
    }

    private Ending stoppedBefore(LocalSegment seg, int i) {
        return new Ending("stopped before segment " + seg.file().id() + "; the next pass goes on from here",
                new ShardStop.Requested(seg.file().id()), countPending(locals, i));
    }

    /** On an upload thread: steps UPLOADED to INDEX_UPLOADED, whatever ends them kept for the commit. */
    private void upload(InFlight f) {
        try {
            f.upload = uploader.upload(f.seg, f.prepared, f.last);
        } catch (Throwable t) {
            f.failure = t;
        } finally {
            f.endedAt = System.nanoTime();
            f.ended = true;
        }
    }

    private boolean oldestEnded() {
        InFlight oldest = flying.peekFirst();
        return oldest != null && oldest.ended;
    }

    /**
     * Whether the oldest segments whose uploads ended are to be recorded now: a failure among them
     * (the older ones go first), {@link #RECORD_BATCH} of them, or the oldest having waited
     * {@link #RECORD_DELAY_NANOS}. Each recording costs a manifest write and a confirmation of the
     * node's lease (a listing in the store), so for small segments they are taken together.
     */
    private boolean recordDue() {
        int ended = 0;
        for (InFlight f : flying) {
            if (!f.ended) {
                break;
            }
            if (f.failure != null) {
                return true;
            }
            ended++;
        }
        return ended >= RECORD_BATCH
                || ended > 0 && System.nanoTime() - flying.peekFirst().endedAt >= RECORD_DELAY_NANOS;
    }

    /**
     * Records the oldest segments whose uploads ended, in order, up to the first failure, when that is
     * {@link #recordDue due}. Those that succeeded one after another are recorded together: one
     * manifest write (and one of each side file, and one confirmation of the lease) for the lot,
     * instead of one per segment, which for small segments was a fixed cost each.
     */
    private void commitEnded() throws IOException {
        if (recordDue()) {
            commitEndedNow();
        }
    }

    /** As {@link #commitEnded}, due or not. */
    private void commitEndedNow() throws IOException {
        List<InFlight> batch = new ArrayList<>();
        try {
            while (failed == null && !thrown && oldestEnded()) {
                if (flying.peekFirst().failure != null) {
                    record(batch); // the older ones first
                    batch.clear();
                    if (failed == null) {
                        commitOldest();
                    }
                } else {
                    batch.add(flying.pollFirst());
                }
            }
        } finally {
            record(batch);
        }
    }

    /** Waits for every segment in flight and records them in order, up to the first failure. */
    private void commitAll() throws IOException {
        while (failed == null && !thrown && !flying.isEmpty()) {
            lanes.awaitUntil(this::oldestEnded, true);
            commitEndedNow();
        }
    }

    /** Records the oldest segment in flight, whose upload ended, or takes its failure as the shard's. */
    private void commitOldest() throws IOException {
        InFlight f = flying.pollFirst();
        Throwable failure = f.failure;
        if (failure == null) {
            record(List.of(f));
            return;
        }
        int pending = countPending(locals, f.index);
        if (failure instanceof SegmentUploader.CollisionException e) {
            failed = new Ending(e.collision.describe(), null, pending);
            failed.collision = e.collision;
            LOG.error("{}: {}", shard, failed.problem);
        } else if (failure instanceof StoreException e) {
            failed = new Ending("store failure on segment " + f.seg.file().id() + ": " + e.getMessage(), null, pending);
        } else if (failure instanceof SegmentUploader.VerificationFailedException e) {
            failed = new Ending(e.getMessage(), new ShardStop.VerificationFailed(e.segment, e.attempts), pending);
        } else if (failure instanceof IOException e) {
            thrown = true;
            throw e;
        } else if (failure instanceof RuntimeException e) {
            thrown = true;
            throw e;
        } else if (failure instanceof Error e) {
            thrown = true;
            throw e;
        } else {
            thrown = true;
            throw new IllegalStateException("upload of segment " + f.seg.file().id() + " failed", failure);
        }
    }

    /**
     * Step RECORDED for segments whose copies are verified, oldest first, every older one being
     * recorded: their entries in one manifest write.
     */
    private void record(List<InFlight> batch) throws IOException {
        if (batch.isEmpty()) {
            return;
        }
        try {
            guard.beforeRecording();
        } catch (dev.felix.offload.store.StoreStoppedException stopping) {
            // The process is stopping and starts no request: these uploads, begun before the stop, are
            // recorded without the lease confirmed, and this pass unlinks nothing more. The next pass
            // checks the lease when it starts, before it could unlink anything on their strength.
            LOG.info("{}: recording segments {}..{} without confirming the node's lease: the process is stopping",
                    shard, batch.get(0).seg.file().id(), batch.get(batch.size() - 1).seg.file().id());
            recordedUnconfirmed = true;
        } catch (StoreException e) {
            // Not recorded: the copies are unnamed orphans for the sweep, the segments keep their records.
            if (failed == null) {
                failed = new Ending("store failure before recording segments " + batch.get(0).seg.file().id() + ".."
                        + batch.get(batch.size() - 1).seg.file().id() + ": " + e.getMessage(), null,
                        countPending(locals, batch.get(0).index));
            }
            return;
        }
        Manifest manifest = manifests.manifest();
        Map<ManifestEntry, InFlight> entries = new LinkedHashMap<>();
        for (InFlight f : batch) {
            SegmentScan scan = f.scan;
            SegmentUpload up = f.upload;
            ManifestEntry entry = new ManifestEntry(f.seg.file().id(), f.seg.header().baseOffset(), f.last,
                    scan.validEnd(), scan.oldestTimestamp(), scan.newestTimestamp(), (int) up.crc32(), up.key());
            if (!up.verifiedBy().proven()) {
                // Recorded unproven: no proof of an older copy at this key may stand for it, even after a crash.
                proofs.forget(up.key(), manifest);
            }
            entries.put(entry, f);
            manifest = manifest.withEntry(entry);
        }
        // Recorded only while the segments are still the broker's: a truncation removes one after
        // dropping its entry, and an entry for a removed segment would name records it gave up.
        manifests.save(manifest, () -> {
            for (InFlight f : batch) {
                if (Files.size(f.seg.file().log()) != f.seg.size()) {
                    throw new ManifestChangedException(shard, f.seg.file().log(), "(segment "
                            + f.seg.file().id() + " changed size) before its entry was saved");
                }
            }
        });
        Map<ManifestEntry, Long> largest = new LinkedHashMap<>();
        Map<ManifestEntry, String> proven = new LinkedHashMap<>();
        for (Map.Entry<ManifestEntry, InFlight> e : entries.entrySet()) {
            InFlight f = e.getValue();
            hook.reached(OffloadStep.RECORDED, shard, f.seg.file().id());
            largest.put(e.getKey(), f.scan.largestTimestamp());
            if (f.upload.verifiedBy().proven()) {
                proven.put(e.getKey(), f.upload.verifiedBy().label());
                crcOfValidBytes.put(f.seg.file().id(), f.scan.validBytesCrc32());
            }
            uploaded.add(f.upload);
            LOG.info("{}: offloaded segment {} (offsets {}..{}, {} bytes) to {}, verified by {}", shard,
                    f.seg.file().id(), f.seg.header().baseOffset(), f.last, f.upload.bytes(), f.upload.key(),
                    f.upload.verifiedBy());
        }
        recordLargestTimestamps(manifests, largest);
        if (!proven.isEmpty()) {
            recordProofs(proofs, proven, manifests.manifest());
        }
    }

    static int countPending(List<LocalSegment> locals, int from) {
        return Math.max(0, locals.size() - 1 - from);
    }

    /** Writes the entries' largest timestamps beside the manifest, in one write; derived data, so a failure only logs. */
    private void recordLargestTimestamps(ManifestStore manifests, Map<ManifestEntry, Long> largest) {
        try {
            if (largestTimestamps == null) {
                largestTimestamps = LargestTimestamps.load(release.shardDir());
            }
            largest.forEach(largestTimestamps::put);
            largestTimestamps.save(manifests.manifest().entries());
        } catch (IOException e) {
            LOG.warn("{}: {} not written ({}); retention rebuilds it from the objects", shard,
                    LargestTimestamps.FILE_NAME, e.toString());
        }
    }


    private void recordProofs(CopyProofs proofs, Map<ManifestEntry, String> how, Manifest manifest) {
        try {
            proofs.recorded(how, manifest);
        } catch (IOException e) {
            // Derived: a proof not written only means the copy is proven again before its segment goes.
            LOG.warn("{}: could not write {} ({}); the copies of segments {} will be proven again", shard,
                    CopyProofs.FILE_NAME, e.getMessage(), how.keySet().stream().map(ManifestEntry::segmentId).toList());
        }
    }
}
