package dev.felix.offload.daemon;

import dev.felix.offload.read.ChunkCache;

import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionOverride;
import dev.felix.offload.retention.RetentionPassSettings;
import dev.felix.offload.retention.RetentionRules;
import dev.felix.offload.retention.RetentionSettings;
import dev.felix.offload.schedule.Schedule;
import dev.felix.offload.schedule.StandardPass;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.StoreUriException;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.copy.VerifyMode;

import java.io.IOException;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The settings of {@code felix-offload run} (and of the one-shot commands given {@code --config}),
 * read from a {@link ConfigFile}. Every key is documented in {@code docs/configuration.md}; a key
 * not listed there is refused, and so is a value of the wrong form, naming the key and what was
 * expected. No key carries a secret: store credentials come from the environment.
 */
public final class DaemonConfig {

    static final String DATA_DIR = "data-dir";
    static final String STORE = "store";
    static final String NODE_ID = "node-id";
    static final String OFFLOAD_VERIFY = "offload.verify";
    static final String OFFLOAD_PARALLELISM = "offload.parallelism";
    static final String OFFLOAD_BANDWIDTH = "offload.bandwidth";
    static final String OFFLOAD_MAX_BYTES_IN_FLIGHT = "offload.max-bytes-in-flight";
    static final String OFFLOAD_SCHEDULE = "offload.schedule";
    /** How long a manifest entry stands before its local segment may be unlinked (see LocalRelease). */
    static final String OFFLOAD_UNLINK_SETTLE = "offload.unlink-settle";
    static final String RETENTION_SCHEDULE = "retention.schedule";
    static final String RETENTION_DELETE_BATCH = "retention.delete-batch-size";
    static final String RETENTION_DELETED_STREAMS = "retention.deleted-streams";
    static final String RETENTION_STREAMS = "retention.streams.";
    static final String RETENTION_SHARDS = "retention.shards.";
    static final String ORPHANS_SWEEP = "orphans.sweep";
    static final String ORPHANS_GRACE = "orphans.grace";
    static final String ORPHANS_DRY_RUN = "orphans.dry-run";
    static final String ORPHANS_FULL_SWEEP_EVERY = "orphans.full-sweep-every";
    static final String SCRUB_SCHEDULE = "scrub.schedule";
    static final String SCRUB_READ_BANDWIDTH = "scrub.read-bandwidth";
    /** Every object is read in full at least once in this many scheduled scrub runs (1: every run). */
    static final String SCRUB_FULL_READ_RUNS = "scrub.full-read-runs";
    static final int DEFAULT_SCRUB_FULL_READ_RUNS = 7;
    /** How many entries a scrub checks at once. */
    static final String SCRUB_CONCURRENCY = "scrub.concurrency";
    /** At most this many requests a scheduled scrub run makes for its checks; 0 for no limit. */
    static final String SCRUB_REQUEST_BUDGET = "scrub.request-budget";
    static final String SCHEDULE_ZONE = "schedule.zone";
    static final String HTTP_BIND = "http.bind";
    static final String HTTP_PORT = "http.port";
    static final String HTTP_READ_THREADS = "http.read.threads";
    static final String HTTP_READ_TIMEOUT = "http.read.timeout";
    static final String CHUNK_CACHE_BYTES = "chunk-cache.bytes";
    static final String METRICS_SHARDS = "metrics.shards";
    static final String LOG_LEVEL = "log.level";
    static final String SHUTDOWN_GRACE = "shutdown.grace";

    /** The schedule value that turns a pass off. */
    static final String OFF = "off";

    /** Every fixed key; overrides are {@code retention.streams.<pattern>.<key>} and {@code retention.shards.<dir>.<key>}. */
    static final List<String> KEYS = List.of(DATA_DIR, STORE, NODE_ID, OFFLOAD_VERIFY, OFFLOAD_PARALLELISM,
            OFFLOAD_BANDWIDTH, OFFLOAD_MAX_BYTES_IN_FLIGHT, OFFLOAD_SCHEDULE, OFFLOAD_UNLINK_SETTLE,
            RetentionSettings.LOCAL_RETENTION_BYTES,
            RetentionSettings.LOCAL_RETENTION_MS, RetentionSettings.RETENTION_BYTES, RetentionSettings.RETENTION_MS,
            RETENTION_SCHEDULE, RETENTION_DELETE_BATCH, RETENTION_DELETED_STREAMS, ORPHANS_SWEEP, ORPHANS_GRACE,
            ORPHANS_DRY_RUN, ORPHANS_FULL_SWEEP_EVERY, SCRUB_SCHEDULE, SCRUB_READ_BANDWIDTH, SCRUB_FULL_READ_RUNS, SCRUB_CONCURRENCY, SCRUB_REQUEST_BUDGET, SCHEDULE_ZONE, HTTP_BIND, HTTP_PORT, HTTP_READ_THREADS,
            HTTP_READ_TIMEOUT, CHUNK_CACHE_BYTES, METRICS_SHARDS, LOG_LEVEL, SHUTDOWN_GRACE);

