package dev.felix.offload.scrub;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.retention.HeldShard;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.retention.OrphanSweepReport;
import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.schedule.DataRootGuard;
import dev.felix.offload.scrub.Scrub.Anomaly;
import dev.felix.offload.scrub.Scrub.Kind;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;

import java.io.IOException;
import java.time.Clock;
import java.util.List;

/**
 * Scrub's listing of what the store holds under a node's prefix that no manifest names: an
 * {@link OrphanSweep} in dry-run mode (it deletes and writes nothing), under the data root's lock when
 * it can be had, so no upload is between its put and its manifest entry; when another process holds
 * the root the listing still runs, and a note says so. Orphans and held shards become anomalies.
 */
final class OrphanListing {

    private final DataRoot root;
    private final ObjectStore store;
    private final Clock clock;

    OrphanListing(DataRoot root, ObjectStore store, Clock clock) {
        this.root = root;
        this.store = store;
        this.clock = clock;
    }

    /**
     * Lists the orphans and held shards under {@code keys}' node prefix into {@code findings}, and
     * what limited the listing into {@code notes}.
     *
     * @param guard this process's guard of the data root, or null when no other pass runs in it
     * @return whether the prefix was listed: false when a stop came while waiting for the guard
     */
    boolean list(SegmentKeys keys, DataRootGuard guard, StopSignal stop, OrderedFindings findings, List<String> notes)
            throws IOException, StoreException, InterruptedException {
        DataRootGuard.Held held = guard == null ? null : guard.hold(stop);
        if (guard != null && held == null) {
            return false;
        }
        try {
            OrphanSweepReport orphans = sweep(keys, stop, notes);
            String prefix = keys.nodePrefix();
            for (String key : orphans.found()) {
                findings.add(Anomaly.orphan(shardOf(key, prefix), key, "no manifest names it"));
            }
            for (HeldShard h : orphans.held()) {
                Kind kind = switch (h.reason()) {
                    case MISSING_SHARD -> Kind.MISSING_SHARD;
                    case UNRECORDED_HISTORY -> Kind.UNRECORDED_HISTORY;
                    case UNREADABLE -> Kind.UNREADABLE;
                };
                boolean known = findings.anomalies().stream().anyMatch(a -> a.kind() == Kind.UNREADABLE
                        && a.key().isEmpty() && a.shard().equals(h.shard()));
                if (!known) {
                    findings.add(Anomaly.heldShard(kind, h.shard(), h.objects() + " objects (" + h.bytes()
                            + " bytes) under " + keys.shardPrefix(h.shard()) + " kept: " + h.detail(), h.objects(),
                            h.bytes()));
                }
            }
            notes.addAll(orphans.problems());
            return true;
        } finally {
            if (held != null) {
                held.close();
            }
        }
    }

    private OrphanSweepReport sweep(SegmentKeys keys, StopSignal stop, List<String> notes)
            throws IOException, StoreException {
        OrphanSweep sweep = new OrphanSweep(root, store, keys, clock,
                OrphanSweepSettings.defaults().withDryRun(true).withFullSweep(true), RetentionHook.none());
        RootLock lock = null;
        try {
            lock = RootLock.acquire(root.path());
        } catch (RootLock.HeldException e) {
            notes.add("another process holds the data root (" + e.getMessage()
                    + "); an upload in progress there may be listed as an orphan");
        }
        try {
            return sweep.run(stop);
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }

    /** The shard a key under {@code prefix} belongs to, by its path. */
    private static String shardOf(String key, String prefix) {
        String rest = key.substring(prefix.length());
        int slash = rest.lastIndexOf('/'); // a shard's name may hold a slash itself (dead-letters/<dir>)
        return slash < 0 ? "" : rest.substring(0, slash);
    }
}
