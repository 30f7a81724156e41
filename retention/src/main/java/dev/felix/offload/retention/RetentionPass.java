package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.side.StreamMarker;
import dev.felix.offload.log.side.StreamMarkerFile;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
import dev.felix.offload.root.SegmentKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One retention pass over a data root, under the root's {@link RootLock} (the one offload takes,
 * so the two never work over a root at once), but for the full listing an orphan sweep makes now and
 * then ({@link FullSweep}), which is made before the lock is taken ({@link #prelist}) so an offload
 * pass is not kept waiting behind it:
 * <ol>
 *   <li>each stream shard {@link DataRoot#streamShards()} lists, in name order (cache and counter
 *       shards are compacted in place and never offloaded, so retention has nothing of theirs): {@link ShardRetention} with the settings
 *       {@link RetentionRules} give it (exact stream names come from the root's {@code .streams/}
 *       markers when they can be read);</li>
 *   <li>{@link DeletedStreams} for the directories under {@code .deleted/};</li>
 *   <li>an {@link OrphanSweep} of this node's key prefix.</li>
 * </ol>
 * A shard that fails is reported and the others go on. A stop request ends the pass between shards
 * or batches; everything written up to then is whole.
 *
 * <p>Given a {@link RootHandover} ({@link #handingOverTo}; the daemon's), the pass lets the root go
 * between two shards, and before the deleted streams and the sweep, whenever another pass waits for
 * it, and takes it again afterwards as a pass that starts would: the claim and lease checked anew
 * and the manifests' keys read again. That read is itself let go of when a pass comes to wait during
 * it, and started again afterwards. So an offload run waits for one shard's retention at most, not
 * for the whole pass nor for a read of every manifest, and never acts on a shard while retention does
 * (each shard's retention, and the sweep, run whole under the lock). Without one the root is held
 * from the first shard to the sweep.
 */
public final class RetentionPass {

    private static final Logger LOG = LoggerFactory.getLogger(RetentionPass.class);

    private final DataRoot root;
    private final ObjectStore store;
    private final RetentionRules rules;
    private final RetentionPassSettings settings;
    private final Clock clock;
    private final Map<String, String> env;
    private final RetentionHook hook;
    private dev.felix.offload.root.NodeClaimCheck.Policy claimPolicy;
    private RootHandover handover = RootHandover.never();

    /**
     * @param clock what "now" is for time limits and the orphans' grace period
     * @param env   where {@value NodeId#ENV} is looked up (normally {@code System.getenv()})
     * @param hook  the crash tests' seam; {@link RetentionHook#none()} otherwise
     */
    public RetentionPass(DataRoot root, ObjectStore store, RetentionRules rules, RetentionPassSettings settings,
                         Clock clock, Map<String, String> env, RetentionHook hook) {
        this.root = Objects.requireNonNull(root, "root");
        this.store = Objects.requireNonNull(store, "store");
        this.rules = Objects.requireNonNull(rules, "rules");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.env = Objects.requireNonNull(env, "env");
        this.hook = Objects.requireNonNull(hook, "hook");
    }

    /**
     * Checks the store's node claim (see {@link dev.felix.offload.root.NodeClaimCheck}) before
     * anything is deleted; a refusal fails the run with its {@code RefusedException}. Without it
     * (library tests) the claim is neither read nor written.
     */
    public RetentionPass checkingClaim(dev.felix.offload.root.NodeClaimCheck.Policy policy) {
        this.claimPolicy = policy;
        return this;
    }

    /**
     * Lets other passes of this process have the root between shards when they wait for it (see
     * {@link RootHandover}); without it the pass holds the root from its first shard to its sweep.
     */
    public RetentionPass handingOverTo(RootHandover handover) {
        this.handover = Objects.requireNonNull(handover, "handover");
        return this;
    }

    /**
     * Runs the pass.
     *
     * @throws RootLock.HeldException at once when an offload or retention pass holds the root
     * @throws IOException            when the root itself cannot be read
     */
    public RetentionReport run(StopSignal stop) throws IOException {
        return run(stop, prelist(stop));
    }

    /**
     * The full listing an orphan sweep of this pass needs, made without the root's lock so an offload
     * pass runs beside it (see {@link FullSweep}); null when the sweep is off, the journal's keys are
     * enough this time, or the root has no node id yet (nothing was uploaded from it).
     */
    public FullSweep.Listing prelist(StopSignal stop) throws IOException {
        if (!settings.sweepOrphans() || stop.stopRequested()) {
            return null;
        }
        if (env.get(NodeId.ENV) == null && !java.nio.file.Files.exists(root.identityFile(DataRoot.NODE_ID))) {
            return null;
        }
        SegmentKeys keys = new SegmentKeys(settings.keyPrefix(), NodeId.resolve(root, env));
        return new OrphanSweep(root, store, keys, clock, settings.orphanSweep(), hook).prelist();
    }

    /**
     * Runs the pass under the root's lock (let go between shards where a {@link RootHandover} asks),
     * its orphan sweep judging {@code prelisted} (from {@link #prelist}, or null).
     *
     * @throws RootLock.HeldException at once when an offload or retention pass holds the root
     * @throws IOException            when the root itself cannot be read
     */
    public RetentionReport run(StopSignal stop, FullSweep.Listing prelisted) throws IOException {
        long started = System.nanoTime();
        handovers = 0;
        Held held = hold(claimPolicy, stop);
        if (held == null) {
            LOG.info("retention pass stopped before its first shard, while another pass had the root");
            return new RetentionReport(NodeId.resolve(root, env), List.of(), DeletedStreamsReport.nothing(),
                    Optional.empty(), true, Duration.ofNanos(System.nanoTime() - started), List.of(), Map.of(), Map.of());
        }
        try {
            String nodeId = held.keys.nodeId();
            SegmentKeys keys = held.keys;
            // through the fenced store, as every other delete of the pass
            List<String> journalProblems = finishExpired(held.store, held.journal,
                    new dev.felix.offload.copy.ObjectRelease(held.ownership, held.live), stop);
            StreamMarkerFile.Loaded loaded = markers();
            List<StreamMarker> markers = loaded.markers();
            Map<String, String> uncertain = new java.util.LinkedHashMap<>();
            OverrideReach.warn(rules, root, markers); // an override reaching no shard is said at every pass
            List<ShardRetentionResult> results = new ArrayList<>();
            for (DataRoot.Shard shard : root.streamShards()) {
                if (stop.stopRequested() || (held = handingOver(held, stop)) == null) {
                    break;
                }
                String name = shard.name();
                RetentionRules.Resolution resolution = rules.resolve(ShardName.of(name).withStreamFrom(markers));
                resolution.uncertain().ifPresent(why -> {
                    LOG.warn("{}: {}", name, why);
                    uncertain.put(name, why);
                });
                RetentionSettings shardSettings = resolution.settings();
                try {
                    results.add(new ShardRetention(name, shard.directory(), held.store, shardSettings, clock, hook,
                            settings.deleteBatchSize(), held.ownership, held.live).settling(settings.unlinkSettle())
                            .journaling(held.journal).run(stop));
                } catch (dev.felix.offload.root.NodeClaimCheck.RefusedException e) {
                    throw e; // another copy of this root took the node's lease: the whole pass stops
                } catch (RuntimeException e) {
                    LOG.error("{}: retention failed", name, e);
                    results.add(new ShardRetentionResult(name, shardSettings, LocalRetentionResult.nothing(0),
                            RemoteRetentionResult.nothing(0), "failed: " + e));
                }
            }
            DeletedStreamsReport deleted = DeletedStreamsReport.nothing();
            if (settings.removeDeletedStreams() && !stop.stopRequested() && (held = handingOver(held, stop)) != null) {
                deleted = new DeletedStreams(root, held.store, hook, settings.deleteBatchSize(), held.ownership, held.live)
                        .run(stop);
            }
            Optional<OrphanSweepReport> orphans = Optional.empty();
            if (settings.sweepOrphans() && !stop.stopRequested() && (held = handingOver(held, stop)) != null) {
                try {
                    orphans = Optional.of(new OrphanSweep(root, held.store, keys, clock, settings.orphanSweep(), hook)
                            .run(stop, prelisted));
                } catch (StoreException e) {
                    LOG.error("{}: orphan sweep failed: {}", keys.nodePrefix(), e.getMessage());
                    orphans = Optional.of(new OrphanSweepReport(keys.nodePrefix(), settings.orphanSweep().dryRun(),
                            List.of(), List.of(), List.of(), List.of(), List.of(), List.of("listing failed: " + e.getMessage()),
                            List.of()));
                }
            }
            RetentionReport report = new RetentionReport(nodeId, results, deleted, orphans, stop.stopRequested(),
                    Duration.ofNanos(System.nanoTime() - started), journalProblems, loaded.unreadable(), uncertain);
            LOG.info("retention pass: {} local segments ({} bytes) and {} remote segments ({} bytes) removed, "
                            + "{} deleted-stream directories removed, {} orphans found, {} deleted, {} failures{}{}",
                    report.localSegmentsDeleted(), report.localBytesDeleted(), report.remoteSegmentsDeleted(),
                    report.remoteBytesDeleted(), report.deletedStreamDirectoriesFinished(), report.orphansFound(),
                    report.orphansDeleted(), report.failures().size(), report.stopped() ? " (stopped early)" : "",
                    handovers == 0 ? "" : "; root handed over to waiting passes: " + handovers);
            return report;
        } finally {
            if (held != null) {
                held.close();
            }
        }
    }

    /** Times the running pass let other passes have the root. */
    private int handovers;

    /**
     * The root as one stretch of the pass holds it: its lock, and what the pass judges by, read under
     * it. A stretch is a writing pass in the node lease's terms (see {@link dev.felix.offload.root.NodeLease}):
     * it checks the claim and the lease when it begins and takes the lease at its first delete, so a
     * lease another pass of this process advanced while the root was handed over is this root's and
     * no copy's.
     */
    private final class Held implements java.io.Closeable {
        final RootLock lock;
        final SegmentKeys keys;
        final ObjectStore store;
        final KeyOwnership ownership;
        final LiveKeys live;
        final ExpiryJournal journal;

        Held(RootLock lock, SegmentKeys keys, ObjectStore store, KeyOwnership ownership, LiveKeys live,
             ExpiryJournal journal) {
            this.lock = lock;
            this.keys = keys;
            this.store = store;
            this.ownership = ownership;
            this.live = live;
            this.journal = journal;
        }

        private boolean closed;

        /** Lets the root go; again is nothing (a hand-over cut short closes it before the pass's end does). */
        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                lock.close();
            }
        }
    }

    /**
     * Takes the root's lock and reads under it what the pass judges by. Where another pass comes to
     * wait for the root while the manifests are read (seconds at tens of thousands of shards), the
     * root is let go before the read is done, that pass goes first, and the read starts again after
     * it; null when a stop came while the root was handed over.
     */
    private Held hold(dev.felix.offload.root.NodeClaimCheck.Policy policy, StopSignal stop) throws IOException {
        dev.felix.offload.root.NodeClaimCheck.Policy stretchPolicy = policy;
        while (true) {
            RootLock lock = RootLock.acquire(root.path());
            try {
                SegmentKeys keys = new SegmentKeys(settings.keyPrefix(), NodeId.resolve(root, env));
                // With the claim checked, every delete goes through the node's lease (see NodeLease).
                ObjectStore fenced = stretchPolicy == null ? this.store
                        : dev.felix.offload.root.NodeClaimCheck.enforce(root, this.store, keys, stretchPolicy).fenced(this.store);
                // read before anything deletes; a shard's own deletes only shrink what it names. Keys in a
                // shard's own prefix are answered from its manifest when asked, so the heap does not grow with the store.
                Optional<LiveKeys> live = LiveKeys.read(root, keys, handover::wanted);
                if (live.isPresent()) {
                    if (!live.get().unreadable().isEmpty()) {
                        LOG.error("the manifests of {} are unreadable: no object is deleted until they are mended, since "
                                + "they may name any key", live.get().unreadable());
                    }
                    return new Held(lock, keys, fenced, KeyOwnership.of(root, keys), live.get(),
                            ExpiryJournal.load(root.path()));
                }
            } catch (IOException | RuntimeException e) {
                lock.close();
                throw e;
            }
            lock.close(); // nothing was done under it yet: the waiting pass goes first
            if (!awaitRoot(stop)) {
                return null;
            }
            stretchPolicy = laterStretch();
        }
    }

    /** The claim policy of a stretch after the first: a take-over is done once, at the first stretch. */
    private dev.felix.offload.root.NodeClaimCheck.Policy laterStretch() {
        return claimPolicy == null ? null
                : new dev.felix.offload.root.NodeClaimCheck.Policy(claimPolicy.storeSetting(), false);
    }

    /**
     * {@code held}, or, when another pass waits for the root, a new hold taken after it had it; null
     * when a stop came first.
     */
    private Held handingOver(Held held, StopSignal stop) throws IOException {
        if (!handover.wanted()) {
            return held;
        }
        held.close();
        if (!awaitRoot(stop)) {
            return null;
        }
        return hold(laterStretch(), stop);
    }

    /** Lets the waiting passes have the (released) root and waits for it; false when a stop came first. */
    private boolean awaitRoot(StopSignal stop) throws IOException {
        boolean back;
        try {
            back = handover.handOver(stop);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while another pass had " + root.path());
        }
        if (back) {
            handovers++;
        }
        return back;
    }

    /**
     * Deletes what an earlier pass expired but did not delete (a crash or a store failure between its
     * manifest save and its deletes), as its journal lists: each key once no live manifest names it.
     * A key a live manifest still names was not expired after all (the save never happened) and
     * leaves the journal; one that cannot be judged (an unreadable manifest) stays in it.
     *
     * @param store the pass's store, writing through the node's lease where the claim was checked
     * @return what went wrong, for the report
     */
    private List<String> finishExpired(ObjectStore store, ExpiryJournal journal,
                                       dev.felix.offload.copy.ObjectRelease release, StopSignal stop) throws IOException {
        Map<String, String> pending = journal.keys();
        if (pending.isEmpty()) {
            return List.of();
        }
        List<dev.felix.offload.copy.ObjectRelease.Permit> permits = new ArrayList<>();
        List<String> notExpired = new ArrayList<>();
        pending.forEach((key, shard) -> {
            dev.felix.offload.copy.ObjectRelease.Verdict v = release.expiredEarlier(shard, key);
            if (v instanceof dev.felix.offload.copy.ObjectRelease.Verdict.Deletable d) {
                permits.add(d.permit());
            } else if (v instanceof dev.felix.offload.copy.ObjectRelease.Verdict.Kept k
                    && k.refusal() != KeyOwnership.Refusal.A_LIVE_MANIFEST_UNREADABLE) {
                notExpired.add(key);
            }
        });
        journal.remove(notExpired);
        BatchDeletes.Outcome outcome = BatchDeletes.delete(store, permits, settings.deleteBatchSize(), stop, hook,
                RetentionStep.OBJECT_BATCH_DELETED, ExpiryJournal.FILE_NAME);
        journal.remove(outcome.deleted());
        if (!outcome.deleted().isEmpty()) {
            LOG.info("deleted {} objects an earlier retention pass expired but did not delete", outcome.deleted().size());
        }
        if (outcome.failure().isPresent()) {
            return List.of(outcome.left().size() + " objects expired earlier not deleted: "
                    + outcome.failure().get().label());
        }
        return List.of();
    }

    /**
     * The root's stream markers, each on its own: one that cannot be read is named and set aside, and
     * only its own stream's shards lose their exact names (they are then held to the longest limits
     * their rendered names allow, see {@link RetentionRules#resolve}); every other marker still
     * counts.
     */
    private StreamMarkerFile.Loaded markers() {
        StreamMarkerFile.Loaded loaded;
        try {
            loaded = StreamMarkerFile.loadEach(root.path());
        } catch (IOException e) {
            // No marker can be read: every stream is unknown, and held to the longest limits its names allow.
            loaded = new StreamMarkerFile.Loaded(List.of(), new java.util.TreeMap<>(Map.of("",
                    "the directory cannot be listed: " + dev.felix.offload.log.IoProblem.describe(e))));
        }
        loaded.unreadable().forEach((file, why) -> LOG.error("{}{}: stream marker unreadable ({}); the shards of its "
                + "stream are held to the longest limits their names allow", RetentionReport.MARKERS, file, why));
        return loaded;
    }
}