    /**
     * Every fixed key the file may hold (overrides aside), {@link #KEYS} and the HTTP endpoint's
     * {@link HttpSecurity#KEYS}: for hints, and for checks of files written elsewhere, such as examples.
     */
    public static List<String> keys() {
        List<String> all = new ArrayList<>(KEYS);
        all.addAll(HttpSecurity.KEYS);
        return List.copyOf(all);
    }

    public static final long DEFAULT_SCRUB_READ_BANDWIDTH = 32L << 20;
    static final int DEFAULT_HTTP_PORT = 9464;
    static final long DEFAULT_CHUNK_CACHE_BYTES = 256L << 20;
    static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(30);
    static final Duration DEFAULT_HTTP_READ_TIMEOUT = Duration.ofSeconds(15);

    public final Path file;
    public final Path dataDir;
    public final String store;
    final Optional<String> nodeId;
    final VerifyMode verify;
    final int parallelism;
    final long bandwidth;
    /** Bytes of segments one offload pass uploads and verifies at once, over all shards. */
    final long maxBytesInFlight;
    final Optional<Schedule> offloadSchedule;
    public final RetentionRules rules;
    final Optional<Schedule> retentionSchedule;
    final int deleteBatchSize;
    final boolean deletedStreams;
    final boolean sweepOrphans;
    /** How long an entry stands before its local segment may go; see {@link #OFFLOAD_UNLINK_SETTLE}. */
    public final Duration unlinkSettle;
    final Duration orphanGrace;
    final boolean orphanDryRun;
    final Duration orphanFullSweepEvery;
    final Optional<Schedule> scrubSchedule;
    public final long scrubReadBandwidth;
    final int scrubFullReadRuns;
    public final int scrubConcurrency;
    public final long scrubRequestBudget;
    public final ZoneId zone;
    public final String httpBind;
    final int httpPort;
    /** How many /read answers may be in the making at once. */
    final int httpReadThreads;
    /** How long a /read answer may take before it is given up with 504. */
    final Duration httpReadTimeout;
    final long chunkCacheBytes;
    /** How many shards get series of their own in /metrics; 0 (the default) turns per-shard metrics off. */
    final int metricsShards;
    public final String logLevel;
    public final Duration shutdownGrace;
    /** Authentication and TLS of the HTTP endpoint, and its optional second listener. */
    public final HttpSecurity httpSecurity;

