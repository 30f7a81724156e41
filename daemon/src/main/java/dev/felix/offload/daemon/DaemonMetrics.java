package dev.felix.offload.daemon;

import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.retention.HeldShard;
import dev.felix.offload.schedule.FailureKind;
import dev.felix.offload.schedule.PassOutcome;
import dev.felix.offload.retention.RetentionProblem;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.SegmentUpload;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.ShardStop;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.ChecksumMismatchException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.InvalidKeyException;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The daemon's metrics, in one Micrometer registry scraped in the Prometheus text format. Names
 * are Micrometer's dotted ones; Prometheus sees them with underscores and the usual suffixes
 * ({@code felix.offload.bytes} is {@code felix_offload_bytes_total}). docs/configuration.md lists them.
 */
final class DaemonMetrics {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Counter bytesOffloaded;
    private final Counter segmentsOffloaded;
    private final Counter verificationFailures;
    private final Counter collisions;
    /** Per-shard gauges, set from the survey before each scrape; null when per-shard metrics are off. */
    private io.micrometer.core.instrument.MultiGauge shardLagBytes;
    private io.micrometer.core.instrument.MultiGauge shardLagSegments;
    private io.micrometer.core.instrument.MultiGauge shardRemoteBytes;
    private final java.util.concurrent.atomic.AtomicLong shardsOmitted = new java.util.concurrent.atomic.AtomicLong();
    private int shardSeries;
    private java.util.function.Supplier<List<ShardSurvey.ShardStatus>> shardSource;
    private final Timer uploads;
    private final Map<String, Counter> storeErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> passDurations = new ConcurrentHashMap<>();
    /** The share of entries the last scrub checked (a double's bits; 1 before any). */
    private final java.util.concurrent.atomic.AtomicLong scrubCovered =
            new java.util.concurrent.atomic.AtomicLong(Double.doubleToRawLongBits(1));
    /** Per reason a shard is held: shards, objects, bytes, as the last sweep found them. */
    private final Map<HeldShard.Reason, java.util.concurrent.atomic.AtomicLongArray> held =
            new java.util.EnumMap<>(HeldShard.Reason.class);

