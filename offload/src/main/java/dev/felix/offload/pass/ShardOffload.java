package dev.felix.offload.pass;

import dev.felix.offload.root.SegmentKeys;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * One shard's part of an offload pass. Each sealed segment goes through these steps, in order:
 *
 * <pre>
 *   SELECTED ──full scan ok──▶ VALIDATED ──segment put──▶ UPLOADED ──verify──▶ VERIFIED? ──yes──▶ INDEX_UPLOADED
 *      │                          │                                              │               (index put,
 *      │ not sealed, above the    │ corrupt: the shard is reported               │ mismatch:      best effort;
 *      │                          │                                              │                 none <= 4 MiB)
 *      │ commit offset, or in     │ with the site; nothing is                    ▼                   │
 *      │ the manifest: skipped    │ uploaded; the pass goes on     delete the object and put          ▼
 *                                 ▼ with other shards              again (bounded)              RECORDED  ◀── commit point:
 *                                       ┌───────────────────────────────────────────────────────────┘   the manifest naming
 *                                       ▼                                                               it is durable
 *                                    UNLINKED  (oldest first, as local retention allows,
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

    private final Path shardDir;
    private final String shard;
    private final ObjectStore store;
    private final OffloadSettings settings;
    private final StepHook hook;
    /** Steps UPLOADED to INDEX_UPLOADED of each segment. */
    private final SegmentUploader uploader;
    private final OptionalLong commitOffset;
    private final java.util.function.BooleanSupplier stopRequested;
    /** The pass's uploads under way, shared by its shards; null: this shard's own, for one run. */
    private InFlightUploads uploads;
    private RecordGuard recordGuard = RecordGuard.NONE;
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
        this(dev.felix.offload.log.DataRoot.Shard.nameOf(shardDir), shardDir, store, keys, settings, hook, bandwidth, progress, commitOffset,
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
        this.settings = settings;
        this.hook = hook;
        this.uploader = new SegmentUploader(shard, shardDir, store, keys, settings, hook, bandwidth, progress);
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

    /** Asks {@code guard} before each manifest write that records copies (the node's lease, see NodeLease). */
    ShardOffload recordingAfter(RecordGuard guard) {
        this.recordGuard = java.util.Objects.requireNonNull(guard, "guard");
        return this;
    }

    /** This shard's offload with {@code clock} as "now" for entries settling; for tests. */
    public ShardOffload clockedBy(java.time.Clock clock) {
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        return this;
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
        List<LocalSegment> locals = new ArrayList<>(files.size());
        for (SegmentFile f : files) {
            try {
                locals.add(LocalSegment.read(f, shard));
            } catch (CorruptionException e) {
                return new ShardResult(shard, false, uploaded, unlinked, files.size() - 1,
                        "segment header unreadable: " + e.getMessage());
            }
        }
        if (uploads != null) {
            return new ShardPipeline(uploader, release(), commitOffset, stopRequested, manifests, locals, uploaded,
                    unlinked, uploads, recordGuard).run();
        }
        try (InFlightUploads own = InFlightUploads.of(settings)) {
            return new ShardPipeline(uploader, release(), commitOffset, stopRequested, manifests, locals, uploaded,
                    unlinked, own, recordGuard).run();
        }
    }

    private ShardRelease release() {
        return new ShardRelease(shard, shardDir, store, settings, hook, clock);
    }

    /**
     * Step 6 alone, for a shard whose recorded entries were settling when its pass ended: reads the
     * manifest and the directory as they are now and unlinks what the pass's step 6 lets go. A
     * manifest the broker replaced meanwhile ends it quietly (nothing is unlinked on a stale reading;
     * the next pass takes the shard up).
     */
    ShardRelease.Settled releaseSettled() throws IOException {
        return release().releaseSettled();
    }
}