    private DaemonConfig(Path file, Reader r) throws ConfigException {
        this.file = file;
        Path base = file.toAbsolutePath().getParent();
        this.dataDir = base.resolve(r.required(DATA_DIR, "a directory path")).normalize();
        this.store = r.required(STORE, "a store URI");
        try {
            StoreUri.parse(store);
        } catch (StoreUriException e) {
            throw r.bad(STORE, e.getMessage());
        }
        this.nodeId = r.optional(NODE_ID);
        if (nodeId.isPresent()) {
            try {
                NodeId.validate(nodeId.get(), NODE_ID);
            } catch (IllegalArgumentException e) {
                throw r.bad(NODE_ID, e.getMessage());
            }
        }
        String verifyText = r.optional(OFFLOAD_VERIFY).orElse(VerifyMode.AUTO.label());
        try {
            this.verify = VerifyMode.parse(verifyText);
        } catch (IllegalArgumentException e) {
            throw r.expected(OFFLOAD_VERIFY, "auto, server-checksum, read-back or none", verifyText);
        }
        this.parallelism = r.integer(OFFLOAD_PARALLELISM, 2, 1, OffloadSettings.MAX_PARALLELISM);
        this.bandwidth = r.bytes(OFFLOAD_BANDWIDTH, 0, false);
        this.maxBytesInFlight = r.bytes(OFFLOAD_MAX_BYTES_IN_FLIGHT, OffloadSettings.DEFAULT_MAX_BYTES_IN_FLIGHT, false);
        if (maxBytesInFlight < OffloadSettings.MIN_BYTES_IN_FLIGHT) {
            throw r.expected(OFFLOAD_MAX_BYTES_IN_FLIGHT, "at least 1MiB (a number of bytes with a unit such as 256MiB)",
                    r.values.get(OFFLOAD_MAX_BYTES_IN_FLIGHT));
        }
        this.unlinkSettle = r.duration(OFFLOAD_UNLINK_SETTLE, dev.felix.offload.copy.LocalRelease.DEFAULT_SETTLE);
        if (unlinkSettle.compareTo(Duration.ofHours(1)) > 0) {
            throw r.expected(OFFLOAD_UNLINK_SETTLE, "at most 1h (a duration such as 5s)", r.values.get(OFFLOAD_UNLINK_SETTLE));
        }
        this.zone = zone(r);
        this.offloadSchedule = r.schedule(OFFLOAD_SCHEDULE, StandardPass.OFFLOAD, zone);
        this.retentionSchedule = r.schedule(RETENTION_SCHEDULE, StandardPass.RETENTION, zone);
        this.scrubSchedule = r.schedule(SCRUB_SCHEDULE, StandardPass.SCRUB, zone);
        this.deleteBatchSize = r.integer(RETENTION_DELETE_BATCH, 1000, 1, 1000);
        this.deletedStreams = r.bool(RETENTION_DELETED_STREAMS, true);
        this.sweepOrphans = r.bool(ORPHANS_SWEEP, true);
        this.orphanGrace = r.duration(ORPHANS_GRACE, OrphanSweepSettings.DEFAULT_GRACE);
        this.orphanDryRun = r.bool(ORPHANS_DRY_RUN, false);
        this.orphanFullSweepEvery = r.duration(ORPHANS_FULL_SWEEP_EVERY, OrphanSweepSettings.DEFAULT_FULL_SWEEP_EVERY);
        this.scrubReadBandwidth = r.bytes(SCRUB_READ_BANDWIDTH, DEFAULT_SCRUB_READ_BANDWIDTH, false);
        this.scrubFullReadRuns = r.integer(SCRUB_FULL_READ_RUNS, DEFAULT_SCRUB_FULL_READ_RUNS, 1, 10_000);
        this.scrubConcurrency = r.integer(SCRUB_CONCURRENCY, dev.felix.offload.scrub.Scrub.Limits.DEFAULT_CONCURRENCY, 1,
                dev.felix.offload.scrub.Scrub.Limits.MAX_CONCURRENCY);
        this.scrubRequestBudget = r.integer(SCRUB_REQUEST_BUDGET, 0, 0, Integer.MAX_VALUE);
        this.httpBind = r.optional(HTTP_BIND).orElse("127.0.0.1");
        try {
            java.net.InetAddress.getByName(httpBind);
        } catch (java.net.UnknownHostException e) {
            throw r.expected(HTTP_BIND, "an IP address or a host name this machine resolves", httpBind);
        }
        this.httpPort = r.integer(HTTP_PORT, DEFAULT_HTTP_PORT, 0, 65535);
        this.httpReadThreads = r.integer(HTTP_READ_THREADS, 4, 1, 64);
        this.httpReadTimeout = r.duration(HTTP_READ_TIMEOUT, DEFAULT_HTTP_READ_TIMEOUT);
        if (httpReadTimeout.isZero() || httpReadTimeout.compareTo(Duration.ofHours(1)) > 0) {
            throw r.expected(HTTP_READ_TIMEOUT, "a duration from 1ms to 1h such as 15s", r.values.get(HTTP_READ_TIMEOUT));
        }
        this.chunkCacheBytes = r.bytes(CHUNK_CACHE_BYTES, DEFAULT_CHUNK_CACHE_BYTES, false);
        if (chunkCacheBytes < 4L << 20) {
            throw r.expected(CHUNK_CACHE_BYTES, "at least 4MiB", r.values.get(CHUNK_CACHE_BYTES));
        }
        this.metricsShards = r.integer(METRICS_SHARDS, 0, 0, DaemonMetrics.MAX_SHARD_SERIES);
        String level = r.optional(LOG_LEVEL).orElse("info").toLowerCase(Locale.ROOT);
        if (!List.of("error", "warn", "info", "debug", "trace").contains(level)) {
            throw r.expected(LOG_LEVEL, "error, warn, info, debug or trace", r.values.get(LOG_LEVEL));
        }
        this.logLevel = level;
        this.shutdownGrace = r.duration(SHUTDOWN_GRACE, DEFAULT_SHUTDOWN_GRACE);
        this.httpSecurity = httpSecurity(r, base, httpBind, httpPort);
        this.rules = rules(r);
        r.refuseUnknown();
    }