    DaemonMetrics() {
        bytesOffloaded = Counter.builder("felix.offload.bytes").description("Segment bytes uploaded, verified and recorded")
                .baseUnit("bytes").register(registry);
        segmentsOffloaded = Counter.builder("felix.offload.segments")
                .description("Segments uploaded, verified and recorded").register(registry);
        verificationFailures = Counter.builder("felix.offload.verification.failures")
                .description("Uploads whose copy did not match the local bytes (each is deleted and uploaded again)")
                .register(registry);
        collisions = Counter.builder("felix.offload.collisions")
                .description("Uploads refused because their key already held another object (nothing was replaced"
                        + " or deleted; the segment stays local and unrecorded)")
                .register(registry);
        uploads = Timer.builder("felix.store.upload").description("Latency of one object put (segments and indexes)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(5)).register(registry);
        for (HeldShard.Reason reason : HeldShard.Reason.values()) {
            java.util.concurrent.atomic.AtomicLongArray values = new java.util.concurrent.atomic.AtomicLongArray(3);
            held.put(reason, values);
            String[] tags = {"reason", reason.label()};
            gauge("felix.orphans.held.shards", "Shards whose unnamed objects the last sweep kept, by reason "
                    + "(missing-shard: the root has no such directory)", values, v -> v.get(0), tags);
            gauge("felix.orphans.held.objects", "Objects of held shards the last sweep kept", values, v -> v.get(1), tags);
            gauge("felix.orphans.held.bytes", "Bytes of held shards' objects the last sweep kept", values,
                    v -> v.get(2), tags);
        }
        gauge("felix.scrub.covered.ratio", "The share of manifest entries the last scrub checked (below 1 when its "
                + "request budget ran out; the next run goes on from there)", scrubCovered,
                v -> Double.longBitsToDouble(v.get()));
        registerZeros();
    }

    /** The store calls {@link MeteredStore} counts failures of, by the operation name it gives them. */
    static final List<String> STORE_OPERATIONS = List.of("put", "get", "head", "list", "delete", "abort-uploads",
            "probe");
    /** The failures a store call ends in, by type (see {@link #kindOf}). */
    static final List<Class<? extends Throwable>> STORE_FAILURES = List.of(StoreException.class,
            TransientStoreException.class, ThrottledException.class, AccessDeniedException.class,
            ObjectNotFoundException.class, StoreRejectedException.class, IntegrityRejectedException.class,
            ChecksumMismatchException.class, PreconditionFailedException.class, InvalidRangeException.class,
            InvalidKeyException.class, CapabilityMissingException.class);

    /**
     * Every counter exists from start-up at zero, with each label value it can take, so an alert on
     * {@code increase()} sees the first event (a series born at 1 has no increase to show).
     */
    private void registerZeros() {
        for (String op : STORE_OPERATIONS) {
            for (Class<? extends Throwable> failure : STORE_FAILURES) {
                storeErrorCounter(op, kindOf(failure));
            }
        }
        for (dev.felix.offload.copy.CopyProofKind proof : dev.felix.offload.copy.CopyProofKind.values()) {
            proofCounters(proof.label());
        }
        retentionCounts(0, 0, 0, 0, 0, 0, 0, 0, 0);
        for (RetentionProblem.Kind kind : RetentionProblem.Kind.values()) {
            retentionProblems(kind);
        }
        count("felix.scrub.entries.checked", "Manifest entries a scrub checked", null, null);
        count("felix.scrub.requests", "Requests scrubs made to check entries (HEADs and GETs)", null, null);
        for (Scrub.Kind kind : Scrub.Kind.values()) {
            count("felix.scrub.anomalies", "Anomalies scrubs found, by kind", "kind", kind.label());
        }
        for (String pass : PassNames.ALL) {
            for (PassOutcome.Status status : PassOutcome.Status.values()) {
                passRuns(pass, status);
            }
        }
    }

    /**
     * Segments and bytes recorded, by how their copies were proven ({@code content-md5},
     * {@code read-back}, ...): the {@code read-back} bytes are those the pass read back from the store.
     */
    private Counter[] proofCounters(String proof) {
        return new Counter[] {
            count("felix.offload.proven.segments", "Segments recorded, by how their copy was proven", "proof", proof),
            count("felix.offload.proven.bytes", "Segment bytes recorded, by how their copy was proven (read-back: "
                    + "read back from the store once more)", "proof", proof)
        };
    }

    private Counter passRuns(String pass, PassOutcome.Status status) {
        return count("felix.pass.runs", "Scheduled pass runs, by pass and how they ended", "pass", pass,
                "status", status.name().toLowerCase(Locale.ROOT));
    }

    /** The most shards {@code metrics.shards} may give series of their own. */
    static final int MAX_SHARD_SERIES = 1000;
    /** The {@code shard} label of the series summing the shards beyond {@code metrics.shards}. */
    static final String OTHER_SHARDS = "(other)";

    /**
     * Turns on per-shard lag and remote-bytes gauges for at most {@code max} shards, read from
     * {@code survey} before each scrape. The label count stays bounded: the first {@code max} shard
     * directories by name get series of their own (so a shard keeps its series while shards come and
     * go after it), every other shard is summed into one series labelled {@value #OTHER_SHARDS}, and
     * {@code felix_shard_metrics_omitted_shards} says how many it holds.
     */
    void perShard(int max, java.util.function.Supplier<List<ShardSurvey.ShardStatus>> survey) {
        if (max <= 0) {
            return;
        }
        shardSeries = max;
        shardSource = survey;
        shardLagBytes = io.micrometer.core.instrument.MultiGauge.builder("felix.shard.lag.bytes")
                .description("Bytes of a shard's sealed segments not offloaded yet (metrics.shards)").baseUnit("bytes")
                .register(registry);
        shardLagSegments = io.micrometer.core.instrument.MultiGauge.builder("felix.shard.lag.segments")
                .description("A shard's sealed segments not offloaded yet (metrics.shards)").register(registry);
        shardRemoteBytes = io.micrometer.core.instrument.MultiGauge.builder("felix.shard.remote.bytes")
                .description("Bytes a shard's manifest records in the store (metrics.shards)").baseUnit("bytes")
                .register(registry);
        gauge("felix.shard.metrics.omitted.shards", "Shards beyond metrics.shards, summed in the shard=\"(other)\" series",
                shardsOmitted, java.util.concurrent.atomic.AtomicLong::get);
    }

    private void refreshShards() {
        if (shardSource == null) {
            return;
        }
        List<ShardSurvey.ShardStatus> shards = new java.util.ArrayList<>(shardSource.get());
        shards.sort(java.util.Comparator.comparing(ShardSurvey.ShardStatus::shard));
        List<io.micrometer.core.instrument.MultiGauge.Row<?>> lagBytes = new java.util.ArrayList<>();
        List<io.micrometer.core.instrument.MultiGauge.Row<?>> lagSegments = new java.util.ArrayList<>();
        List<io.micrometer.core.instrument.MultiGauge.Row<?>> remoteBytes = new java.util.ArrayList<>();
        long[] other = new long[3];
        int omitted = 0;
        for (int i = 0; i < shards.size(); i++) {
            ShardSurvey.ShardStatus s = shards.get(i);
            if (i < shardSeries) {
                io.micrometer.core.instrument.Tags tags = io.micrometer.core.instrument.Tags.of("shard", s.shard());
                lagBytes.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, s.lagBytes()));
                lagSegments.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, s.lagSegments()));
                remoteBytes.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, s.remoteBytes()));
            } else {
                other[0] += s.lagBytes();
                other[1] += s.lagSegments();
                other[2] += s.remoteBytes();
                omitted++;
            }
        }
        if (omitted > 0) {
            io.micrometer.core.instrument.Tags tags = io.micrometer.core.instrument.Tags.of("shard", OTHER_SHARDS);
            lagBytes.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, other[0]));
            lagSegments.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, other[1]));
            remoteBytes.add(io.micrometer.core.instrument.MultiGauge.Row.of(tags, other[2]));
        }
        shardsOmitted.set(omitted);
        // overwrite: a shard gone from the root (forgotten, or deleted) loses its series.
        shardLagBytes.register(lagBytes, true);
        shardLagSegments.register(lagSegments, true);
        shardRemoteBytes.register(remoteBytes, true);
    }

    PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Run once around each scrape: where the daemon takes the one survey the scrape's gauges read, and lets it go. */
    private Runnable beforeScrape = () -> { };
    private Runnable afterScrape = () -> { };

    void aroundScrape(Runnable before, Runnable after) {
        this.beforeScrape = java.util.Objects.requireNonNull(before, "before");
        this.afterScrape = java.util.Objects.requireNonNull(after, "after");
    }

    /** The registry in the Prometheus text format (version 0.0.4). */
    synchronized String scrape() {
        beforeScrape.run();
        try {
            refreshShards();
            return registry.scrape();
        } finally {
            afterScrape.run();
        }
    }

    Timer uploads() {
        return uploads;
    }

    /** Counts a store call that failed, by what kind of answer it was and which call. */
    void storeError(String operation, Throwable error) {
        storeErrorCounter(operation, kindOf(error)).increment();
    }

    private Counter storeErrorCounter(String operation, String kind) {
        return storeErrors.computeIfAbsent(operation + "/" + kind, k -> Counter.builder("felix.store.errors")
                .description("Store calls that failed, by kind of failure and operation")
                .tag("kind", kind).tag("operation", operation).register(registry));
    }

    /** {@code ThrottledException} as {@code throttled}, {@code ObjectNotFoundException} as {@code object_not_found}. */
    static String kindOf(Throwable error) {
        return FailureKind.of(error);
    }

    static String kindOf(Class<? extends Throwable> type) {
        return FailureKind.of(type);
    }

    /** Adds what an offload pass did. */
    void offloaded(PassReport report) {
        for (ShardResult s : report.shards()) {
            for (SegmentUpload u : s.uploaded()) {
                bytesOffloaded.increment(u.bytes());
                segmentsOffloaded.increment();
                verificationFailures.increment(u.attempts() - 1);
                Counter[] byProof = proofCounters(u.verifiedBy().label());
                byProof[0].increment();
                byProof[1].increment(u.bytes());
            }
            if (s.collision() != null) {
                collisions.increment();
            }
            if (s.stop() instanceof ShardStop.VerificationFailed failed) {
                verificationFailures.increment(failed.attempts());
            }
        }
    }

    /** Adds what a retention pass did, and sets the held-shard gauges from its sweep. */
    void retained(RetentionReport r) {
        retentionCounts(r.localSegmentsDeleted(), r.remoteSegmentsDeleted(), r.localBytesDeleted(),
                r.remoteBytesDeleted(), r.remoteObjectsDeleted(), r.deletedStreamDirectoriesFinished(), r.orphansFound(),
                r.orphansDeleted(), r.orphanSweep().map(o -> o.abortedUploads().size()).orElse(0));
        for (RetentionProblem p : r.problems()) {
            retentionProblems(p.kind()).increment();
        }
        r.orphanSweep().ifPresent(o -> {
            for (HeldShard.Reason reason : HeldShard.Reason.values()) {
                long shards = 0;
                long objects = 0;
                long bytes = 0;
                for (HeldShard h : o.held()) {
                    if (h.reason() == reason) {
                        shards++;
                        objects += h.objects();
                        bytes += h.bytes();
                    }
                }
                java.util.concurrent.atomic.AtomicLongArray values = held.get(reason);
                values.set(0, shards);
                values.set(1, objects);
                values.set(2, bytes);
            }
        });
    }

    private Counter retentionProblems(RetentionProblem.Kind kind) {
        return count("felix.retention.problems", "Problems retention passes met and reported (damaged or mismatched "
                + "local segments, timestamps ahead of the clock), by kind", "kind", kind.label());
    }

    private void retentionCounts(double localSegments, double remoteSegments, double localBytes, double remoteBytes,
                                 double objects, double streamDirs, double orphansFound, double orphansDeleted,
                                 double abortedUploads) {
        count("felix.retention.deleted.segments", "Segments removed by retention", "where", "local")
                .increment(localSegments);
        count("felix.retention.deleted.segments", "Segments removed by retention", "where", "remote")
                .increment(remoteSegments);
        count("felix.retention.deleted.bytes", "Segment bytes removed by retention", "where", "local")
                .increment(localBytes);
        count("felix.retention.deleted.bytes", "Segment bytes removed by retention", "where", "remote")
                .increment(remoteBytes);
        count("felix.retention.deleted.objects", "Objects deleted for expired entries and deleted streams", null, null)
                .increment(objects);
        count("felix.retention.deleted.stream.directories", "Directories under .deleted/ finished", null, null)
                .increment(streamDirs);
        count("felix.orphans.found", "Objects under this node's prefix that no manifest names, per sweep", null, null)
                .increment(orphansFound);
        count("felix.orphans.deleted", "Orphans deleted by the sweep", null, null).increment(orphansDeleted);
        count("felix.orphans.aborted.uploads", "Incomplete multipart uploads the sweep aborted", null, null)
                .increment(abortedUploads);
    }

    /** Adds what a scrub found. */
    void scrubbed(Scrub.Report report) {
        count("felix.scrub.entries.checked", "Manifest entries a scrub checked", null, null)
                .increment(report.entriesChecked());
        count("felix.scrub.requests", "Requests scrubs made to check entries (HEADs and GETs)", null, null)
                .increment(report.requests());
        scrubCovered.set(Double.doubleToRawLongBits(report.covered()));
        for (Scrub.Anomaly a : report.anomalies()) {
            count("felix.scrub.anomalies", "Anomalies scrubs found, by kind", "kind", a.kind().label()).increment();
        }
    }

    /** Counts a scheduled run's end and times it. */
    void passFinished(PassOutcome outcome) {
        passRuns(outcome.pass(), outcome.status()).increment();
        passDurations.computeIfAbsent(outcome.pass(), p -> Timer.builder("felix.pass.duration")
                .description("How long scheduled passes take").tag("pass", p).register(registry))
                .record(outcome.duration());
    }

    /** A gauge read from {@code source} at each scrape. */
    <T> void gauge(String name, String description, T source, ToDoubleFunction<T> value, String... tags) {
        Gauge.builder(name, source, value).description(description).tags(tags).strongReference(true).register(registry);
    }

    /** The chunk cache's hits, misses and fetches. */
    void chunkCache(ChunkCache cache) {
        FunctionCounter.builder("felix.chunk.cache.hits", cache, c -> c.stats().hitCount())
                .description("Chunk reads served from the chunk cache").register(registry);
        FunctionCounter.builder("felix.chunk.cache.misses", cache, c -> c.stats().missCount())
                .description("Chunk reads that had to fetch from the store").register(registry);
        FunctionCounter.builder("felix.chunk.cache.fetched", cache, ChunkCache::bytesFetched).baseUnit("bytes")
                .description("Bytes the chunk cache fetched from the store").register(registry);
        gauge("felix.chunk.cache.held.bytes", "Bytes of chunks the chunk cache holds", cache, ChunkCache::heldBytes);
        gauge("felix.chunk.cache.in.flight.bytes", "Bytes of chunks on their way from the store (within the cache's "
                + "budget with those held)", cache, ChunkCache::inFlightBytes);
    }

    /** A counter that sums {@code source} at each scrape (it must only grow). */
    <T> void functionCounter(String name, String description, String unit, T source, ToDoubleFunction<T> value) {
        FunctionCounter.Builder<T> b = FunctionCounter.builder(name, source, value).description(description);
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(registry);
    }

    private Counter count(String name, String description, String... tags) {
        StringBuilder id = new StringBuilder(name);
        for (String t : tags) {
            id.append('/').append(t);
        }
        return counters.computeIfAbsent(id.toString(), k -> {
            Counter.Builder b = Counter.builder(name).description(description);
            for (int i = 0; i + 1 < tags.length; i += 2) {
                if (tags[i] != null) {
                    b.tag(tags[i], tags[i + 1]);
                }
            }
            return b.register(registry);
        });
    }
}
