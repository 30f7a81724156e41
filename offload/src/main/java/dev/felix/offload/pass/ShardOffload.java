package dev.felix.offload.pass;

import dev.felix.offload.copy.CopyProofKind;
import dev.felix.offload.copy.LocalRelease;
import dev.felix.offload.copy.ReadBack;
import dev.felix.offload.root.SegmentKeys;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

/**
 * One shard's part of an offload pass. Each sealed segment goes through these steps, in order:
 *
 * <pre>
 *   SELECTED ──full scan ok──▶ VALIDATED ──index put──▶ INDEX_UPLOADED ──segment put──▶ UPLOADED
 *      │                          │                                                     │
 *      │ not sealed, above the    │ corrupt: the shard is reported                      │ verify
 *      │ commit offset, or in     │ with the site; nothing is                           ▼
 *      │ the manifest: skipped    │ uploaded; the pass goes on     mismatch: delete ◀── VERIFIED?
 *                                 ▼ with other shards               the object and       │ yes
 *                                                                   put again (bounded)  ▼
 *                                       ┌────────────────────────────────────────── RECORDED  ◀── commit point:
 *                                       ▼                                                        the manifest naming
 *                                    UNLINKED  (oldest first, as local retention allows,          it is durable
 *                                               only with a matching entry; never the active)
 * </pre>
 *
 * A crash between any two steps leaves the shard consistent: before {@code RECORDED} nothing names
 * the object, so the next pass selects the segment and uploads it again (an object left behind
 * meanwhile is an orphan for the sweep); after it, the entry is durable and the next pass goes
 * straight to unlinking.
 *
 * <p>Uploads never replace an object: they are create-only (a head first where the server ignores
 * {@code If-None-Match}). A key found holding the very bytes of the upload (what a retry after a
 * crash or a lost answer finds) is adopted and verified as usual; a key holding anything else is a
 * {@link KeyCollision}: the object stays, the segment is not recorded, and the shard stops there. Nothing local is ever removed before its entry is durable and matches
 * the local file's size and CRC32, and its copy is proven: by this pass's verification (written to
 * {@link CopyProofs}), by an earlier one's proof there, or proven again now; a pass under
 * {@code --verify none} records entries but unlinks nothing on their strength.
 *
 * <p>The steps of one segment are in this order, but segments overlap: the shard's thread scans the
 * next segment while older ones upload, and uploads of several segments (of this shard and others)
 * run at once on the pass's upload threads, within its bound on bytes in flight
 * ({@link InFlightUploads}). {@code RECORDED} stays in order: a segment is recorded only after every
 * older one of the shard is, and once an older one fails no younger one is recorded.
 *
 * <p>It works on the shard directory read-only but for the manifest and the unlinks: the broker
 * owns the segments, and the active (newest) segment is never touched.
 */
public final class ShardOffload {

    private static final Logger LOG = LoggerFactory.getLogger(ShardOffload.class);

    final Path shardDir;
    final String shard;
    private final ObjectStore store;
    private final SegmentKeys keys;
    private final OffloadSettings settings;
    final StepHook hook;
    private final RateLimiter bandwidth;
    private final ProgressListener progress;
    final OptionalLong commitOffset;
    final java.util.function.BooleanSupplier stopRequested;
    /** The pass's uploads under way, shared by its shards; null: this shard's own, for one run. */
    private InFlightUploads uploads;
    /** What "now" is for entries settling before their segments go. */
    private java.time.Clock clock = java.time.Clock.systemUTC();

    /**
     * @param commitOffset one past the last committed record when the shard has a {@code replica}
     *                     file; only records below it may be offloaded. Empty when there is none.
     * @param bandwidth    shared upload limiter in bytes per second, or null for none
     */
    public ShardOffload(Path shardDir, ObjectStore store, SegmentKeys keys, OffloadSettings settings, StepHook hook,
                        RateLimiter bandwidth, ProgressListener progress, OptionalLong commitOffset) {
        this(shardDir, store, keys, settings, hook, bandwidth, progress, commitOffset, () -> false);
    }

