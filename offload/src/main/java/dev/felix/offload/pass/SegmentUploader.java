package dev.felix.offload.pass;

import dev.felix.offload.copy.VerifyMode;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.copy.CopyProofKind;
import dev.felix.offload.copy.ReadBack;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.root.SegmentKeys;
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
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

/**
 * One shard's segment uploads, steps {@code UPLOADED} to {@code INDEX_UPLOADED} of {@link OffloadStep}:
 * the one read that prepares a segment, its create-only put (adopting a key that already holds these
 * very bytes, refusing one that holds others as a {@link KeyCollision}), the proof of the copy as
 * {@link VerifyMode} asks, pacing under the pass's bandwidth limit, and the bounded attempts with
 * back-off after a mismatch. It records nothing and unlinks nothing: the shard's pipeline does, in order.
 *
 * <p>Safe to call from several upload threads at once: between calls it holds only the journal's
 * batches and what the shard's one listing showed absent ({@link ListedAbsence}), both thread-safe.
 */
final class SegmentUploader {

    private static final Logger LOG = LoggerFactory.getLogger(SegmentUploader.class);

    private final String shard;
    /** The shard's directory: what the upload step keeps on disk is found from it. */
    private final Path shardDir;
    private final ObjectStore store;
    private final SegmentKeys keys;
    private final OffloadSettings settings;
    private final StepHook hook;
    private final RateLimiter bandwidth;
    private final ProgressListener progress;
    /** The journal of pending keys, written for several segments at once. */
    private final JournalAhead journal;
    /** Keys the shard's listing showed absent, set once by the shard's thread before it hands out an upload. */
    private volatile ListedAbsence absence = ListedAbsence.NONE;

    /** @param bandwidth shared upload limiter in bytes per second, or null for none */
    SegmentUploader(String shard, Path shardDir, ObjectStore store, SegmentKeys keys, OffloadSettings settings,
                    StepHook hook,
                    RateLimiter bandwidth, ProgressListener progress) {
        this.shard = shard;
        this.shardDir = shardDir;
        this.store = store;
        this.keys = keys;
        this.settings = settings;
        this.hook = hook;
        this.bandwidth = bandwidth;
        this.progress = progress;
        this.journal = new JournalAhead(dev.felix.offload.root.PendingKeys.rootOf(shardDir, shard));
    }

    /**
     * Lists the shard's prefix once where that is cheaper than heading each of the {@code pending}
     * keys before its put ({@link ListedAbsence}); called by the shard's thread before its first upload.
     */
    void listShard(int pending, int manifestEntries) {
        absence = ListedAbsence.listIfWorthIt(store, shard, keys.shardPrefix(shard), pending, manifestEntries);
    }

    /** Whether {@code seg}'s keys are named for the journal already. */
    boolean journalCovers(LocalSegment seg) {
        return journal.covers(keyOf(seg));
    }

    /**
     * Names the keys of {@code upcoming} segments' uploads for the journal, to be written together
     * before the first of them is put: the segment key, and the index key where the segment may be
     * large enough for one (its valid bytes, known after its scan, decide; a key named for nothing
     * costs the orphan sweep one HEAD).
     */
    void nameForJournal(java.util.List<LocalSegment> upcoming) {
        java.util.List<String> named = new java.util.ArrayList<>();
        for (LocalSegment s : upcoming) {
            String key = keyOf(s);
            named.add(key);
            if (SegmentKeys.hasIndexObject(s.size())) {
                named.add(SegmentKeys.indexKeyFor(key));
            }
        }
        journal.name(named);
    }

    private String keyOf(LocalSegment seg) {
        return keys.segmentKey(shard, seg.header().baseOffset(), seg.file().id());
    }

    /** The shard's name, as its keys, logs and results carry it. */
    String shard() {
        return shard;
    }

    /** The hook told of each step a segment reaches. */
    StepHook hook() {
        return hook;
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
        var hold = store.requestHold(); // a pass whose node claim is refused writes nothing, the journal included
        if (hold.isPresent()) {
            hold.get().awaitRelease();
        }
        // before the put: an orphan it leaves is in the journal the orphan sweep works from
        journal.ensure(key);
        try {
            PutOptions options = absence.take(key) ? PutOptions.defaults().withNoReplaceListedAbsent()
                    : PutOptions.defaults().withNoReplace();
            return store.put(key, body, options.withCrc32(crc));
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
    SegmentPreparation.Prepared prepare(LocalSegment seg) throws IOException {
        java.util.Optional<dev.felix.offload.store.DigestPlan> plan;
        try {
            plan = store.digestPlan(seg.size());
        } catch (StoreException e) {
            plan = java.util.Optional.empty(); // the put meets the failure itself
        }
        return SegmentPreparation.read(seg.file().log(), shard, seg.file().id(), SegmentWriter.DEFAULT_INDEX_SPACING_BYTES,
                plan);
    }

    /**
     * Steps UPLOADED to INDEX_UPLOADED, with a bounded number of attempts on a verification mismatch.
     * The index goes last: a stop or crash that cuts the steps short then leaves either nothing, or a
     * proven copy whose index a reader can rebuild, never an index beside no segment. A segment too
     * small for an index object ({@link SegmentKeys#hasIndexObject}) passes INDEX_UPLOADED with none.
     */
    SegmentUpload upload(LocalSegment seg, SegmentPreparation.Prepared prepared, long last)
            throws IOException, StoreException, VerificationFailedException, CollisionException {
        SegmentScan scan = prepared.scan();
        String key = keyOf(seg);

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
                hook.reached(OffloadStep.VERIFIED, shard, seg.file().id());
                if (SegmentKeys.hasIndexObject(size)) {
                    uploadIndex(seg, prepared, key);
                }
                hook.reached(OffloadStep.INDEX_UPLOADED, shard, seg.file().id());
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
    private void uploadIndex(LocalSegment seg, SegmentPreparation.Prepared prepared, String segmentKey)
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
        } catch (dev.felix.offload.store.StoreStoppedException e) {
            // The process is stopping: the proven copy is recorded without its index, as it would be after any failure here.
            LOG.info("{}: index of segment {} not sent: the process is stopping; readers will rebuild it", shard,
                    seg.file().id());
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
}