    /** Reads and checks {@code file}. */
    public static DaemonConfig load(Path file) throws IOException, ConfigException {
        return new DaemonConfig(file, new Reader(file, ConfigFile.read(file)));
    }

    /** Checks keys already read, as if from {@code file} (for tests). */
    public static DaemonConfig of(Path file, Map<String, String> values) throws ConfigException {
        return new DaemonConfig(file, new Reader(file, values));
    }

    /**
     * The most heap the endpoint's reads may hold at once: the chunk cache (chunks held and on their
     * way), and each {@code /read} thread's largest answer with the two partly used chunks its records
     * may be views of. Heaps are sized from it (docs/operations.md, "Memory").
     */
    public long readHeapBound() {
        return chunkCacheBytes + httpReadThreads * (ReadEndpoint.MAX_MAX_BYTES + 2L * ChunkCache.DEFAULT_CHUNK_BYTES);
    }

    /**
     * The longest a stop may take after SIGTERM: running passes get {@code shutdown.grace} to end at a
     * safe point, then, interrupted, as long again ({@link Daemon#stop}). A supervisor's stop timeout
     * (systemd's {@code TimeoutStopSec}, Kubernetes' {@code terminationGracePeriodSeconds}) must exceed it.
     */
    public Duration drainBound() {
        return shutdownGrace.multipliedBy(2);
    }

    /**
     * The http.auth.*, http.tls.* and http.status.* keys. A bind other than loopback with nothing that
     * authenticates is refused unless http.auth.allow-unauthenticated says so: /read would serve every
     * record of the node to whoever reaches the port.
     */
    private static HttpSecurity httpSecurity(Reader r, Path base, String bind, int port) throws ConfigException {
        Optional<Path> tokenFile = r.optional(HttpSecurity.TOKEN_FILE).map(f -> base.resolve(f).normalize());
        Optional<String> scopeText = r.optional(HttpSecurity.SCOPE);
        HttpSecurity.Scope scope = HttpSecurity.Scope.DATA;
        if (scopeText.isPresent()) {
            scope = HttpSecurity.Scope.parse(scopeText.get()).orElseThrow(() -> r.expected(HttpSecurity.SCOPE,
                    "data (everything but /metrics, /health and /health/live) or all", scopeText.get()));
        }
        boolean allowUnauthenticated = r.bool(HttpSecurity.ALLOW_UNAUTHENTICATED, false);
        Optional<Path> certificate = r.optional(HttpSecurity.TLS_CERTIFICATE).map(f -> base.resolve(f).normalize());
        Optional<Path> key = r.optional(HttpSecurity.TLS_KEY).map(f -> base.resolve(f).normalize());
        Optional<Path> clientCa = r.optional(HttpSecurity.TLS_CLIENT_CA).map(f -> base.resolve(f).normalize());
        Optional<String> statusBind = r.optional(HttpSecurity.STATUS_BIND);
        java.util.OptionalInt statusPort = r.values.containsKey(HttpSecurity.STATUS_PORT)
                ? java.util.OptionalInt.of(r.integer(HttpSecurity.STATUS_PORT, 0, 0, 65535)) : java.util.OptionalInt.empty();
        if (certificate.isPresent() != key.isPresent()) {
            String missing = certificate.isPresent() ? HttpSecurity.TLS_KEY : HttpSecurity.TLS_CERTIFICATE;
            throw r.bad(missing, "is required with " + (certificate.isPresent() ? HttpSecurity.TLS_CERTIFICATE
                    : HttpSecurity.TLS_KEY) + " (TLS needs the certificate and its private key, PEM files)");
        }
        if (clientCa.isPresent() && certificate.isEmpty()) {
            throw r.bad(HttpSecurity.TLS_CLIENT_CA, "needs " + HttpSecurity.TLS_CERTIFICATE + " and " + HttpSecurity.TLS_KEY
                    + ": client certificates are asked for only over TLS");
        }
        if (statusBind.isPresent()) {
            try {
                java.net.InetAddress.getByName(statusBind.get());
            } catch (java.net.UnknownHostException e) {
                throw r.expected(HttpSecurity.STATUS_BIND, "an IP address or a host name this machine resolves", statusBind.get());
            }
            if (statusPort.isEmpty()) {
                throw r.bad(HttpSecurity.STATUS_BIND, "is used only with " + HttpSecurity.STATUS_PORT
                        + " (the second listener's port)");
            }
        }
        if (statusPort.isPresent() && statusPort.getAsInt() != 0 && statusPort.getAsInt() == port
                && statusBind.orElse(bind).equals(bind)) {
            throw r.bad(HttpSecurity.STATUS_PORT, "is " + port + ", the same as " + HTTP_PORT
                    + "; the second listener needs a port of its own");
        }
        HttpSecurity security = new HttpSecurity(tokenFile, scope, allowUnauthenticated, certificate, key, clientCa,
                statusBind, statusPort);
        if (!security.authenticates() && !allowUnauthenticated && !HttpSecurity.loopback(bind)) {
            throw r.bad(HTTP_BIND, bind + " is not a loopback address and nothing authenticates /read and /shards there: set "
                    + HttpSecurity.TOKEN_FILE + " or " + HttpSecurity.TLS_CLIENT_CA + ", or "
                    + HttpSecurity.ALLOW_UNAUTHENTICATED + ": true to serve every record to whoever reaches the port");
        }
        return security;
    }