    /**
     * As above; {@code stopRequested} is checked before each segment begins, so a stop (SIGTERM) ends
     * the shard between two segments, never inside one's steps: segments whose uploads are under way
     * are finished and recorded, and no further one begins; those are left for the next pass.
     */
    public ShardOffload(Path shardDir, ObjectStore store, SegmentKeys keys, OffloadSettings settings, StepHook hook,
                        RateLimiter bandwidth, ProgressListener progress, OptionalLong commitOffset,
                        java.util.function.BooleanSupplier stopRequested) {
        this(shardDir.getFileName().toString(), shardDir, store, keys, settings, hook, bandwidth, progress, commitOffset,
                stopRequested);
    }

    /**
     * As above, for the shard named {@code shard} (its path relative to the data root, as
     * {@link dev.felix.offload.log.DataRoot.Shard#name()} gives it): the name its keys, logs and
     * results carry.
     */
    public ShardOffload(String shard, Path shardDir, ObjectStore store, SegmentKeys keys, OffloadSettings settings,
                        StepHook hook, RateLimiter bandwidth, ProgressListener progress, OptionalLong commitOffset,
                        java.util.function.BooleanSupplier stopRequested) {
        this.shardDir = shardDir;
        this.shard = shard;
        this.store = store;
        this.keys = keys;
        this.settings = settings;
        this.hook = hook;
        this.bandwidth = bandwidth;
        this.progress = progress;
        this.commitOffset = commitOffset;
        this.stopRequested = stopRequested;
    }

    /**
     * Uploads under {@code shared}'s bounds on bytes and uploads in flight, with the other shards of
     * the pass; without it the shard bounds its own uploads by {@link OffloadSettings#maxBytesInFlight()}.
     */
    ShardOffload sharing(InFlightUploads shared) {
        this.uploads = shared;
        return this;
    }

    /** This shard's offload with {@code clock} as "now" for entries settling; for tests. */
    public ShardOffload clockedBy(java.time.Clock clock) {
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        return this;
    }

    /** A local segment and what a pass learned of it. */
    record Local(SegmentFile file, SegmentHeader header, long size) {
    }

    /** Sealed segments of {@code shardDir} its manifest does not record (0 when the manifest does not decode). */
    public static int pendingSegments(Path shardDir) throws IOException {
        return unrecorded(shardDir).size();
    }

    /** Bytes of sealed segments not yet in the manifest: what a pass will roughly upload. */
    public static long pendingBytes(Path shardDir) throws IOException {
        long total = 0;
        for (SegmentFile f : unrecorded(shardDir)) {
            total += Files.size(f.log());
        }
        return total;
    }

    /** The sealed segments (all but the newest) without a manifest entry; none when the manifest does not decode. */
    private static List<SegmentFile> unrecorded(Path shardDir) throws IOException {
        List<SegmentFile> files = SegmentFile.list(shardDir);
        dev.felix.offload.manifest.ManifestSummary manifest;
        try {
            manifest = dev.felix.offload.manifest.ManifestCache.shared().summary(shardDir); // decoded once per change
        } catch (CorruptionException e) {
            return List.of();
        }
        List<SegmentFile> out = new ArrayList<>();
        for (SegmentFile f : files.subList(0, Math.max(0, files.size() - 1))) {
            if (!manifest.records(f.id())) {
                out.add(f);
            }
        }
        return out;
    }

    /** How often one pass takes a shard up again after the broker changed its manifest under it. */
    static final int MAX_MANIFEST_RESTARTS = 3;

