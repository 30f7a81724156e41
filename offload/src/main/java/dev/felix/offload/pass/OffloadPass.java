package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.IoProblem;
import dev.felix.offload.store.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * One offload pass over a data root: takes the root's lock, resolves the node id, checks the store's
 * node claim and runs {@link ShardOffload} over every shard, up to {@link OffloadSettings#parallelism()}
 * at a time. A pass that unlinks nothing locally (local retention {@link LocalRetention.KeepAll}, the
 * CLI's and the daemon's default) starts its shards while the claim is checked, so the first segments
 * are read while the store starts up; every store request of theirs waits for the check
 * ({@link ClaimGatedStore}). One that may unlink checks the claim first, before any shard starts.
 * The shards share one upload bandwidth limit and one bound on the bytes of uploads under way
 * ({@link OffloadSettings#maxBytesInFlight()}), within which each shard has several segments
 * uploading at once. A shard that fails is reported and the others go on.
 */
public final class OffloadPass {

    private static final Logger LOG = LoggerFactory.getLogger(OffloadPass.class);

    private final DataRoot root;
    private final ObjectStore store;
    private final OffloadSettings settings;
    private final StepHook hook;
    private final Map<String, String> env;
    private final Function<Path, OptionalLong> commitOffsets;
    private NodeClaimCheck.Policy claimPolicy;
    private QuietShards quiet;
    /**
     * How many times a one-shot pass waits for entries to settle: every entry it recorded settles
     * within the settle time of the pass's end, so the second round finds none left but by a clock step.
     */
    private static final int SETTLE_ROUNDS = 3;

    /**
     * @param env           where {@value NodeId#ENV} is looked up (normally {@code System.getenv()})
     * @param commitOffsets a shard directory's commit offset, empty when it has no {@code replica} file
     */
    public OffloadPass(DataRoot root, ObjectStore store, OffloadSettings settings, StepHook hook,
                       Map<String, String> env, Function<Path, OptionalLong> commitOffsets) {
        this.root = root;
        this.store = store;
        this.settings = settings;
        this.hook = hook;
        this.env = env;
        this.commitOffsets = commitOffsets;
    }

    /**
     * Checks the store's node claim (see {@link NodeClaimCheck}) before anything is uploaded or
     * unlinked; a refusal fails the run with {@link NodeClaimCheck.RefusedException}. Without it
     * (library tests) the claim is neither read nor written.
     */
    public OffloadPass checkingClaim(NodeClaimCheck.Policy policy) {
        this.claimPolicy = policy;
        return this;
    }

    /**
     * Skips the shards {@code memo} knows were quiet at the last pass of this process and look the same
     * (see {@link QuietShards}), and notes how this pass leaves each; the daemon keeps one across passes.
     */
    public OffloadPass remembering(QuietShards memo) {
        this.quiet = memo;
        return this;
    }

    /** Runs the pass; fails at once with {@link RootLock.HeldException} when another offloader runs. */
    public PassReport run(ProgressListener progress) throws IOException {
        return run(progress, () -> false);
    }

    /**
     * Runs the pass, checking {@code stopRequested} before each segment: once it answers true, every
     * shard stops between two segments (nothing half-done) and the report says so.
     */
    public PassReport run(ProgressListener progress, java.util.function.BooleanSupplier stopRequested)
            throws IOException {
        long started = System.nanoTime();
        store.uploadsPacedAt(settings.uploadBytesPerSecond());
        try (RootLock lock = RootLock.acquire(root.path())) {
            String nodeId = NodeId.resolve(root, env);
            SegmentKeys keys = new SegmentKeys(settings.keyPrefix(), nodeId);
            ObjectStore shardStore = store;
            Thread claimCheck = null;
            ClaimGatedStore gated = null;
            java.util.concurrent.atomic.AtomicReference<Throwable> claimFailure = new java.util.concurrent.atomic.AtomicReference<>();
            // With the claim checked, every put and delete goes through the node's lease (see NodeLease).
            java.util.concurrent.atomic.AtomicReference<ObjectStore> fenced = new java.util.concurrent.atomic.AtomicReference<>(store);
            // Puts list no leases after the first: the lease is confirmed once before each manifest write instead.
            java.util.concurrent.atomic.AtomicReference<NodeLease.Fence> lease = new java.util.concurrent.atomic.AtomicReference<>();
            RecordGuard guard = () -> {
                NodeLease.Fence held = lease.get();
                if (held != null) {
                    held.confirm();
                }
            };
            if (claimPolicy != null && settings.localRetention() instanceof LocalRetention.KeepAll) {
                // A pass that unlinks nothing may read its segments while the claim is checked (with the
                // store's start-up, the first requests of a command): its shards' requests wait for the
                // check, and fail unsent if it does not pass.
                ClaimGatedStore gate = new ClaimGatedStore(store);
                claimCheck = new Thread(() -> {
                    try {
                        NodeClaimCheck.Result claimed = NodeClaimCheck.enforce(root, store, keys, claimPolicy);
                        claimed.lease().ifPresent(lease::set);
                        ObjectStore through = claimed.fencedForOffload(store);
                        fenced.set(through);
                        gate.passed(through);
                    } catch (Throwable t) {
                        claimFailure.set(t);
                        gate.failed(t);
                    }
                }, "node-claim-check");
                claimCheck.setDaemon(true);
                claimCheck.start();
                gated = gate;
                shardStore = gate;
            } else if (claimPolicy != null) {
                NodeClaimCheck.Result claimed = NodeClaimCheck.enforce(root, store, keys, claimPolicy);
                claimed.lease().ifPresent(lease::set);
                shardStore = claimed.fencedForOffload(store);
                fenced.set(shardStore);
            }
            DataRoot.Listing listing = root.list();
            List<DataRoot.Shard> shards = listing.streamShards();
            List<String> caches = listing.cacheShards().stream().map(DataRoot.Shard::name).toList();
            if (!caches.isEmpty()) {
                LOG.info("left {} cache and counter shards alone: {}", caches.size(), PassReport.CACHE_SHARDS_REASON);
            }
            List<String> unreadable = new ArrayList<>();
            for (DataRoot.Unreadable u : listing.unreadable()) {
                LOG.error("{}: not offloaded, could not be read: {}", u.name(), u.reason());
                unreadable.add(u.name() + ": " + u.reason());
            }
            long total = 0;
            java.util.Map<Path, QuietShards.Look> looks = new java.util.HashMap<>();
            if (quiet != null) {
                quiet.under(settings.localRetention());
            }
            for (DataRoot.Shard shard : shards) {
                if (quiet != null) {
                    QuietShards.Look look = quiet.look(shard.directory());
                    looks.put(shard.directory(), look);
                    if (quiet.stillQuiet(shard.directory(), look)) {
                        continue; // nothing pending: it looks as it did when a pass found nothing to do
                    }
                }
                total += ShardOffload.pendingBytes(shard.directory());
            }
            if (quiet != null) {
                quiet.retainOnly(looks.keySet());
            }
            progress.started(total);
            RateLimiter limiter = settings.uploadBytesPerSecond() > 0
                    ? RateLimiter.create(settings.uploadBytesPerSecond()) : null;
            List<ShardResult> results = new ArrayList<>(shards.size());
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(settings.parallelism(), Math.max(1, shards.size())),
                    r -> {
                        Thread t = new Thread(r, "offload-shard");
                        t.setDaemon(true);
                        return t;
                    });
            InFlightUploads uploads = InFlightUploads.of(settings);
            ObjectStore forShards = shardStore;
            // once the claim check failed, no further segment begins (those handed over meet the gate's refusal)
            java.util.function.BooleanSupplier stop = claimCheck == null ? stopRequested
                    : () -> claimFailure.get() != null || stopRequested.getAsBoolean();
            try {
                List<Future<ShardResult>> futures = new ArrayList<>();
                for (DataRoot.Shard shard : shards) {
                    QuietShards.Look look = looks.get(shard.directory());
                    if (quiet != null && quiet.stillQuiet(shard.directory(), look)) {
                        futures.add(java.util.concurrent.CompletableFuture.completedFuture(
                                new ShardResult(shard.name(), true, List.of(), List.of(), 0, null)));
                        continue;
                    }
                    futures.add(pool.submit(() -> {
                        ShardResult r = new ShardOffload(shard.name(), shard.directory(), forShards, keys, settings, hook,
                                limiter, progress, commitOffsets.apply(shard.directory()), stop)
                                .sharing(uploads).recordingAfter(guard).run();
                        if (quiet != null) {
                            quiet.ended(shard.directory(), look, r, settings.localRetention());
                        }
                        return r;
                    }));
                }
                for (int i = 0; i < futures.size(); i++) {
                    results.add(outcome(shards.get(i), futures.get(i)));
                }
                if (claimCheck != null) {
                    awaitClaimCheck(claimCheck, gated);
                }
                if (settings.awaitSettle() && claimFailure.get() == null) {
                    awaitSettled(fenced.get(), shards, results, keys, stopRequested);
                }
            } finally {
                if (claimCheck != null) {
                    awaitClaimCheck(claimCheck, gated);
                }
                pool.shutdownNow();
                uploads.close();
                progress.finished();
            }
            if (claimFailure.get() != null) {
                // what the shards met was the gate's refusal to send: the check's failure is the pass's
                throwClaimFailure(claimFailure.get());
            }
            return new PassReport(nodeId, results, Duration.ofNanos(System.nanoTime() - started), caches, unreadable);
        }
    }

    private static void awaitClaimCheck(Thread check, ClaimGatedStore gate) {
        try {
            check.join();
        } catch (InterruptedException e) {
            gate.failed(e);
            Thread.currentThread().interrupt();
        }
    }

    /** Throws what the node claim check threw, as it would have thrown it on the pass's own thread. */
    private static void throwClaimFailure(Throwable t) throws IOException {
        if (t instanceof IOException io) {
            throw io;
        }
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error error) {
            throw error;
        }
        throw new IOException("node claim check failed: " + t, t);
    }

    /**
     * For a one-shot pass: waits until the entries it recorded have settled (at most the settle time,
     * as they were recorded during this pass) and unlinks then what local retention lets go, shard by
     * shard, so the command leaves the local disk as its options ask. A shard whose unlinking finds
     * younger entries still settling (recorded later than those it waited for) is waited for again, a
     * few rounds at most. A stop request ends the wait. {@code store} is the pass's, through the node's
     * lease where the claim was checked.
     */
    private void awaitSettled(ObjectStore store, List<DataRoot.Shard> shards, List<ShardResult> results, SegmentKeys keys,
                              java.util.function.BooleanSupplier stopRequested) throws IOException {
        for (int round = 0; round < SETTLE_ROUNDS; round++) {
            java.time.Instant until = null;
            for (ShardResult r : results) {
                if (r.settling() != null && (until == null || r.settling().isAfter(until))) {
                    until = r.settling();
                }
            }
            if (until == null) {
                return;
            }
            long waitMs = Math.min(java.time.Duration.between(java.time.Instant.now(), until).toMillis(),
                    settings.unlinkSettle().toMillis());
            LOG.info("waiting {} ms for the entries this pass recorded to settle before their local segments go", waitMs);
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(Math.max(0, waitMs) + 20);
            while (System.nanoTime() < deadline) {
                if (stopRequested.getAsBoolean()) {
                    return;
                }
                try {
                    Thread.sleep(Math.min(100, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            for (int i = 0; i < results.size(); i++) {
                ShardResult r = results.get(i);
                if (r.settling() == null) {
                    continue;
                }
                DataRoot.Shard shard = shards.get(i);
                try {
                    ShardRelease.Settled settled = new ShardOffload(shard.name(), shard.directory(), store, keys, settings,
                            hook, null, ProgressListener.none(), OptionalLong.empty(), stopRequested).releaseSettled();
                    results.set(i, r.withSettledUnlinks(settled.unlinked(), settled.stillSettling()));
                } catch (IOException e) {
                    // What was recorded stands; only the unlinks after it failed. Named, without a trace.
                    String why = IoProblem.describe(e);
                    LOG.error("{}: unlinking settled segments failed: {}", shard.name(), why);
                    LOG.debug("{}: unlinking settled segments failed", shard.name(), e);
                    results.set(i, r.failedAfter("failed while unlinking settled segments: " + why));
                }
            }
        }
    }

    private static ShardResult outcome(DataRoot.Shard shard, Future<ShardResult> future) throws IOException {
        String name = shard.name();
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("offload pass interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Error error) {
                throw error;
            }
            if (cause instanceof NodeClaimCheck.RefusedException refused) {
                throw refused; // another copy of this root took the node's lease: the whole pass stops
            }
            // An I/O failure is the operator's to fix (permissions, space): name the file and the cause,
            // without a trace. Anything else is a bug, and its trace is kept at debug.
            String why = cause instanceof IOException io ? IoProblem.describe(io)
                    : cause.getClass().getSimpleName() + ": " + cause.getMessage();
            LOG.error("{}: offload failed: {}", name, why);
            LOG.debug("{}: offload failed", name, cause);
            int pending;
            try {
                pending = ShardOffload.pendingSegments(shard.directory());
            } catch (IOException unreadable) {
                pending = 0;
            }
            return new ShardResult(name, false, List.of(), List.of(), pending, "failed: " + why);
        }
    }
}