    private static ZoneId zone(Reader r) throws ConfigException {
        Optional<String> text = r.optional(SCHEDULE_ZONE);
        if (text.isEmpty()) {
            return ZoneId.systemDefault();
        }
        try {
            return ZoneId.of(text.get());
        } catch (DateTimeException e) {
            throw r.expected(SCHEDULE_ZONE, "a time zone id such as UTC or Europe/Berlin", text.get());
        }
    }

    private static RetentionRules rules(Reader r) throws ConfigException {
        RetentionSettings defaults = RetentionSettings.defaults();
        for (String key : RetentionSettings.KEYS) {
            defaults = defaults.with(key, r.limit(key, key));
        }
        Map<String, Map<String, Long>> streams = new LinkedHashMap<>();
        Map<String, Map<String, Long>> shards = new LinkedHashMap<>();
        for (String key : new ArrayList<>(r.values.keySet())) {
            Map<String, Map<String, Long>> target;
            String rest;
            if (key.startsWith(RETENTION_STREAMS)) {
                target = streams;
                rest = key.substring(RETENTION_STREAMS.length());
            } else if (key.startsWith(RETENTION_SHARDS)) {
                target = shards;
                rest = key.substring(RETENTION_SHARDS.length());
            } else {
                continue;
            }
            String setting = overriddenKey(rest);
            String who = setting == null ? "" : rest.substring(0, rest.length() - setting.length() - 1);
            if (setting == null || who.isEmpty()) {
                throw r.bad(key, "expected " + key.substring(0, key.length() - rest.length())
                        + (target == streams ? "<tenant/namespace/stream>" : "<shard directory>") + ".<key> with <key> one of "
                        + RetentionSettings.KEYS);
            }
            String misspelt = misspeltKey(who, setting, target == shards);
            if (misspelt != null) {
                throw r.bad(key, misspelt);
            }
            target.computeIfAbsent(who, w -> new LinkedHashMap<>()).put(setting, r.limit(key, setting));
        }
        RetentionRules.Builder builder = RetentionRules.builder(defaults);
        for (Map.Entry<String, Map<String, Long>> e : streams.entrySet()) {
            try {
                builder.forStreams(e.getKey(), RetentionOverride.of(e.getValue()));
            } catch (IllegalArgumentException ex) {
                throw r.bad(RETENTION_STREAMS + e.getKey(), ex.getMessage());
            }
        }
        for (Map.Entry<String, Map<String, Long>> e : shards.entrySet()) {
            try {
                builder.forShardDirectory(e.getKey(), RetentionOverride.of(e.getValue()));
            } catch (IllegalArgumentException ex) {
                throw r.bad(RETENTION_SHARDS + e.getKey(), ex.getMessage());
            }
        }
        return builder.build();
    }