    /**
     * Runs the pass over this shard. Store failures and corruption are reported in the result.
     *
     * <p>When the broker replaces {@code offload.manifest} during the pass (a truncation or reset of
     * the shard's log), the save or the unlink that notices it does nothing ({@link ManifestStore}
     * compares before it replaces, and before every unlink); the pass drops what it held for the
     * shard (the entry it was about to record, the segment list, the checksums it computed) and takes
     * the shard up again from the broker's manifest and the directory as it is now, up to
     * {@value #MAX_MANIFEST_RESTARTS} times. An object uploaded for a dropped entry is named by no
     * manifest: an orphan, for the sweep.
     */
    public ShardResult run() throws IOException {
        List<SegmentUpload> uploaded = new ArrayList<>();
        List<Long> unlinked = new ArrayList<>();
        ManifestStore manifests;
        try {
            manifests = ManifestStore.open(shardDir);
        } catch (CorruptionException e) {
            return new ShardResult(shard, false, uploaded, unlinked, 0, "manifest unreadable, nothing done: "
                    + e.getMessage());
        }
        for (int restarts = 0; ; restarts++) {
            try {
                return attempt(manifests, uploaded, unlinked);
            } catch (ManifestChangedException | NoSuchFileException changed) {
                LOG.warn("{}: the broker changed the shard during the pass ({}); dropping what the pass held "
                        + "for the shard and taking it up again from the manifest and files as they are now", shard,
                        changed.getMessage());
                Manifest now;
                try {
                    now = manifests.reload();
                } catch (CorruptionException e) {
                    return new ShardResult(shard, false, uploaded, unlinked, 0, "manifest changed by the broker "
                            + "and no longer decodes, nothing more done: " + e.getMessage());
                }
                uploaded.removeIf(u -> now.entries().stream().noneMatch(e -> e.objectKey().equals(u.key())));
                if (restarts + 1 >= MAX_MANIFEST_RESTARTS) {
                    return new ShardResult(shard, false, uploaded, unlinked, 0, "the broker changed offload.manifest "
                            + (restarts + 1) + " times during this pass; the next pass takes the shard up from it");
                }
            }
        }
    }

    private ShardResult attempt(ManifestStore manifests, List<SegmentUpload> uploaded, List<Long> unlinked)
            throws IOException {
        List<SegmentFile> files = SegmentFile.list(shardDir);
        List<Local> locals = new ArrayList<>(files.size());
        for (SegmentFile f : files) {
            try {
                locals.add(new Local(f, readHeader(f), Files.size(f.log())));
            } catch (CorruptionException e) {
                return new ShardResult(shard, false, uploaded, unlinked, files.size() - 1,
                        "segment header unreadable: " + e.getMessage());
            }
        }
        if (uploads != null) {
            return new ShardPipeline(this, manifests, locals, uploaded, unlinked, uploads).run();
        }
        try (InFlightUploads own = InFlightUploads.of(settings)) {
            return new ShardPipeline(this, manifests, locals, uploaded, unlinked, own).run();
        }
    }

    /** Writes the entries' largest timestamps beside the manifest, in one write; derived data, so a failure only logs. */
    void recordLargestTimestamps(ManifestStore manifests, Map<ManifestEntry, Long> largest) {
        try {
            LargestTimestamps side = LargestTimestamps.load(shardDir);
            largest.forEach(side::put);
            side.save(manifests.manifest().entries());
        } catch (IOException e) {
            LOG.warn("{}: {} not written ({}); retention rebuilds it from the objects", shard,
                    LargestTimestamps.FILE_NAME, e.toString());
        }
    }

    static int countPending(List<Local> locals, int from) {
        return Math.max(0, locals.size() - 1 - from);
    }

    static boolean hasEntry(Manifest manifest, Local seg) {
        for (ManifestEntry e : manifest.entries()) {
            if (e.segmentId() == seg.file().id() && e.baseOffset() == seg.header().baseOffset()) {
                return true;
            }
        }
        return false;
    }

    private SegmentHeader readHeader(SegmentFile f) throws IOException, CorruptionException {
        ByteBuffer head = ByteBuffer.allocate(SegmentHeader.LENGTH);
        try (FileChannel ch = FileChannel.open(f.log(), StandardOpenOption.READ)) {
            for (int n = 0; n >= 0 && head.hasRemaining(); ) {
                n = ch.read(head); // decode refuses a file shorter than a header as truncated
            }
        }
        return SegmentHeader.decode(head.flip(), new dev.felix.offload.log.format.CorruptionSite(shard, f.id(), 0));
    }

    /** A copy in the store did not match the local bytes after every attempt. */
    static final class VerificationFailedException extends Exception {
        private static final long serialVersionUID = 1L;

