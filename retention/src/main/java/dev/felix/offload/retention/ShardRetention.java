package dev.felix.offload.retention;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectDeleter;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.copy.LocalRelease;
import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.copy.LargestTimestamps;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Retention of one shard: local retention, then remote retention. The caller holds the root's
 * {@link dev.felix.offload.root.RootLock}, so no offload pass changes the manifest meanwhile.
 *
 * <h2>Local retention</h2>
 * Walks the sealed segments oldest first and unlinks each one that is past a local limit
 * ({@link RetentionSettings#effectiveLocalBytes()}: the data files' bytes, active segment included,
 * are above it; {@link RetentionSettings#effectiveLocalMs()}: its largest record timestamp, from a scan
 * of its record headers, is older than now minus the limit), but only when the manifest has its entry
 * and {@link #decideRemoval} lets it go: the local valid bytes match the entry ({@link LocalCopyCheck})
 * and its copy is proven, by the proof the offload pass wrote at upload ({@link CopyProofs}) or else
 * now ({@link CopyProver}: the server's kept CRC32 where it checked one at upload, else a read-back),
 * as for an entry recorded under {@code --verify none}; or the segment is damaged and its copy
 * re-verifies against the entry now. A copy that does not prove keeps the segment and is reported.
 * A sealed segment without a record has no entry and goes as soon as those below it went (it holds
 * nothing to lose, and must not hold the later ones back). It stops at the first segment that may not go, so the local log stays
 * contiguous and still opens, and never touches the newest (active) segment. Without manifest
 * entries (offload off) it removes nothing.
 *
 * <h2>Remote retention</h2>
 * Walks the manifest's entries oldest first and expires each one past a total limit
 * ({@link RetentionSettings#retentionBytes()}: the shard's bytes, remote entries plus local
 * segments without an entry, are above it; {@link RetentionSettings#retentionMs()}: its largest
 * record timestamp, from {@link LargestTimestamps}, is older than now minus the limit; the manifest's
 * {@code newest} is the last record's, which a clock that stepped back leaves older). It stops at
 * the first entry that stays, and at an entry whose segment is still on local disk: dropping that entry would have the next offload
 * upload the segment again. Both passes also stop at a segment whose largest timestamp lies ahead of
 * the clock, and report it ({@link RetentionProblem}), as they report damaged and mismatched local
 * segments. Then, in this order:
 * <ol>
 *   <li>the manifest without the expiring entries is saved (durable, atomic);</li>
 *   <li>their objects, segment and index, are deleted in batches.</li>
 * </ol>
 * A crash or store failure between or during these leaves objects no manifest names (orphans, for
 * the sweep), never an entry naming a deleted object. Only objects {@link KeyOwnership} lets the
 * shard delete are deleted: an expired entry naming a key outside the shard's prefix (a copied
 * shard directory's) or one another live shard names leaves the manifest, but its object stays.
 */
public final class ShardRetention {

    private static final Logger LOG = LoggerFactory.getLogger(ShardRetention.class);

    private final Path shardDir;
    private final String shard;
    private final ObjectDeleter store;
    private final RetentionSettings settings;
    private final Clock clock;
    private final RetentionHook hook;
    private final int deleteBatchSize;
    private final KeyOwnership ownership;
    private final LiveKeys live;
    /** Where copies are re-proven and largest timestamps rebuilt; null when the store only deletes. */
    private final ObjectStore fetcher;
    /** Where expired keys are recorded before their entries leave the manifest; null: not recorded. */
    private ExpiryJournal journal;
    /** How long an entry stands before its local segment may go. */
    private java.time.Duration unlinkSettle = LocalRelease.DEFAULT_SETTLE;
    /** What the current attempt met that an operator must see; reset when the shard is taken up again. */
    private final List<RetentionProblem> problems = new ArrayList<>();

    /**
     * A retention that only deletes from the store: a local segment whose copy must be re-proven is
     * kept, and largest timestamps are not rebuilt from objects.
     *
     * @param store           where expired objects are deleted
     * @param clock           what "now" is for the time limits
     * @param deleteBatchSize keys per {@link ObjectDeleter#deleteAll} call
     * @param ownership       which keys the shard may delete
     * @param live            what the root's live manifests name, read under the root's lock
     */
    public ShardRetention(Path shardDir, ObjectDeleter store, RetentionSettings settings, Clock clock,
                          RetentionHook hook, int deleteBatchSize, KeyOwnership ownership, LiveKeys live) {
        this(nameOf(shardDir), shardDir, store, null, settings, clock, hook, deleteBatchSize, ownership, live);
    }

    /** As above, with a store that also reads: copies are re-proven and largest timestamps rebuilt from it. */
    public ShardRetention(Path shardDir, ObjectStore store, RetentionSettings settings, Clock clock,
                          RetentionHook hook, int deleteBatchSize, KeyOwnership ownership, LiveKeys live) {
        this(nameOf(shardDir), shardDir, store, store, settings, clock, hook, deleteBatchSize, ownership, live);
    }

    /**
     * As above, for the shard named {@code shard}: its path under the data root, as
     * {@link dev.felix.offload.log.DataRoot.Shard#name()} gives it, which results, logs and the key
     * ownership rule carry. The store only deletes.
     */
    public ShardRetention(String shard, Path shardDir, ObjectDeleter store, RetentionSettings settings, Clock clock,
                          RetentionHook hook, int deleteBatchSize, KeyOwnership ownership, LiveKeys live) {
        this(shard, shardDir, store, null, settings, clock, hook, deleteBatchSize, ownership, live);
    }

    /** As above, with a store that also reads. */
    public ShardRetention(String shard, Path shardDir, ObjectStore store, RetentionSettings settings, Clock clock,
                          RetentionHook hook, int deleteBatchSize, KeyOwnership ownership, LiveKeys live) {
        this(shard, shardDir, store, store, settings, clock, hook, deleteBatchSize, ownership, live);
    }

    /** @param fetcher where copies are re-proven and largest timestamps rebuilt, or null where the store only deletes */
    private ShardRetention(String shard, Path shardDir, ObjectDeleter store, ObjectStore fetcher,
                           RetentionSettings settings, Clock clock, RetentionHook hook, int deleteBatchSize,
                           KeyOwnership ownership, LiveKeys live) {
        this.ownership = Objects.requireNonNull(ownership, "ownership");
        this.live = Objects.requireNonNull(live, "live");
        this.shardDir = Objects.requireNonNull(shardDir, "shardDir");
        this.shard = Objects.requireNonNull(shard, "shard");
        this.store = Objects.requireNonNull(store, "store");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.hook = Objects.requireNonNull(hook, "hook");
        this.fetcher = fetcher;
        if (deleteBatchSize < 1 || deleteBatchSize > 1000) {
            throw new IllegalArgumentException("delete batch size must be in [1, 1000], got " + deleteBatchSize);
        }
        this.deleteBatchSize = deleteBatchSize;
    }

    /** A shard handed over as a directory alone is named as the data root names it (groups/, dead-letters/). */
    private static String nameOf(Path shardDir) {
        return dev.felix.offload.log.DataRoot.Shard.nameOf(shardDir);
    }

    /** This retention recording the keys it expires in {@code journal} before their entries leave the manifest. */
    ShardRetention journaling(ExpiryJournal journal) {
        this.journal = journal;
        return this;
    }

    /** This retention with {@code settle} as the time an entry stands before its segment may go. */
    public ShardRetention settling(java.time.Duration settle) {
        this.unlinkSettle = Objects.requireNonNull(settle, "settle");
        return this;
    }

    /**
     * Runs local then remote retention. Failures (an unreadable manifest, I/O and store errors) are
     * reported in the result, with what was done before them.
     */
    public ShardRetentionResult run(StopSignal stop) {
        LocalRetentionResult local = LocalRetentionResult.nothing(0);
        RemoteRetentionResult remote = RemoteRetentionResult.nothing(0);
        ManifestStore manifests;
        try {
            manifests = ManifestStore.open(shardDir);
        } catch (CorruptionException e) {
            LOG.error("{}: manifest unreadable, retention skipped: {}", shard, e.getMessage());
            return new ShardRetentionResult(shard, settings, local, remote, "manifest unreadable, nothing done: "
                    + e.getMessage());
        } catch (IOException e) {
            return new ShardRetentionResult(shard, settings, local, remote, "cannot read the manifest: " + e);
        }
        List<Long> removedBefore = new ArrayList<>();
        long removedBytesBefore = 0;
        for (int restarts = 0; ; restarts++) {
            // What a stale attempt met is dropped but for the segments it removed, which stay removed.
            List<Long> gone = removedBefore;
            problems.removeIf(p -> !gone.contains(p.segment()));
            try {
                local = applyLocal(manifests, stop);
                local = new LocalRetentionResult(concat(removedBefore, local.removedSegments()),
                        removedBytesBefore + local.removedBytes(), local.localBytesAfter(), local.blockedBy());
                if (stop.stopRequested()) {
                    return new ShardRetentionResult(shard, settings, local, remote, null, problems);
                }
                remote = applyRemote(manifests, stop);
                String failure = remote.deleteFailed() ? remote.objectsLeft().size()
                        + " expired objects not deleted (left to the orphan sweep): " + remote.deleteProblem().label() : null;
                return new ShardRetentionResult(shard, settings, local, remote, failure, problems);
            } catch (ManifestChangedException changed) {
                // The broker truncated or reset the shard: what this pass held of the manifest is stale.
                // Nothing was saved or deleted on its strength; take the shard up again from the new one.
                LOG.warn("{}: the broker changed offload.manifest during retention; taking the shard up again", shard);
                removedBefore = local.removedSegments();
                removedBytesBefore = local.removedBytes();
                try {
                    manifests.reload();
                } catch (CorruptionException e) {
                    return new ShardRetentionResult(shard, settings, local, remote, "manifest changed by the broker and "
                            + "no longer decodes, nothing more done: " + e.getMessage());
                } catch (IOException e) {
                    return new ShardRetentionResult(shard, settings, local, remote, "cannot read the manifest: " + e);
                }
                if (restarts + 1 >= MAX_MANIFEST_RESTARTS) {
                    return new ShardRetentionResult(shard, settings, local, remote, "the broker changed offload.manifest "
                            + (restarts + 1) + " times during retention; the next pass takes the shard up from it");
                }
            } catch (IOException e) {
                LOG.error("{}: retention failed", shard, e);
                return new ShardRetentionResult(shard, settings, local, remote, "failed: " + e, problems);
            }
        }
    }

    /** How often one pass takes a shard up again after the broker changed its manifest under it. */
    static final int MAX_MANIFEST_RESTARTS = 3;

    private static List<Long> concat(List<Long> a, List<Long> b) {
        List<Long> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    /** Local retention alone; see the class comment. */
    public LocalRetentionResult applyLocal(ManifestStore manifests, StopSignal stop) throws IOException {
        List<SegmentFile> files = SegmentFile.list(shardDir);
        Map<Long, Long> sizes = new HashMap<>();
        long localBytes = 0;
        for (SegmentFile f : files) {
            long size = sizeOf(f);
            sizes.put(f.id(), size);
            localBytes += size;
        }
        long limitBytes = settings.effectiveLocalBytes();
        long limitMs = settings.effectiveLocalMs();
        if (files.size() < 2 || (limitBytes == RetentionSettings.UNLIMITED && limitMs == RetentionSettings.UNLIMITED)) {
            return LocalRetentionResult.nothing(localBytes);
        }
        Map<Long, ManifestEntry> entries = new HashMap<>();
        for (ManifestEntry e : manifests.manifest().entries()) {
            entries.put(e.segmentId(), e);
        }
        long cutoff = cutoffMicros(limitMs);
        // Segments below this index are past the byte limit once those before them have gone; the walk
        // reaches an index only when every one before it went.
        int pastBytes = (limitBytes == RetentionSettings.UNLIMITED ? new LocalRetention.KeepAll()
                : new LocalRetention.KeepBytes(limitBytes)).removable(files.stream().mapToLong(f -> sizes.get(f.id())).toArray());
        LocalRelease rule = new LocalRelease(shard, fetcher, CopyProofs.read(shardDir, clock), true, unlinkSettle, clock);
        List<Long> removed = new ArrayList<>();
        long removedBytes = 0;
        RetentionBlock blockedBy = null;
        boolean settling = false;
        try {
            for (int i = 0; i < files.size() - 1; i++) {
                if (stop.stopRequested()) {
                    break;
                }
                SegmentFile f = files.get(i);
                boolean overBytes = i < pastBytes;
                ManifestEntry entry = entries.get(f.id());
                if (entry == null && !settling && rule.isEmptySealed(f, files.get(i + 1))) {
                    // No records: nothing was copied and nothing is lost. It goes once those below it went,
                    // whatever the limits, so it never stops the segments above it from going.
                    if (!LocalRelease.releaseEmpty(f)) {
                        break;
                    }
                    long size = sizes.get(f.id());
                    localBytes -= size;
                    removedBytes += size;
                    removed.add(f.id());
                    LOG.info("{}: removed empty sealed segment {} (no records)", shard, f.id());
                    hook.reached(RetentionStep.LOCAL_SEGMENT_REMOVED, shard, Long.toUnsignedString(f.id()));
                    continue;
                }
                if (entry == null) {
                    if (overBytes) {
                        blockedBy = new RetentionBlock.NotOffloaded(f.id());
                    }
                    break;
                }
                boolean overTime = false;
                if (!overBytes && cutoff >= 0) {
                    long largest = localLargestTimestamp(f, entry);
                    if (largest != -1 && Long.compareUnsigned(largest, nowMicros()) > 0) {
                        futureTimestamp(f.id(), largest);
                        break;
                    }
                    overTime = largest != -1 && Long.compareUnsigned(largest, cutoff) < 0;
                }
                if (!overBytes && !overTime) {
                    break;
                }
                LocalRelease.Decision decision = rule.decide(f, entry, manifests.manifest(), java.util.OptionalLong.empty());
                if (decision.finding() != null) {
                    RetentionProblem problem = problemOf(decision.finding());
                    problems.add(problem);
                    LOG.error("{}: {}", shard, problem.describe());
                }
                if (decision instanceof LocalRelease.Decision.Keep keep) {
                    if (keep.reason() == LocalRelease.KeptReason.SETTLING) {
                        // Those above are still proven now, so the next pass only waits; none goes before this one.
                        blockedBy = blockedBy == null ? new RetentionBlock.Kept(f.id(), keep.reason(), keep.detail()) : blockedBy;
                        settling = true;
                        continue;
                    }
                    LOG.warn("{}: keeping segment {} locally: {}", shard, f.id(), keep.detail());
                    blockedBy = blockedBy == null ? new RetentionBlock.Kept(f.id(), keep.reason(), keep.detail()) : blockedBy;
                    break;
                }
                if (settling) {
                    continue; // an older one is settling: this one goes after it
                }
                if (!LocalRelease.release(f, manifests)) {
                    break; // the broker removed it meanwhile; the next pass sees the directory as it is then
                }
                long size = sizes.get(f.id());
                localBytes -= size;
                removedBytes += size;
                removed.add(f.id());
                LOG.info("{}: removed local segment {} ({} bytes, past {}), its copy is {}", shard, f.id(), size,
                        overBytes ? RetentionSettings.LOCAL_RETENTION_BYTES : RetentionSettings.LOCAL_RETENTION_MS,
                        entry.objectKey());
                hook.reached(RetentionStep.LOCAL_SEGMENT_REMOVED, shard, Long.toUnsignedString(f.id()));
            }
        } finally {
            if (!removed.isEmpty()) {
                DurableFiles.fsyncDirectory(shardDir);
            }
        }
        return new LocalRetentionResult(removed, removedBytes, localBytes, Optional.ofNullable(blockedBy));
    }

    /** What the local-release rule found, as this pass reports it. */
    private RetentionProblem problemOf(LocalRelease.Finding finding) {
        RetentionProblem.Kind kind = switch (finding.kind()) {
            case LOCAL_DAMAGED -> RetentionProblem.Kind.LOCAL_DAMAGED;
            case LOCAL_MISMATCH -> RetentionProblem.Kind.LOCAL_MISMATCH;
            case COPY_UNPROVEN -> RetentionProblem.Kind.COPY_UNPROVEN;
        };
        return new RetentionProblem(kind, shard, finding.segment(), finding.byteAt(), finding.detail());
    }

    /** Remote retention alone; see the class comment. */
    public RemoteRetentionResult applyRemote(ManifestStore manifests, StopSignal stop) throws IOException {
        Manifest manifest = manifests.manifest();
        List<SegmentFile> files = SegmentFile.list(shardDir);
        Set<Long> localIds = new HashSet<>();
        Set<Long> entryIds = new HashSet<>();
        for (ManifestEntry e : manifest.entries()) {
            entryIds.add(e.segmentId());
        }
        long total = manifest.totals().bytes();
        for (SegmentFile f : files) {
            localIds.add(f.id());
            if (!entryIds.contains(f.id())) {
                total += sizeOf(f);
            }
        }
        long limitBytes = settings.retentionBytes();
        long cutoff = cutoffMicros(settings.retentionMs());
        if (limitBytes == RetentionSettings.UNLIMITED && cutoff < 0) {
            return RemoteRetentionResult.nothing(total);
        }
        LargestTimestamps side = LargestTimestamps.load(shardDir);
        List<ManifestEntry> expiring = new ArrayList<>();
        long expiringBytes = 0;
        RetentionBlock blockedBy = null;
        for (ManifestEntry e : manifest.entries()) {
            boolean overBytes = limitBytes != RetentionSettings.UNLIMITED && total - expiringBytes > limitBytes;
            boolean overTime = false;
            if (!overBytes && cutoff >= 0) {
                long largest;
                try {
                    largest = remoteLargestTimestamp(e, side, localIds.contains(e.segmentId()));
                } catch (StoreException | CorruptionException | IOException unknown) {
                    blockedBy = new RetentionBlock.TimestampUnknown(e.segmentId(), unknown.getMessage());
                    LOG.warn("{}: {}", shard, blockedBy.label());
                    break;
                }
                if (largest != -1 && Long.compareUnsigned(largest, nowMicros()) > 0) {
                    futureTimestamp(e.segmentId(), largest);
                    break;
                }
                overTime = largest != -1 && Long.compareUnsigned(largest, cutoff) < 0;
            }
            if (!overBytes && !overTime) {
                break;
            }
            if (localIds.contains(e.segmentId())) {
                blockedBy = new RetentionBlock.StillLocal(e.segmentId());
                break;
            }
            expiring.add(e);
            expiringBytes += e.sizeBytes();
        }
        if (expiring.isEmpty()) {
            saveLargestTimestamps(side, manifest);
            return new RemoteRetentionResult(List.of(), 0, 0, List.of(), null, total, Optional.ofNullable(blockedBy));
        }
        if (!live.unreadable().isEmpty()) {
            // Checked before the manifest changes: what an unreadable manifest needs is unknown.
            return new RemoteRetentionResult(List.of(), 0, 0, List.of(), null, total,
                    Optional.of(new RetentionBlock.LiveManifestUnreadable(expiring.size(), live.unreadable())));
        }
        ManifestEntry last = expiring.get(expiring.size() - 1);
        Manifest next = manifest.withoutEntriesThrough(last.lastOffset());
        if (next.size() != manifest.size() - expiring.size()) {
            throw new IllegalStateException(shard + ": dropping " + expiring.size() + " entries through offset "
                    + Long.toUnsignedString(last.lastOffset()) + " left " + next.size() + " of " + manifest.size());
        }
        List<Long> ids = new ArrayList<>(expiring.size());
        List<ObjectRelease.Verdict> verdicts = new ArrayList<>(expiring.size() * 2);
        ObjectRelease release = new ObjectRelease(ownership, live);
        for (ManifestEntry e : expiring) {
            ids.add(e.segmentId());
            for (String key : BatchDeletes.objectsOf(e)) {
                verdicts.add(release.expired(shard, key, e, manifest, next));
            }
        }
        BatchDeletes.Split split = BatchDeletes.split(verdicts);
        if (journal != null) {
            // Before the save: once the entries are gone from the manifest, this is what says why their objects may go.
            journal.add(shard, split.deletable().stream().map(ObjectRelease.Permit::key).toList());
        }
        manifests.save(next);
        saveLargestTimestamps(side, next);
        LOG.info("{}: expired {} remote segments ({} bytes, offsets {}..{}) from the manifest", shard, expiring.size(),
                expiringBytes, Long.toUnsignedString(expiring.get(0).baseOffset()), Long.toUnsignedString(last.lastOffset()));
        hook.reached(RetentionStep.MANIFEST_SAVED, shard, expiring.size() + " entries");
        if (!split.kept().isEmpty()) {
            LOG.warn("{}: {} objects of expired entries stay, not this shard's to delete ({})", shard,
                    split.kept().size(), BatchDeletes.describe(split.kept()));
        }
        BatchDeletes.Outcome outcome = BatchDeletes.delete(store, split.deletable(), deleteBatchSize, stop, hook,
                RetentionStep.OBJECT_BATCH_DELETED, shard);
        if (journal != null) {
            journal.remove(outcome.deleted());
        }
        if (!outcome.left().isEmpty()) {
            LOG.warn("{}: {} expired objects not deleted ({}); the next retention pass deletes them", shard,
                    outcome.left().size(), outcome.problem());
        }
        return new RemoteRetentionResult(ids, expiringBytes, outcome.deleted().size(), outcome.left(),
                outcome.left().isEmpty() ? null : outcome.shortfall(), total - expiringBytes, Optional.ofNullable(blockedBy), split.refusals());
    }

    /**
     * The largest record timestamp of local segment {@code f}, from a header scan; for a damaged
     * segment (whose valid prefix only gives a lower bound) from the side file, else -1 (unknown).
     */
    private long localLargestTimestamp(SegmentFile f, ManifestEntry entry) throws IOException {
        SegmentScan scan;
        try {
            scan = SegmentScan.of(f.log(), shard, f.id(), ScanDepth.HEADERS);
        } catch (NoSuchFileException gone) {
            return -1;
        }
        if (scan.isClean()) {
            return scan.largestTimestamp();
        }
        return LargestTimestamps.load(shardDir).of(entry).orElse(-1);
    }

    /**
     * The largest record timestamp of {@code entry}'s segment: from the side file, else from the
     * local segment when it is still here and scans clean, else rebuilt from the object.
     */
    private long remoteLargestTimestamp(ManifestEntry entry, LargestTimestamps side, boolean stillLocal)
            throws IOException, StoreException, CorruptionException {
        java.util.OptionalLong known = side.of(entry);
        if (known.isPresent()) {
            return known.getAsLong();
        }
        if (stillLocal) {
            SegmentFile f = SegmentFile.in(shardDir, entry.segmentId());
            try {
                SegmentScan scan = SegmentScan.of(f.log(), shard, f.id(), ScanDepth.HEADERS);
                if (scan.isClean() && scan.nextOffset() - 1 == entry.lastOffset()) {
                    return scan.largestTimestamp();
                }
            } catch (NoSuchFileException gone) {
                // removed meanwhile: rebuilt from the object below
            }
        }
        if (fetcher == null) {
            throw new IOException("the store given cannot read objects");
        }
        return side.ofOrRebuild(entry, shard, fetcher);
    }

    private void saveLargestTimestamps(LargestTimestamps side, Manifest manifest) {
        try {
            side.save(manifest.entries());
        } catch (IOException e) {
            LOG.warn("{}: {} not written ({}); it is rebuilt when needed", shard, LargestTimestamps.FILE_NAME,
                    e.toString());
        }
    }

    /**
     * Reports a segment whose largest timestamp is ahead of the clock. It is not past the time limit,
     * so it is no block (nothing past a limit stays), but it holds time retention back.
     */
    private void futureTimestamp(long segment, long largest) {
        if (problems.stream().anyMatch(p -> p.kind() == RetentionProblem.Kind.FUTURE_TIMESTAMP && p.segment() == segment)) {
            return; // local retention met it already
        }
        String why = "segment " + Long.toUnsignedString(segment) + " holds a record timestamp ("
                + Long.toUnsignedString(largest) + " micros) ahead of the clock, so time retention keeps it and "
                + "those after it until the clock passes it";
        problems.add(new RetentionProblem(RetentionProblem.Kind.FUTURE_TIMESTAMP, shard, segment, -1, why));
        LOG.warn("{}: {}", shard, why);
    }

    private long nowMicros() {
        Instant now = clock.instant();
        return Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000L), now.getNano() / 1000);
    }

    private static long sizeOf(SegmentFile f) throws IOException {
        try {
            return Files.size(f.log());
        } catch (NoSuchFileException gone) {
            return 0; // the broker removed it meanwhile
        }
    }

    /** The timestamp (micros) below which a segment is past {@code limitMs}, or -1 when unlimited or before 1970. */
    private long cutoffMicros(long limitMs) {
        if (limitMs == RetentionSettings.UNLIMITED) {
            return -1;
        }
        long nowMicros = nowMicros();
        long limitMicros = limitMs > Long.MAX_VALUE / 1000 ? Long.MAX_VALUE : limitMs * 1000;
        long cutoff = nowMicros - limitMicros;
        return cutoff < 0 ? -1 : cutoff;
    }
}
