package dev.felix.offload.pass;

import dev.felix.offload.copy.VerifyMode;

import dev.felix.offload.copy.LocalRelease;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestChangedException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Step {@code UNLINKED} of one shard's offload: which local segments go, oldest first, each as
 * {@link LocalRelease} allows, the local log kept contiguous.
 */
final class ShardRelease {

    private static final Logger LOG = LoggerFactory.getLogger(ShardRelease.class);

    private final String shard;
    private final Path shardDir;
    private final ObjectStore store;
    private final OffloadSettings settings;
    private final StepHook hook;
    /** What "now" is for entries settling before their segments go. */
    private final Clock clock;

    ShardRelease(String shard, Path shardDir, ObjectStore store, OffloadSettings settings, StepHook hook, Clock clock) {
        this.shard = shard;
        this.shardDir = shardDir;
        this.store = store;
        this.settings = settings;
        this.hook = hook;
        this.clock = clock;
    }

    /** The shard's directory. */
    Path shardDir() {
        return shardDir;
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
    java.time.Instant unlink(ManifestStore manifests, List<LocalSegment> locals, Map<Long, Long> crcOfValidBytes,
                             CopyProofs proofs, List<Long> unlinked) throws IOException {
        Manifest manifest = manifests.manifest();
        int removable = removableCount(locals);
        LocalRelease rule = new LocalRelease(shard, store, proofs, settings.verify() != VerifyMode.NONE,
                settings.unlinkSettle(), clock);
        java.time.Instant settling = null;
        boolean any = false;
        try {
            for (int i = 0; i < removable; i++) {
                LocalSegment seg = locals.get(i);
                SegmentFile f = seg.file();
                ManifestEntry entry = LocalRelease.entryFor(manifest, f, seg.header().baseOffset());
                if (entry == null && rule.isEmptySealed(f, locals.get(i + 1).file())) {
                    // Holds no record, so nothing to copy and nothing to lose: it goes once those below it went.
                    if (settling != null) {
                        continue; // after the older ones settling; the younger ones' entries may settle later still
                    }
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

    /** What {@link #releaseSettled} unlinked, and when the entries still settling may go (null: none). */
    record Settled(List<Long> unlinked, java.time.Instant stillSettling) {
    }

    /**
     * Step 6 alone, for a shard whose recorded entries were settling when its pass ended: reads the
     * manifest and the directory as they are now and unlinks what {@link #unlink} lets go. A manifest
     * the broker replaced meanwhile ends it quietly (nothing is unlinked on a stale reading; the next
     * pass takes the shard up).
     */
    Settled releaseSettled() throws IOException {
        List<Long> unlinked = new ArrayList<>();
        ManifestStore manifests;
        try {
            manifests = ManifestStore.open(shardDir);
        } catch (CorruptionException e) {
            return new Settled(unlinked, null);
        }
        List<LocalSegment> locals = new ArrayList<>();
        for (SegmentFile f : SegmentFile.list(shardDir)) {
            try {
                locals.add(LocalSegment.read(f, shard));
            } catch (CorruptionException | NoSuchFileException e) {
                return new Settled(unlinked, null); // the pass reported it; nothing is unlinked past what cannot be read
            }
        }
        try {
            return new Settled(unlinked, unlink(manifests, locals, Map.of(), CopyProofs.read(shardDir, clock), unlinked));
        } catch (ManifestChangedException changed) {
            LOG.info("{}: the broker changed offload.manifest before its settled segments could go; the next pass "
                    + "takes the shard up", shard);
            return new Settled(unlinked, null);
        }
    }

    /** How many of the oldest segments local retention lets go (never the newest). */
    private int removableCount(List<LocalSegment> locals) {
        return settings.localRetention().removable(locals.stream().mapToLong(LocalSegment::size).toArray());
    }
}
