package dev.felix.offload.daemon;

import dev.felix.offload.schedule.DataRootGuard;
import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.schedule.Pass;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.schedule.PassListener;
import dev.felix.offload.schedule.PassOutcome;
import dev.felix.offload.schedule.PassScheduler;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.retention.RetentionPass;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.schedule.Schedule;
import dev.felix.offload.pass.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.ShardStop;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.read.TieredReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@code felix-offload run} runs: the offload, retention and scrub passes on their cron
 * schedules (each never overlapping itself, missed runs not stacked, and never two of them over the
 * data root at once), an HTTP endpoint for metrics, health and per-shard status, and tiered reads.
 *
 * <p>A stop ({@link #stop}) starts no further pass; a running offload finishes the segment it is
 * uploading and leaves the rest, retention and scrub end at their next unit of work; one still running after the patience is interrupted, which aborts its upload (the
 * store aborts a multipart upload that fails) and leaves the same state a crash would: nothing is
 * recorded before it is verified.
 */
public final class Daemon {

    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);

    static final String OFFLOAD = "offload";
    static final String RETENTION = "retention";
    static final String SCRUB = "scrub";
    /** The most problems one pass result keeps. */
    private static final int MAX_PROBLEMS = 20;
    /** Surveys of the data root are reused for this long (gauges and /shards ask often). */
    private static final long SURVEY_REUSE_NANOS = 1_000_000_000L;

    /** The last thing a pass did to a shard. */
    record ShardNote(Instant at, String result, boolean ok) {
    }

    private final DaemonConfig config;
    private final DataRoot root;
    private final DaemonMetrics metrics;
    private final MeteredStore store;
    private final Map<String, String> env;
    private final PassClock clock;
    private final DataRootGuard guard = new DataRootGuard();
    /** Scheduled scrub runs so far, from a random start: which share of objects the next one reads in full. */
    private final java.util.concurrent.atomic.AtomicLong scrubRuns =
            new java.util.concurrent.atomic.AtomicLong(java.util.concurrent.ThreadLocalRandom.current().nextInt(1 << 20));
    private final ChunkCache chunks;
    private final Map<String, TieredReader> readers = new ConcurrentHashMap<>();
    /** Each pass's latest findings: a run that threw or found nothing to say leaves the previous ones. */
    private final Map<String, PassOutcome.Findings> results = new ConcurrentHashMap<>();
    private final Map<String, ShardNote> offloadNotes = new ConcurrentHashMap<>();
    private final Map<String, ShardNote> retentionNotes = new ConcurrentHashMap<>();
    private final Map<String, Instant> lastSuccess = new ConcurrentHashMap<>();
    /**
     * Reads refused because the store holds another object than an entry names, by shard: the latest
     * one's message. Kept until the next scrub run, whose findings then say what the store holds.
     */
    private final Map<String, String> objectMismatches = new ConcurrentHashMap<>();
    private final PassScheduler scheduler;
    private volatile String storeProblem = "the store has not been asked yet";
    private List<ShardSurvey.ShardStatus> survey = List.of();
    private long surveyNanos;
    private StatusServer http;
    private RootLock daemonLock;
    private boolean takeOverNodeId;

    /**
     * @param store      the opened store; the daemon closes it on stop
     * @param processEnv the process's environment (for {@code FELIX_NODE_ID})
     */
    public Daemon(DaemonConfig config, ObjectStore store, Map<String, String> processEnv, PassClock clock) {
        this.config = config;
        this.root = new DataRoot(config.dataDir);
        this.metrics = new DaemonMetrics();
        this.store = new MeteredStore(store, metrics);
        this.env = config.environment(processEnv);
        this.clock = clock;
        this.chunks = new ChunkCache(this.store, ChunkCache.DEFAULT_CHUNK_BYTES, config.chunkCacheBytes);
        PassScheduler.Builder b = PassScheduler.builder(clock).listener(new PassListener() {
            @Override
            public void finished(PassOutcome outcome) {
                metrics.passFinished(outcome);
                if (outcome.findings() != null) {
                    results.put(outcome.pass(), outcome.findings());
                }
                if (outcome.succeeded()) {
                    PassOutcome.Findings r = results.get(outcome.pass());
                    if (r == null || r.ok()) {
                        lastSuccess.put(outcome.pass(), outcome.finished());
                    }
                }
            }
        });
        add(b, OFFLOAD, config.offloadSchedule, this::offload);
        add(b, RETENTION, config.retentionSchedule, this::retention);
        add(b, SCRUB, config.scrubSchedule, this::scrub);
        this.scheduler = b.build();
        registerGauges();
    }

    private static void add(PassScheduler.Builder b, String name, Optional<Schedule> schedule, Pass pass) {
        schedule.ifPresent(s -> b.pass(name, s, pass));
    }

    private void registerGauges() {
        metrics.gauge("felix.local.bytes", "Bytes of segment files on local disk", this, d -> d.totals().localBytes());
        metrics.gauge("felix.local.segments", "Segment files on local disk", this, d -> d.totals().localSegments());
        metrics.gauge("felix.remote.bytes", "Bytes the manifests record in the store", this,
                d -> d.totals().remoteBytes());
        metrics.gauge("felix.remote.segments", "Entries the manifests hold", this, d -> d.totals().remoteSegments());
        metrics.gauge("felix.offload.lag.bytes", "Bytes of sealed segments not offloaded yet", this,
                d -> d.totals().lagBytes());
        metrics.gauge("felix.offload.lag.segments", "Sealed segments not offloaded yet", this,
                d -> d.totals().lagSegments());
        metrics.gauge("felix.store.ready", "1 when the store answered its probe, else 0", this,
                d -> d.storeProblem == null ? 1 : 0);
        metrics.functionCounter("felix.remote.reads", "Reads served from the store (below the local base)", null,
                readers, m -> m.values().stream().mapToLong(TieredReader::remoteReads).sum());
        metrics.functionCounter("felix.remote.read.bytes", "Record bytes served from the store", "bytes", readers,
                m -> m.values().stream().mapToLong(TieredReader::remoteRecordBytes).sum());
        metrics.perShard(config.metricsShards, this::survey);
        metrics.chunkCache(chunks);
        for (String pass : List.of(OFFLOAD, RETENTION, SCRUB)) {
            metrics.gauge("felix.pass.last.success", "When a pass last ended without problems, seconds since the epoch",
                    lastSuccess, m -> m.containsKey(pass) ? m.get(pass).getEpochSecond() : 0, "pass", pass);
        }
    }

    /** Why a pass found this root may no longer write to the store, once one did; the daemon then ends. */
    private volatile String refused;
    private volatile java.util.function.Consumer<String> onRefused = message -> { };

    /**
     * What to do when a pass finds that this root may no longer write to the store: another copy of
     * it took the node's lease ({@link dev.felix.offload.root.NodeLease}), or another root the claim.
     * No pass can do anything then, so {@code run} ends (exit 2, the message on one line).
     */
    public Daemon onRefused(java.util.function.Consumer<String> listener) {
        this.onRefused = listener;
        return this;
    }

    /** The refusal that ended the daemon's writing, if one did. */
    public Optional<String> refused() {
        return Optional.ofNullable(refused);
    }

    private void refusedBy(NodeClaimCheck.RefusedException e) {
        if (refused == null) {
            refused = e.getMessage();
            LOG.error("{}", e.getMessage());
            onRefused.accept(e.getMessage());
        }
    }

    /** Replace another root's node claim at start ({@code run --take-over-node-id}); passes after it never do. */
    public Daemon takeOverNodeId(boolean value) {
        this.takeOverNodeId = value;
        return this;
    }

    /** Probes the store, starts the HTTP endpoint and the schedules. */
    public void start() throws IOException {
        if (!Files.isDirectory(config.dataDir)) {
            throw new StartRefusedException(config.file + ": " + DaemonConfig.DATA_DIR + ": no directory at "
                    + config.dataDir);
        }
        // Refuse to start where no pass could ever run: a node id that does not validate, or a root
        // another daemon schedules passes over.
        try {
            String fromEnv = env.get(NodeId.ENV);
            if (fromEnv != null || Files.exists(root.identityFile(DataRoot.NODE_ID))) {
                NodeId.resolve(root, env); // reads and validates; creates nothing when either is there
            }
        } catch (NodeId.InvalidNodeIdException e) {
            throw new StartRefusedException(config.file + ": " + e.getMessage());
        }
        try {
            daemonLock = RootLock.acquireForDaemon(config.dataDir);
        } catch (RootLock.HeldException e) {
            throw new StartRefusedException(config.file + ": " + DaemonConfig.DATA_DIR + ": " + e.getMessage());
        }
        probeStore();
        checkClaim();
        http = StatusServer.start(this, config.httpBind, config.httpPort, config.httpReadThreads);
        scheduler.start();
        for (String pass : scheduler.passNames()) {
            Schedule s = scheduler.schedule(pass);
            LOG.info("pass {} runs {} ({})", pass, s.expression(), s.describe());
        }
    }

    /**
     * Refuses to start (a usage error, exit 2) where every pass would be refused: another root's claim
     * on this node id, or a store that is not this root's. A store that does not answer is left to the
     * passes, as {@link #probeStore} leaves it; so is a root another process holds right now, or a root
     * without a node id yet (its first pass creates a fresh one, which no other root can hold).
     */
    private void checkClaim() throws IOException {
        if (storeProblem != null || nodeId().isEmpty()) {
            return;
        }
        SegmentKeys keys = new SegmentKeys(config.retentionPassSettings().keyPrefix(), nodeId().get());
        try (RootLock lock = RootLock.acquire(root.path())) {
            // the claim and the node's lease checked as any writer checks them; a pass takes the lease
            NodeClaimCheck.enforce(root, store, keys, claimPolicy(takeOverNodeId));
        } catch (RootLock.HeldException e) {
            LOG.info("the node claim is checked by the first pass: {}", e.getMessage());
        } catch (NodeClaimCheck.RefusedException e) {
            throw new StartRefusedException(e.getMessage());
        } catch (IOException e) {
            LOG.error("{}", e.getMessage());
        }
    }

    private NodeClaimCheck.Policy claimPolicy(boolean takeOver) {
        return new NodeClaimCheck.Policy(config.file + ": " + DaemonConfig.STORE, takeOver);
    }

    /** Asks the store what it can do; remembers whether it answered. */
    private void probeStore() {
        try {
            store.capabilities();
            if (storeProblem != null) {
                LOG.info("store answered: {}", store.describe());
            }
            storeProblem = null;
        } catch (StoreException | RuntimeException e) {
            storeProblem = DaemonMetrics.kindOf(e) + ": " + e.getMessage();
            LOG.error("store did not answer ({}): {}", store.describe(), storeProblem);
        }
    }

    /**
     * Stops the schedules (see the class comment), then the HTTP endpoint, and closes the store.
     *
     * @return true when every pass ended
     */
    public boolean stop(Duration patience) {
        LOG.info("stopping: no new pass starts; waiting up to {} for running ones", patience);
        boolean ended = scheduler.stop(patience);
        if (http != null) {
            http.stop();
        }
        store.close();
        if (daemonLock != null) {
            try {
                daemonLock.close();
            } catch (IOException e) {
                LOG.warn("releasing {}: {}", RootLock.DAEMON_FILE_NAME, dev.felix.offload.log.IoProblem.describe(e));
            }
        }
        LOG.info(ended ? "stopped" : "stopped, but a pass did not end");
        return ended;
    }

    public int httpPort() {
        return http.port();
    }

    /** Runs {@code pass} as soon as it is idle (tests and operators); false when it is off or stopping. */
    boolean requestRun(String pass) {
        return scheduler.passNames().contains(pass) && scheduler.requestRun(pass);
    }

    private PassOutcome.Findings offload(StopSignal stop) throws Exception {
        requireStore();
        OffloadSettings settings = config.offloadSettings();
        PassReport report;
        try (DataRootGuard.Held held = guard.hold(stop)) {
            if (held == null) {
                return null;
            }
            try {
                report = new OffloadPass(root, store, settings, StepHook.haltAtSystemProperty(), env, ReplicaCommit::of)
                        .checkingClaim(claimPolicy(false)).run(ProgressListener.none(), stop::stopRequested);
            } catch (NodeClaimCheck.RefusedException e) {
                refusedBy(e); // the daemon ends; the refusal is its one line, no trace
                return new PassOutcome.Findings("refused", List.of(e.getMessage()));
            }
        }
        metrics.offloaded(report);
        Instant now = clock.now();
        List<String> problems = new ArrayList<>();
        for (ShardResult s : report.shards()) {
            boolean stopped = s.stop() instanceof ShardStop.Requested;
            String result = s.problem() == null
                    ? s.uploaded().size() + " uploaded, " + s.unlinked().size() + " unlinked, " + s.pending() + " pending"
                    : stopped ? "stopped: " + s.uploaded().size() + " uploaded before the stop" : s.problem();
            offloadNotes.put(s.shard(), new ShardNote(now, result, s.problem() == null || stopped));
            if (s.problem() != null && !stopped) {
                problems.add(s.shard() + ": " + s.problem());
            }
        }
        String summary = report.segmentsUploaded() + " segments (" + report.bytesUploaded() + " bytes) offloaded from "
                + report.shards().size() + " shards in " + report.elapsed().toMillis() + " ms";
        PassOutcome.Findings found = finish(OFFLOAD, summary, problems);
        if (report.segmentsUploaded() > 0 && !stop.stopRequested()) {
            requestRun(RETENTION); // local retention can let the new copies' local files go now
        }
        return found;
    }

    private PassOutcome.Findings retention(StopSignal stop) throws Exception {
        requireStore();
        RetentionReport report;
        try (DataRootGuard.Held held = guard.hold(stop)) {
            if (held == null) {
                return null;
            }
            try {
                report = new RetentionPass(root, store, config.rules, config.retentionPassSettings(), Clock.systemUTC(),
                        env, RetentionHook.none()).checkingClaim(claimPolicy(false)).run(stop);
            } catch (NodeClaimCheck.RefusedException e) {
                refusedBy(e); // the daemon ends; the refusal is its one line, no trace
                return new PassOutcome.Findings("refused", List.of(e.getMessage()));
            }
        }
        metrics.retained(report);
        Instant now = clock.now();
        report.shards().forEach(s -> retentionNotes.put(s.shard(), new ShardNote(now, s.failed() ? s.failure()
                : s.local().removedSegments().size() + " local and " + s.remote().expiredSegments().size()
                + " remote segments removed" + (s.problems().isEmpty() ? "" : "; " + s.problems().stream()
                .map(dev.felix.offload.retention.RetentionProblem::describe).collect(java.util.stream.Collectors
                        .joining("; "))), !s.failed() && s.problems().isEmpty())));
        List<String> problems = new ArrayList<>();
        report.failures().forEach((where, why) -> problems.add(where + ": " + why));
        String summary = report.localSegmentsDeleted() + " local and " + report.remoteSegmentsDeleted()
                + " remote segments removed, " + report.orphansFound() + " orphans found, " + report.orphansDeleted()
                + " deleted";
        return finish(RETENTION, summary, problems);
    }

    private PassOutcome.Findings scrub(StopSignal stop) throws Exception {
        requireStore();
        // A rotating share is read in full behind the server's checksum, so every object is read within
        // scrub.full-read-runs runs; the share's start is random, so restarts do not always read the same.
        Scrub.Share share = Scrub.Share.ofRun(scrubRuns.getAndIncrement(), config.scrubFullReadRuns);
        Scrub.Report report = new Scrub(root, store, env, config.scrubReadBandwidth, Clock.systemUTC(), share)
                .run(stop, guard);
        if (!stop.stopRequested()) {
            objectMismatches.clear(); // scrub's own findings say now what the store holds for each entry
        }
        metrics.scrubbed(report);
        List<String> problems = new ArrayList<>();
        // Orphans are the sweep's to delete once their grace period is over; only when nothing will
        // sweep them do they make the daemon degraded.
        boolean swept = config.retentionSchedule.isPresent() && config.sweepOrphans && !config.orphanDryRun;
        for (Scrub.Anomaly a : report.anomalies()) {
            if (swept && a.kind() == Scrub.Kind.ORPHAN) {
                continue;
            }
            problems.add(a.kind().label() + " " + (a.key() == null ? a.shard() : a.key()) + ": " + a.detail());
        }
        return finish(SCRUB, report.entriesChecked() + " entries checked, " + report.anomalies().size()
                + " anomalies" + (report.notes().isEmpty() ? "" : "; " + String.join("; ", report.notes())), problems);
    }

    private void requireStore() {
        if (storeProblem != null) {
            probeStore();
            if (storeProblem != null) {
                throw new IllegalStateException("the store did not answer: " + storeProblem);
            }
        }
    }

    private static PassOutcome.Findings finish(String pass, String summary, List<String> problems) {
        List<String> kept = problems.size() > MAX_PROBLEMS ? new ArrayList<>(problems.subList(0, MAX_PROBLEMS)) : problems;
        if (problems.size() > MAX_PROBLEMS) {
            kept.add((problems.size() - MAX_PROBLEMS) + " more");
        }
        PassOutcome.Findings found = new PassOutcome.Findings(summary, kept);
        if (problems.isEmpty()) {
            LOG.info("{} pass: {}", pass, summary);
        } else {
            LOG.warn("{} pass: {}; {} problems, first: {}", pass, summary, problems.size(), problems.get(0));
        }
        return found;
    }

    DaemonMetrics metrics() {
        return metrics;
    }

    /** The survey of the data root, at most a second old. */
    synchronized List<ShardSurvey.ShardStatus> survey() {
        long now = System.nanoTime();
        if (surveyNanos == 0 || now - surveyNanos > SURVEY_REUSE_NANOS) {
            try {
                survey = ShardSurvey.of(root);
            } catch (IOException e) {
                LOG.warn("survey of {} failed: {}", root.path(), e.getMessage());
            }
            surveyNanos = now;
        }
        return survey;
    }

    ShardSurvey.Totals totals() {
        return ShardSurvey.Totals.of(survey());
    }

    ShardNote lastOffload(String shard) {
        return offloadNotes.get(shard);
    }

    ShardNote lastRetention(String shard) {
        return retentionNotes.get(shard);
    }

    /** The node id, without creating one. */
    Optional<String> nodeId() {
        try {
            if (env.get(NodeId.ENV) == null && !Files.exists(root.identityFile(DataRoot.NODE_ID))) {
                return Optional.empty();
            }
            return Optional.of(NodeId.resolve(root, env));
        } catch (IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    String storeDescription() {
        return store.describe();
    }

    /** Null when the store answered, else why it did not. */
    String storeProblem() {
        return storeProblem;
    }

    /** One pass's state for {@code /health}. */
    record PassState(String pass, Schedule schedule, boolean running, long runs, Optional<Instant> nextRun,
                     Optional<PassOutcome> outcome, Optional<PassOutcome.Findings> result) {
    }

    List<PassState> passStates() {
        List<PassState> out = new ArrayList<>();
        for (String pass : scheduler.passNames()) {
            out.add(new PassState(pass, scheduler.schedule(pass), scheduler.isRunning(pass),
                    scheduler.completedRuns(pass), scheduler.nextRun(pass), scheduler.lastOutcome(pass),
                    Optional.ofNullable(results.get(pass))));
        }
        return out;
    }

    /**
     * A read of {@code shard} refused to serve an object that is not the one its entry names
     * ({@link dev.felix.offload.log.format.CorruptionKind#OBJECT_MISMATCH}): {@code /health} says so
     * until the next scrub run.
     */
    void objectMismatch(String shard, dev.felix.offload.log.format.CorruptionException e) {
        if (objectMismatches.put(shard, e.getMessage()) == null) {
            LOG.error("{}: read refused: {}", shard, e.getMessage());
        }
    }

    /** Why the daemon is not ready: empty when the store answered and the last run of every pass went well. */
    List<String> notReadyReasons() {
        List<String> reasons = new ArrayList<>();
        if (storeProblem != null) {
            reasons.add("store: " + storeProblem);
        }
        new java.util.TreeMap<>(objectMismatches).forEach((shard, why) -> reasons.add("read: " + shard + ": " + why));
        for (PassState p : passStates()) {
            if (p.outcome().isPresent() && !p.outcome().get().succeeded()) {
                reasons.add(p.pass() + ": " + p.outcome().get().status().name().toLowerCase(java.util.Locale.ROOT)
                        + (p.outcome().get().error() == null ? "" : ": " + p.outcome().get().error()));
            } else if (p.result().isPresent()) {
                for (String problem : p.result().get().problems()) {
                    reasons.add(p.pass() + ": " + problem);
                }
            }
        }
        return reasons;
    }

    /** A tiered reader of {@code shard}, empty when the root has no such shard directory (see {@link ReadCommand#readableShard}). */
    Optional<TieredReader> reader(String shard) throws IOException {
        Optional<DataRoot.Shard> found = root.shard(shard);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        Path dir = found.get().directory();
        return Optional.of(readers.computeIfAbsent(shard, s -> new TieredReader(s, dir, store, chunks)));
    }
}