        final long segment;
        final int attempts;

        /** One attempt's mismatch; the upload loop catches it and tries again. */
        VerificationFailedException(String message) {
            this(-1, 0, message);
        }

        VerificationFailedException(long segment, int attempts, String message) {
            super(message);
            this.segment = segment;
            this.attempts = attempts;
        }
    }

    /** An upload's key holds other bytes; carried out of the steps to the shard's result. */
    static final class CollisionException extends Exception {
        private static final long serialVersionUID = 1L;
        final transient KeyCollision collision;

        CollisionException(KeyCollision collision) {
            super(collision.describe());
            this.collision = collision;
        }
    }

    /** An object's size and CRC32 as the store holds it. */
    private record Stored(long size, long crc32) {
    }

    /**
     * A create-only put. Answers what the put left, or null when the key already held exactly these
     * bytes (adopted, to be verified as usual); throws when it held anything else.
     */
    private PutResult putNoReplace(long segmentId, String key, UploadBody body, long crc)
            throws IOException, StoreException, CollisionException {
        dev.felix.offload.root.PendingKeys.add(dev.felix.offload.root.PendingKeys.rootOf(shardDir, shard), key); // before the put: an orphan it leaves is in the journal
        try {
            return store.put(key, body, PutOptions.defaults().withNoReplace().withCrc32(crc));
        } catch (PreconditionFailedException taken) {
            Stored found = stored(key);
            if (found.size() != body.length() || found.crc32() != crc) {
                throw new CollisionException(new KeyCollision(segmentId, key, found.size(), found.crc32(), body.length(), crc));
            }
            LOG.info("{}: {} already holds this upload's {} bytes (crc32 {}), a copy from an earlier attempt; "
                    + "adopting it", shard, key, found.size(), String.format("%08x", crc));
            return null;
        }
    }

    /** The stored size and CRC32 of an object: the server's checksum where it keeps one, else read in full. */
    private Stored stored(String key) throws StoreException {
        ObjectHead head = store.head(key);
        if (head.crc32().isPresent()) {
            return new Stored(head.size(), head.crc32().getAsLong());
        }
        return new Stored(head.size(), readBack(key, head.size()));
    }

    /** The CRC32 of the object's first {@code size} bytes, read back under the pass's bandwidth limit. */
    private long readBack(String key, long size) throws StoreException {
        return ReadBack.crc32(store, key, size, readBackChunk(), this::throttle, () -> false).orElseThrow();
    }

    /**
     * The one read of a segment before its upload: the record checks, the index and the digests the
     * store takes in the slices it asks for (none if it cannot say now: it then takes its own).
     */
    SegmentPreparation.Prepared prepare(Local seg) throws IOException {
        java.util.Optional<dev.felix.offload.store.DigestPlan> plan;
        try {
            plan = store.digestPlan(seg.size());
        } catch (StoreException e) {
            plan = java.util.Optional.empty(); // the put meets the failure itself
        }
        return SegmentPreparation.read(seg.file().log(), shard, seg.file().id(), SegmentWriter.DEFAULT_INDEX_SPACING_BYTES,
                plan);
    }