    /**
     * Why an override key whose last key is misspelt must be refused, or null. A misspelt last key
     * with a valid key at its end ({@code locl.retention.ms}, {@code lokal.retention.bytes}) reads as
     * that key for a name ending in the typo, which would take effect nowhere, or as another limit.
     * A name may hold a dot (a stream's; and a copied shard directory, {@code <dir>.bak}, is listed by the
     * data root too), so only a last word that makes the key within two edits of another retention key
     * is taken for a typo.
     */
    static String misspeltKey(String who, String setting, boolean shardDirectory) {
        if (shardDirectory && (who.startsWith(".") || who.startsWith("/") || who.contains(".."))) {
            return null; // a path, not a name: refused as one by the rules' own check
        }
        for (String k : RetentionSettings.KEYS) {
            if (who.endsWith("." + k)) {
                return "'" + who + "." + setting + "' names two keys, " + k + " and " + setting + "; expected "
                        + (shardDirectory ? "retention.shards.<shard directory>" : "retention.streams.<tenant/namespace/stream>")
                        + ".<key> with <key> one of " + RetentionSettings.KEYS;
            }
        }
        int dot = who.lastIndexOf('.');
        if (dot < 0 || (!shardDirectory && dot < who.lastIndexOf('/'))) {
            return null;
        }
        String written = who.substring(dot + 1) + "." + setting;
        String nearest = setting;
        int best = Integer.MAX_VALUE;
        for (String k : RetentionSettings.KEYS) {
            if (k.equals(setting)) {
                continue; // "<word>.<setting>" is always that near its own last key
            }
            int d = ConfigValues.distance(written, k);
            if (d < best) {
                best = d;
                nearest = k;
            }
        }
        String hint = best <= 3 ? " (did you mean " + nearest + "?)" : "";
        if (best > 2) {
            return null;
        }
        if (shardDirectory) {
            return "'" + written + "' reads as a misspelt key" + hint + ", not as a shard directory named '" + who
                    + "'; expected retention.shards.<shard directory>.<key> with <key> one of " + RetentionSettings.KEYS;
        }
        return "'" + written + "' reads as a misspelt key" + hint + ", not as a stream named '"
                + who.substring(who.lastIndexOf('/') + 1) + "'; expected retention.streams.<tenant/namespace/stream>.<key> "
                + "with <key> one of " + RetentionSettings.KEYS;
    }

    /** The retention key {@code rest} ends with (after a dot), longest first; null when none. */
    private static String overriddenKey(String rest) {
        List<String> keys = new ArrayList<>(RetentionSettings.KEYS);
        keys.sort(Comparator.comparingInt(String::length).reversed());
        for (String k : keys) {
            if (rest.endsWith("." + k)) {
                return k;
            }
        }
        return null;
    }

    /** Offload settings for the daemon and the one-shot command: local copies go by retention, not here. */
    public OffloadSettings offloadSettings() {
        return OffloadSettings.defaults().withVerify(verify).withParallelism(parallelism)
                .withUploadBytesPerSecond(bandwidth).withMaxBytesInFlight(maxBytesInFlight)
                .withLocalRetention(new LocalRetention.KeepAll()).withUnlinkSettle(unlinkSettle);
    }

    public RetentionPassSettings retentionPassSettings() {
        return RetentionPassSettings.defaults().withUnlinkSettle(unlinkSettle).withDeleteBatchSize(deleteBatchSize)
                .withRemoveDeletedStreams(deletedStreams).withSweepOrphans(sweepOrphans)
                .withOrphanSweep(OrphanSweepSettings.defaults().withGrace(orphanGrace).withDryRun(orphanDryRun)
                        .withFullSweepEvery(orphanFullSweepEvery)
                        .withDeleteBatchSize(deleteBatchSize));
    }

    /**
     * The environment the passes resolve the node id in: the process's, with {@code FELIX_NODE_ID}
     * set to {@code node-id} when the file gives one.
     */
    public Map<String, String> environment(Map<String, String> processEnv) {
        Map<String, String> env = new HashMap<>(processEnv);
        nodeId.ifPresent(id -> env.put(NodeId.ENV, id));
        return env;
    }

    /** Takes keys out of the file's values as they are read, so what is left at the end is unknown. */
    private static final class Reader {
        public final Path file;
        final Map<String, String> values;
        final Map<String, String> unread;

        Reader(Path file, Map<String, String> values) {
            this.file = file;
            this.values = values;
            this.unread = new LinkedHashMap<>(values);
        }

