package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.schedule.PassOutcome;
import dev.felix.offload.schedule.PassScheduler;
import dev.felix.offload.schedule.Schedule;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.read.TieredReader;
import org.slf4j.Logger;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * <p>It comes up in two steps: {@link #open} (the checks that need no store, the root's daemon lock
 * and the HTTP endpoint, which answers {@code /health} with 503 and the reason until the store has
 * answered) and {@link #connect} (the store probe, however long the store takes, the node claim and
 * the schedules). Readiness follows what the store's requests find ({@link StoreHealth}).
 *
 * <p>A stop ({@link #stop}) starts no further pass and no further store request (but the abort of a
 * multipart upload under way): a running offload ends once the requests it has in flight end,
 * recording what it proved, and a multipart upload cut short is aborted; retention and scrub end at
 * their next unit of work. Whatever still runs when the patience is nearly over is left (the open
 * uploads are aborted first), leaving the same state a crash would: nothing is recorded before it is
 * verified.
 */
public final class Daemon {

    private static final Logger LOG = DaemonLog.LOG;


    private final DaemonConfig config;
    private final DataRoot root;
    private final DaemonMetrics metrics;
    private final MeteredStore store;
    private final Map<String, String> env;
    private final ChunkCache chunks;
    private final Map<String, TieredReader> readers = new ConcurrentHashMap<>();
    /**
     * Reads refused because the store holds another object than an entry names, by shard: the latest
     * one's message. Kept until the next scrub run, whose findings then say what the store holds.
     */
    private final Map<String, String> objectMismatches = new ConcurrentHashMap<>();
    private final ScheduledPasses passes;
    private final PassScheduler scheduler;
    private final StoreHealth health;
    private final StoreProbe probe;
    private volatile boolean stopping;
    private Boolean stopResult;
    /** The blocking part of /read answers, so that an answer can be given at its deadline (see ReadEndpoint). */
    private final java.util.concurrent.ThreadPoolExecutor readWork;
    /** The survey's memo: a shard that did not change costs a few stat calls (see {@link ShardSurvey.Memo}). */
    private final ShardSurvey.Memo surveys = new ShardSurvey.Memo();
    private final SurveyCache surveyCache;
    /** What the gauges of the scrape under way show, set once before each scrape. */
    private volatile SurveyCache.Taken scrapeTaken;
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
        // Surveys after the first run on a thread of their own (which ends when idle): no scrape waits for one.
        java.util.concurrent.ThreadPoolExecutor surveyThread = new java.util.concurrent.ThreadPoolExecutor(0, 1, 30,
                java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "survey");
                    t.setDaemon(true);
                    return t;
                });
        this.surveyCache = new SurveyCache(() -> surveys.survey(root), System::nanoTime, surveyThread,
                SurveyCache.DEFAULT_MAX_WAIT_NANOS);
        this.metrics = new DaemonMetrics();
        this.health = new StoreHealth(StoreProbe.shortName(store.describe()));
        this.store = new MeteredStore(store, metrics, health);
        this.probe = new StoreProbe(this.store, health, root, config.retentionPassSettings().keyPrefix(), this::nodeId);
        // Twice the read threads: reads a deadline gave up on may still wait for the store a while.
        int workers = 2 * config.httpReadThreads;
        this.readWork = new java.util.concurrent.ThreadPoolExecutor(workers, workers, 60, java.util.concurrent.TimeUnit.SECONDS,
                new java.util.concurrent.SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "read-work");
                    t.setDaemon(true);
                    return t;
                });
        this.readWork.allowCoreThreadTimeOut(true);
        this.env = config.environment(processEnv);
        this.chunks = ChunkCache.forReads(this.store, config.chunkCacheBytes);
        this.passes = new ScheduledPasses(config, root, env, this.store, metrics, probe, clock,
                new ScheduledPasses.Listener() {
                    @Override
                    public void refused(NodeClaimCheck.RefusedException e) {
                        refusedBy(e);
                    }

                    @Override
                    public void scrubbed() {
                        objectMismatches.clear();
                    }

                    @Override
                    public void changed() {
                        surveyCache.changed();
                    }
                });
        this.scheduler = passes.scheduler();
        registerGauges();
    }

    private void registerGauges() {
        // One survey per scrape: taken (or reused, when a second old at most) before the gauges are read.
        // The survey gauges read NaN until the start-up survey has ended (a scrape waits for it 5 s at most).
        metrics.aroundScrape(() -> scrapeTaken = surveyCache.get(this::surveyFailed), () -> scrapeTaken = null);
        metrics.gauge("felix.local.bytes", "Bytes of segment files on local disk", this,
                d -> d.scraped(ShardSurvey.Totals::localBytes));
        metrics.gauge("felix.local.segments", "Segment files on local disk", this,
                d -> d.scraped(ShardSurvey.Totals::localSegments));
        metrics.gauge("felix.remote.bytes", "Bytes the manifests record in the store", this,
                d -> d.scraped(ShardSurvey.Totals::remoteBytes));
        metrics.gauge("felix.remote.segments", "Entries the manifests hold", this,
                d -> d.scraped(ShardSurvey.Totals::remoteSegments));
        metrics.gauge("felix.offload.lag.bytes", "Bytes of sealed segments not offloaded yet", this,
                d -> d.scraped(ShardSurvey.Totals::lagBytes));
        metrics.gauge("felix.offload.lag.segments", "Sealed segments not offloaded yet", this,
                d -> d.scraped(ShardSurvey.Totals::lagSegments));
        metrics.gauge("felix.survey.age.seconds", "Seconds since the survey of the data root that the local, remote "
                + "and lag gauges show began (a scrape waits 5 s at most for a newer one; NaN before the first ended)",
                this, d -> d.scrapedAgeSeconds());
        metrics.gauge("felix.store.ready", "1 when the store's latest requests were answered (the last pass, probe or "
                + "read that reached it found it working), 0 when one found it unusable (no answer, a timeout, 5xx or "
                + "throttling after every retry, credentials refused, no such bucket)", health, h -> h.ready() ? 1 : 0);
        io.micrometer.core.instrument.Gauge.builder("felix.store.last.success.timestamp", health,
                        h -> h.lastAnswerEpochMillis() / 1000.0)
                .description("When a store request was last answered, seconds since the epoch (0 before any)")
                .baseUnit("seconds").strongReference(true).register(metrics.registry());
        metrics.functionCounter("felix.remote.reads", "Reads served from the store (below the local base)", null,
                readers, m -> m.values().stream().mapToLong(TieredReader::remoteReads).sum());
        metrics.functionCounter("felix.remote.read.bytes", "Record bytes served from the store", "bytes", readers,
                m -> m.values().stream().mapToLong(TieredReader::remoteRecordBytes).sum());
        metrics.perShard(config.metricsShards, this::survey);
        metrics.chunkCache(chunks);
        for (String pass : PassNames.ALL) {
            metrics.gauge("felix.pass.last.success", "When a pass last ended without problems, seconds since the epoch",
                    passes.lastSuccess(), m -> m.containsKey(pass) ? m.get(pass).getEpochSecond() : 0, "pass", pass);
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

    /** {@link #open} and {@link #connect}. */
    public void start() throws IOException {
        open();
        connect();
    }

    /**
     * The checks that need no store (the data directory, the node id), the root's daemon lock, and
     * the HTTP endpoint: from here {@code /health} answers, 503 with the reason until the store has
     * answered.
     */
    public void open() throws IOException {
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
        synchronized (this) {
            if (stopping) {
                return;
            }
            try {
                daemonLock = RootLock.acquireForDaemon(config.dataDir);
            } catch (RootLock.HeldException e) {
                throw new StartRefusedException(config.file + ": " + DaemonConfig.DATA_DIR + ": " + e.getMessage());
            }
            http = StatusServer.start(this, config.httpBind, config.httpPort, config.httpReadThreads,
                    config.httpSecurity);
        }
        surveyCache.warm(); // the first scrape then finds a survey begun, at most, at start-up
    }

    /**
     * Asks the store (as long as it takes; a line says what is waited for once it takes more than a
     * moment), checks the node claim, and starts the schedules. Returns having started nothing when a
     * {@link #stop} came first or meanwhile.
     */
    public void connect() throws IOException {
        if (stopping) {
            return;
        }
        probe.probe();
        if (stopping) {
            return;
        }
        probe.checkClaim(StoreProbe.claimPolicy(config, takeOverNodeId), () -> stopping);
        synchronized (this) {
            if (stopping) {
                return;
            }
            scheduler.start();
        }
        for (String pass : scheduler.passNames()) {
            Schedule s = scheduler.schedule(pass);
            LOG.info("pass {} runs {} ({})", pass, s.expression(), s.describe());
        }
    }

    /** True once {@link #stop} was called. */
    public boolean stopping() {
        return stopping;
    }

    /**
     * Stops within {@code patience} (see {@link StopSequence}): no pass and no store request starts
     * from now on (but aborts of open multipart uploads); running passes get the patience less
     * {@link StopSequence#abortReserve} to end by themselves; then the multipart uploads still open are
     * aborted, the HTTP endpoint stops and the store is closed, none of it waited for past the
     * patience. Safe to call more than once, and at any moment of {@link #open} and {@link #connect}.
     *
     * @return true when every pass ended
     */
    public boolean stop(Duration patience) {
        synchronized (this) {
            if (stopResult != null) {
                return stopResult;
            }
            stopping = true;
        }
        boolean ended = StopSequence.run(patience, store, scheduler, () -> {
            if (http != null) {
                http.stop();
            }
            readWork.shutdownNow();
            chunks.close();
            store.close();
            return Boolean.TRUE;
        }, daemonLock);
        synchronized (this) {
            stopResult = ended;
        }
        return ended;
    }

    public int httpPort() {
        return http.port();
    }

    /** The port of the second, status-only listener ({@code http.status.port}), when there is one. */
    public java.util.OptionalInt statusPort() {
        return http.statusPort();
    }

    /** Where the status-only listener serves, when there is one, an IPv6 address in brackets. */
    public Optional<String> statusUrl() {
        return statusPort().isPresent()
                ? Optional.of("http://" + StatusServer.urlHost(config.httpSecurity.statusBind().orElse(config.httpBind))
                        + ":" + statusPort().getAsInt() + "/")
                : Optional.empty();
    }

    /** Where the HTTP endpoint serves, an IPv6 address in brackets: {@code https://[::1]:9464/}. */
    public String httpUrl() {
        return config.httpSecurity.scheme() + "://" + StatusServer.urlHost(config.httpBind) + ":" + http.port() + "/";
    }

    /** Runs {@code pass} as soon as it is idle (tests and operators); false when it is off or stopping. */
    boolean requestRun(String pass) {
        return passes.requestRun(pass);
    }

    DaemonMetrics metrics() {
        return metrics;
    }

    /**
     * The latest survey of the data root: when it ended more than a second ago, the next one is begun
     * in the background and this one answered meanwhile (see {@link SurveyCache}).
     */
    List<ShardSurvey.ShardStatus> survey() {
        return surveyCache.get(this::surveyFailed).shards();
    }

    /** One page of {@code /shards}: only its shards are read (see {@link ShardSurvey.Memo#page}). */
    ShardSurvey.Memo.Page surveyPage(String after, int limit) throws IOException {
        return surveys.page(root, after, limit);
    }


    private void surveyFailed(IOException e) {
        LOG.warn("survey of {} failed: {}", root.path(), e.getMessage());
    }

    /** Whether a pass waits for the data root now (tests). */
    boolean rootWanted() {
        return passes.rootWanted();
    }

    /** Surveys of the whole root taken so far. */
    long surveysTaken() {
        return surveyCache.surveys();
    }

    /** The survey the gauges show: the one the scrape under way took (see {@link DaemonMetrics#scrape}). */
    private SurveyCache.Taken scrapedSurvey() {
        SurveyCache.Taken t = scrapeTaken;
        return t == null ? surveyCache.get(this::surveyFailed) : t;
    }

    /** One sum of that survey; NaN while none has ended, so no gauge shows an unknown root as empty. */
    private double scraped(java.util.function.ToLongFunction<ShardSurvey.Totals> value) {
        SurveyCache.Taken t = scrapedSurvey();
        return t.known() ? value.applyAsLong(t.totals()) : Double.NaN;
    }

    private double scrapedAgeSeconds() {
        SurveyCache.Taken t = scrapedSurvey();
        return t.known() ? (surveyCache.nanoTime() - t.beganNanos()) / 1e9 : Double.NaN;
    }

    ScheduledPasses.ShardNote lastOffload(String shard) {
        return passes.lastOffload(shard);
    }

    ScheduledPasses.ShardNote lastRetention(String shard) {
        return passes.lastRetention(shard);
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

    /** Null when the store's latest requests were answered, else why it is not ready. */
    String storeProblem() {
        return health.problem();
    }

    StoreHealth storeHealth() {
        return health;
    }

    /** A /read begun at {@code startNanos} was answered: the store is ready again if it answered meanwhile. */
    void readSucceeded(long startNanos) {
        health.succeededSince(startNanos);
    }

    /** How long a /read answer may take before it is given up with 504 (http.read.timeout). */
    Duration readTimeout() {
        return config.httpReadTimeout;
    }

    /** Where /read answers do the part that may wait for the store. */
    java.util.concurrent.ExecutorService readWork() {
        return readWork;
    }

    /** Calls to the store under way, over every pass and read. */
    int storeCallsInFlight() {
        return store.inFlight();
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
                    passes.findings(pass)));
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
        if (stopping) {
            reasons.add("stopping");
        }
        String storeProblem = health.problem();
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

    /**
     * A tiered reader of {@code shard}, empty when the root has no such shard directory (see {@link ReadCommand#readableShard}).
     *
     * @throws IOException when the root lists {@code shard} as a name it could not read: not "no such shard"
     */
    Optional<TieredReader> reader(String shard) throws IOException {
        Optional<DataRoot.Shard> found = root.shard(shard);
        if (found.isEmpty()) {
            root.requireReadable(shard);
            return Optional.empty();
        }
        Path dir = found.get().directory();
        return Optional.of(readers.computeIfAbsent(shard, s -> new TieredReader(s, dir, store, chunks)));
    }
}