    /** Steps INDEX_UPLOADED to VERIFIED, with a bounded number of attempts on a verification mismatch. */
    SegmentUpload upload(Local seg, SegmentPreparation.Prepared prepared, long last)
            throws IOException, StoreException, VerificationFailedException, CollisionException {
        SegmentScan scan = prepared.scan();
        String key = keys.segmentKey(shard, seg.header().baseOffset(), seg.file().id());
        uploadIndex(seg, prepared, key);
        hook.reached(OffloadStep.INDEX_UPLOADED, shard, seg.file().id());

        long size = scan.validEnd();
        long crc = scan.validBytesCrc32();
        UploadBody file = UploadBody.ofFileRange(seg.file().log(), 0, size);
        if (prepared.digests() != null && prepared.digests().length() == size) {
            file = file.withDigests(prepared.digests()); // taken in the read that checked the records
        }
        String lastMismatch = null;
        for (int attempt = 1; attempt <= settings.uploadAttempts(); attempt++) {
            // Paced as the bytes go out, each attempt anew, so the limit holds from the first byte of the
            // pass (taking a whole segment's permits up front let the first segment go at full speed).
            UploadBody body = bandwidth == null ? file : file.paced(this::throttle);
            PutResult put = putNoReplace(seg.file().id(), key, body, crc);
            boolean adopted = put == null;
            hook.reached(OffloadStep.UPLOADED, shard, seg.file().id());
            String mismatch = null;
            CopyProofKind verifiedBy;
            try {
                verifiedBy = verify(key, size, crc, put);
            } catch (VerificationFailedException e) {
                verifiedBy = null;
                mismatch = e.getMessage();
            }
            if (mismatch != null && adopted) {
                // Not this upload's object after all (it changed since it was compared): never delete it.
                Stored found = stored(key);
                throw new CollisionException(new KeyCollision(seg.file().id(), key, found.size(), found.crc32(), size, crc));
            }
            if (mismatch == null) {
                progress.uploaded(size);
                return new SegmentUpload(seg.file().id(), seg.header().baseOffset(), last, size, crc, key, verifiedBy,
                        attempt);
            }
            lastMismatch = mismatch;
            LOG.warn("{}: verification of {} failed (attempt {} of {}): {}; deleting it and uploading again", shard, key,
                    attempt, settings.uploadAttempts(), mismatch);
            // This attempt's own upload, read from the local segment that still holds its records.
            store.delete(dev.felix.offload.copy.ObjectRelease.ownFailedUpload(key, seg.file().log()).key());
            backoff(attempt);
        }
        throw new VerificationFailedException(seg.file().id(), settings.uploadAttempts(),
                "segment " + seg.file().id() + " not recorded: the copy at " + key
                + " failed verification " + settings.uploadAttempts() + " times; last: " + lastMismatch);
    }

    /**
     * Uploads the sparse index. Its failures are not worth failing the segment for, but for a
     * collision: an index of other bytes beside the segment would steer readers wrongly.
     */
    private void uploadIndex(Local seg, SegmentPreparation.Prepared prepared, String segmentKey)
            throws CollisionException {
        String indexKey = SegmentKeys.indexKeyFor(segmentKey);
        try {
            // built in the read that checked the records; walked again only if that one had none
            SegmentIndex index = prepared.index() != null ? prepared.index() : ShardLog.rebuildIndexOf(seg.file(), shard,
                    prepared.scan().validEnd(), SegmentWriter.DEFAULT_INDEX_SPACING_BYTES);
            byte[] bytes = index.encode();
            CRC32 crc = new CRC32();
            crc.update(bytes);
            putNoReplace(seg.file().id(), indexKey, UploadBody.ofBytes(bytes), crc.getValue());
        } catch (ClaimGatedStore.NotSentException e) {
            // The claim check failed: the pass reports that once, and the segment is not sent either.
            LOG.debug("{}: index of segment {} not sent: {}", shard, seg.file().id(), e.getMessage());
        } catch (IOException | CorruptionException | StoreException e) {
            // Derived: a reader rebuilds a missing index from the segment, so this is not worth failing for.
            LOG.warn("{}: could not upload the index of segment {} ({}); readers will rebuild it", shard,
                    seg.file().id(), e.getMessage());
        }
    }