        Optional<String> optional(String key) throws ConfigException {
            String v = unread.remove(key);
            if (v != null && v.isEmpty()) {
                throw bad(key, "has no value");
            }
            return Optional.ofNullable(v);
        }

        String required(String key, String what) throws ConfigException {
            return optional(key).orElseThrow(() -> new ConfigException(key, file + ": " + key
                    + ": is required (" + what + ")"));
        }

        int integer(String key, int dflt, int min, int max) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return dflt;
            }
            Integer v = ConfigValues.integer(text.get());
            if (v == null || v < min || v > max) {
                throw expected(key, "an integer from " + min + " to " + max, text.get());
            }
            return v;
        }

        long bytes(String key, long dflt, boolean unlimitedAllowed) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return dflt;
            }
            Long v = ConfigValues.bytes(text.get());
            if (v == null || v < (unlimitedAllowed ? -1 : 0)) {
                throw expected(key, "a number of bytes >= 0 (units B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
                        + (unlimitedAllowed ? " or -1 for unlimited" : ""), text.get());
            }
            return v;
        }

        /** A retention limit under {@code key}, read as the retention key {@code setting}. */
        long limit(String key, String setting) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return RetentionSettings.UNLIMITED;
            }
            Long v = setting.endsWith(".ms") ? ConfigValues.millis(text.get()) : ConfigValues.bytes(text.get());
            if (v == null || v < RetentionSettings.UNLIMITED) {
                throw expected(key, setting.endsWith(".ms")
                        ? "-1 (unlimited), milliseconds, or a duration such as 7d, 12h, 30m"
                        : "-1 (unlimited) or a number of bytes (units B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
                        text.get());
            }
            return v;
        }

        boolean bool(String key, boolean dflt) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return dflt;
            }
            Boolean v = ConfigValues.bool(text.get());
            if (v == null) {
                throw expected(key, "true or false", text.get());
            }
            return v;
        }

        Duration duration(String key, Duration dflt) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return dflt;
            }
            Duration v = ConfigValues.duration(text.get());
            if (v == null) {
                throw expected(key, "a duration such as 500ms, 30s, 15m, 1h, 2d or PT1H", text.get());
            }
            return v;
        }

        Optional<Schedule> schedule(String key, StandardPass pass, ZoneId zone) throws ConfigException {
            Optional<String> text = optional(key);
            if (text.isEmpty()) {
                return Optional.of(pass.defaultSchedule());
            }
            if (text.get().equalsIgnoreCase(OFF)) {
                return Optional.empty();
            }
            Schedule schedule;
            try {
                schedule = Schedule.parse(text.get());
            } catch (IllegalArgumentException e) {
                throw bad(key, "expected a 5-field Unix or 6/7-field Quartz cron expression, or off: " + e.getMessage());
            }
            // A valid expression may still never fire (30 February, a year gone by): the pass would never run
            // while everything looked ready. Say so now; "off" is how a pass is turned off.
            java.time.Instant now = java.time.Instant.now();
            if (schedule.nextAfter(now, zone).isEmpty()) {
                throw bad(key, "cron expression '" + text.get() + "' never fires: it names no time after "
                        + now.atZone(zone).withNano(0).toOffsetDateTime() + " (" + zone + "); give \"off\" to turn the "
                        + pass.name().toLowerCase(Locale.ROOT) + " pass off");
            }
            return Optional.of(schedule);
        }

        ConfigException expected(String key, String what, String got) {
            return new ConfigException(key, file + ": " + key + ": expected " + what + ", got '" + got + "'");
        }

        ConfigException bad(String key, String message) {
            return new ConfigException(key, file + ": " + key + ": " + message);
        }

        void refuseUnknown() throws ConfigException {
            for (String key : unread.keySet()) {
                if (key.startsWith(RETENTION_STREAMS) || key.startsWith(RETENTION_SHARDS)) {
                    continue; // read by rules()
                }
                String hint = "";
                int best = Integer.MAX_VALUE;
                for (String known : keys()) {
                    int d = ConfigValues.distance(key, known);
                    if (d < best) {
                        best = d;
                        hint = known;
                    }
                }
                throw new ConfigException(key, file + ": " + key + ": unknown key"
                        + (best <= 3 ? " (did you mean " + hint + "?)" : "")
                        + "; every key is listed in docs/configuration.md");
            }
        }
    }
}