    /**
     * Proves the object holds {@code size} bytes with {@code crc}; answers how. {@code put} is what
     * this attempt's upload answered, null for an adopted object.
     */
    private CopyProofKind verify(String key, long size, long crc, PutResult put)
            throws StoreException, VerificationFailedException {
        VerifyMode mode = settings.verify();
        if (mode == VerifyMode.NONE) {
            return CopyProofKind.NONE;
        }
        if (mode == VerifyMode.AUTO || mode == VerifyMode.SERVER_CHECKSUM) {
            // The server computed the CRC32 of what it received and accepted it only as crc (or, in parts,
            // as part CRC32s the store checked crc against): nothing to ask or read back.
            if (mode == VerifyMode.AUTO && put != null && put.crc32Proven() && put.size() == size) {
                return CopyProofKind.SERVER_CHECKSUM;
            }
            // The server checked the MD5s taken in the same read as crc (the store checked crc against
            // that read) and answered the ETag they predict: nothing to ask or read back either.
            if (mode == VerifyMode.AUTO && put != null && put.contentMd5Proven() && put.size() == size) {
                return CopyProofKind.CONTENT_MD5;
            }
            // A stored CRC32 is the server's word only where it was seen to refuse a wrong one; a server
            // that keeps the header unchecked answers back what it was sent, whatever it stored.
            java.util.Set<StoreCapability> caps = store.capabilities();
            if (caps.contains(StoreCapability.CRC32_STORED) && caps.contains(StoreCapability.CRC32_VERIFIED_ON_PUT)) {
                ObjectHead head = store.head(key);
                if (head.crc32().isPresent()) {
                    // Named for who computed it: a server apart from this process, or (the filesystem store)
                    // this process's store code as it wrote the file, which proves the bytes it was handed.
                    CopyProofKind by = caps.contains(StoreCapability.CRC32_KEPT_BY_SERVER) ? CopyProofKind.SERVER_CHECKSUM
                            : CopyProofKind.STORE_CHECKSUM;
                    check(key, by.label().replace('-', ' '), head.size(), head.crc32().getAsLong(), size, crc);
                    return by;
                }
            }
            if (mode == VerifyMode.SERVER_CHECKSUM) {
                throw new IllegalStateException("verify=server-checksum, but " + store.describe()
                        + " returned no stored CRC32 it had checked for " + key + "; use auto or read-back");
            }
        }
        ObjectHead head = store.head(key);
        check(key, CopyProofKind.READ_BACK.label(), head.size(), readBack(key, head.size()), size, crc);
        return CopyProofKind.READ_BACK;
    }

    private static void check(String key, String how, long storedSize, long storedCrc, long size, long crc)
            throws VerificationFailedException {
        if (storedSize != size || storedCrc != crc) {
            throw new VerificationFailedException(String.format("%s of %s: store holds %d bytes with crc32 %08x, "
                    + "local valid bytes are %d with crc32 %08x", how, key, storedSize, storedCrc, size, crc));
        }
    }

    /**
     * A read-back's ranged GET: 8 MiB, or under a bandwidth limit a quarter second's worth (at least
     * 64 KiB), so the limit holds from the first read rather than after a whole chunk.
     */
    private int readBackChunk() {
        if (bandwidth == null) {
            return ReadBack.DEFAULT_CHUNK;
        }
        return (int) Math.max(UploadBody.PACE_SLICE, Math.min(ReadBack.DEFAULT_CHUNK, (long) (bandwidth.getRate() / 4)));
    }

    private void throttle(long bytes) {
        if (bandwidth == null) {
            return;
        }
        long left = bytes;
        while (left > 0) {
            int permits = (int) Math.min(left, Integer.MAX_VALUE);
            bandwidth.acquire(Math.max(permits, 1));
            left -= permits;
        }
    }

    private void backoff(int attempt) {
        long cap = settings.retryBackoff().toMillis() << Math.min(attempt - 1, 16);
        long sleep = ThreadLocalRandom.current().nextLong(cap + 1); // full jitter
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Step 6: unlinks, oldest first, the local segments local retention lets go, each only as
     * {@link LocalRelease} allows (its entry stands and has settled, matches the local valid bytes,
     * its copy is proven, and the manifest read again still holds it), or when it is an empty sealed
     * segment (no records, so nothing to lose). Stops at the first segment that may not go, so the
     * local log stays contiguous and still opens.
     *
     * @return when every segment kept only because its entry has not settled yet may go, or null
     */
    java.time.Instant unlink(ManifestStore manifests, List<Local> locals, Map<Long, Long> crcOfValidBytes,
                             CopyProofs proofs, List<Long> unlinked) throws IOException {
        Manifest manifest = manifests.manifest();
        int removable = removableCount(locals);
        LocalRelease rule = new LocalRelease(shard, store, proofs, settings.verify() != VerifyMode.NONE,
                settings.unlinkSettle(), clock);
        java.time.Instant settling = null;
        boolean any = false;
        try {
            for (int i = 0; i < removable; i++) {
                Local seg = locals.get(i);
                SegmentFile f = seg.file();
                ManifestEntry entry = LocalRelease.entryFor(manifest, f, seg.header().baseOffset());
                if (entry == null && settling == null && rule.isEmptySealed(f, locals.get(i + 1).file())) {
                    // Holds no record, so nothing to copy and nothing to lose: it goes once those below it went.
                    if (!LocalRelease.releaseEmpty(f)) {
                        break;
                    }
                    unlinked.add(f.id());
                    any = true;
                    LOG.info("{}: removed empty sealed segment {} (no records)", shard, f.id());
                    hook.reached(OffloadStep.UNLINKED, shard, f.id());
                    continue;
                }
                Long crc = crcOfValidBytes.get(f.id());
                LocalRelease.Decision decision = rule.decide(f, entry, manifest,
                        crc == null ? OptionalLong.empty() : OptionalLong.of(crc));
                if (decision.finding() != null) {
                    LOG.warn("{}: {}", shard, decision.finding().detail());
                }
                if (decision instanceof LocalRelease.Decision.Keep keep) {
                    if (keep.reason() == LocalRelease.KeptReason.SETTLING) {
                        // The ones above are still proven now (a later pass then only waits), never unlinked
                        // before this one: the local log stays contiguous.
                        settling = settling == null || keep.until().isAfter(settling) ? keep.until() : settling;
                        continue;
                    }
                    if (keep.reason() != LocalRelease.KeptReason.NO_ENTRY) {
                        LOG.info("{}: keeping segment {} locally: {}", shard, f.id(), keep.detail());
                    }
                    break;
                }
                if (settling != null) {
                    continue; // an older one is settling: this one goes after it
                }
                if (!LocalRelease.release(f, manifests)) {
                    break; // the broker removed it meanwhile
                }
                unlinked.add(f.id());
                any = true;
                hook.reached(OffloadStep.UNLINKED, shard, f.id());
            }
        } finally {
            if (any) {
                DurableFiles.fsyncDirectory(shardDir);
            }
        }
        return settling;
    }

    /**
     * Step 6 alone, for a shard whose recorded entries were settling when its pass ended: reads the
     * manifest and the directory as they are now and unlinks what {@link #unlink} lets go. A manifest
     * the broker replaced meanwhile ends it quietly (nothing is unlinked on a stale reading; the next
     * pass takes the shard up).
     */
    List<Long> releaseSettled() throws IOException {
        List<Long> unlinked = new ArrayList<>();
        ManifestStore manifests;
        try {
            manifests = ManifestStore.open(shardDir);
        } catch (CorruptionException e) {
            return unlinked;
        }
        List<Local> locals = new ArrayList<>();
        for (SegmentFile f : SegmentFile.list(shardDir)) {
            try {
                locals.add(new Local(f, readHeader(f), Files.size(f.log())));
            } catch (CorruptionException | NoSuchFileException e) {
                return unlinked; // the pass reported it; nothing is unlinked past what cannot be read
            }
        }
        try {
            unlink(manifests, locals, Map.of(), CopyProofs.read(shardDir, clock), unlinked);
        } catch (ManifestChangedException changed) {
            LOG.info("{}: the broker changed offload.manifest before its settled segments could go; the next pass "
                    + "takes the shard up", shard);
        }
        return unlinked;
    }

    void recordProofs(CopyProofs proofs, Map<ManifestEntry, String> how, Manifest manifest) {
        try {
            proofs.recorded(how, manifest);
        } catch (IOException e) {
            // Derived: a proof not written only means the copy is proven again before its segment goes.
            LOG.warn("{}: could not write {} ({}); the copies of segments {} will be proven again", shard,
                    CopyProofs.FILE_NAME, e.getMessage(), how.keySet().stream().map(ManifestEntry::segmentId).toList());
        }
    }

    /** How many of the oldest segments local retention lets go (never the newest). */
    private int removableCount(List<Local> locals) {
        return settings.localRetention().removable(locals.stream().mapToLong(Local::size).toArray());
    }
}
