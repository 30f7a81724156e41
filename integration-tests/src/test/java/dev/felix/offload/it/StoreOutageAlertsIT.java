package dev.felix.offload.it;

import org.junit.jupiter.api.parallel.Isolated;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every alerting rule we ship (docs/alerts/felix-offload.rules.yml), evaluated by promtool over the
 * series the daemon's own {@code /metrics} gave while a real store failed: the daemon
 * ({@code run --config}, the jar) offloads from shards a writer keeps appending to, through a
 * {@link FaultProxy} in front of S3Proxy (Ceph RGW in a subclass), and the test scrapes it as
 * Prometheus would, recording each scrape as one minute of series ({@link RecordedSeries}).
 *
 * <ol>
 *   <li>Baseline: the store works; no alert fires.</li>
 *   <li>Outage: the store goes away ({@link #outage}) while the writer goes on: {@code felix_store_ready}
 *       is 0, and StoreDown, StoreErrors, PassFailing and LagGrowing fire; ScrubAnomaly and
 *       KeyCollision stay silent (nothing is wrong with the data).</li>
 *   <li>Recovery: the store is back; every alert resolves.</li>
 *   <li>Damage: a recorded object vanishes from the store, and an upload's key is found taken by a
 *       foreign object: ScrubAnomaly and KeyCollision fire, the store counts as ready throughout,
 *       and neither StoreDown nor StoreErrors fires over answers about single objects.</li>
 *   <li>Repair: the object is put back, the foreign one removed; everything resolves.</li>
 * </ol>
 * The phases end on what the scrapes show, never on elapsed time; promtool then decides. The
 * daemon's standard error is checked too: ISO-8601 timestamps on every line, no stack trace, and one
 * line per failed pass.
 */
@Isolated("its series are scraped at a pace promtool reads as time: nothing else runs beside it")
@ExtendWith(Promtool.class)
class StoreOutageAlertsIT {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Path RULES = Path.of("..", "docs", "alerts", "felix-offload.rules.yml").toAbsolutePath().normalize();
    private static final Pattern ALERT = Pattern.compile("- alert: (\\S+)");
    private static final Pattern ISO_LINE = Pattern.compile(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) (ERROR|WARN |INFO |DEBUG|TRACE) .*");
    private static final int PAYLOAD = 200;
    /**
     * Scrapes a phase may take beyond what it waits for: a guard against a daemon that never gets
     * there (each phase ends after 15 to 370 scrapes of what it waits for), not a timing.
     */
    private static final int MAX_PHASE_SCRAPES = 400;

    @TempDir
    Path work;

    /** The server behind the proxy: S3Proxy here, another in a subclass. */
    protected S3Server server() {
        return S3Servers.s3proxy();
    }

    /** Takes the store away: here its port refuses connections, as a server that stopped. */
    protected void outage(FaultProxy proxy) throws IOException {
        proxy.down();
    }

    /**
     * How long a scrape waits in the outage, so that a scrape stands for a minute of it. A refused
     * connection fails a call at once; a store that never answers fails one only at the read timeout
     * (2 s here, twice with a retry), which at 250 ms a scrape stood for 10 to 20 minutes of series
     * between two counted errors, longer than the 10 minutes an error alert waits, and no server is
     * that slow per minute.
     */
    protected long outagePauseMillis() {
        return 250;
    }

    protected void recover(FaultProxy proxy) throws IOException, InterruptedException {
        proxy.policy(FaultProxy.PASS);
        proxy.up();
    }

    private final class Scraper {
        final String base;
        final RecordedSeries series;
        final List<ShardLog> logs;
        final SplittableRandom random = new SplittableRandom(33);
        long appended;

        Scraper(String base, RecordedSeries series, List<ShardLog> logs) {
            this.base = base;
            this.series = series;
            this.logs = logs;
        }

        /** One scrape, after the writer appended {@code records} to every shard it writes. */
        void step(int records, long pauseMillis) throws Exception {
            for (ShardLog log : logs) {
                for (int i = 0; i < records; i++) {
                    byte[] payload = new byte[PAYLOAD];
                    random.nextBytes(payload);
                    log.append(1_767_225_600_000_000L + (appended++) * 1000L, payload);
                }
                log.flush();
            }
            if (pauseMillis > 0) {
                Thread.sleep(pauseMillis);
            }
            series.add(PrometheusText.parse(get(base + "/metrics")));
        }

        /** Scrapes until {@code done} holds for what was recorded, {@code needed} scrapes at least. */
        void until(String what, int needed, int records, long pauseMillis, BooleanSupplier done) throws Exception {
            int start = series.steps();
            while (true) {
                step(records, pauseMillis);
                if (done.getAsBoolean()) {
                    return;
                }
                if (series.steps() - start > needed + MAX_PHASE_SCRAPES) {
                    throw new AssertionError("not after " + (series.steps() - start) + " scrapes: " + what);
                }
            }
        }

        double v(String name, String labels) {
            return series.last(name, labels);
        }
    }

    private static String get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void everyShippedAlertFiresAndResolvesOnTheDaemonsOwnSeriesThroughARealOutage() throws Exception {
        String rules = Files.readString(RULES, StandardCharsets.UTF_8);
        List<String> alerts = ALERT.matcher(rules).results().map(m -> m.group(1)).toList();
        assertThat(alerts).as("the shipped rules").contains("FelixOffloadStoreDown", "FelixOffloadStoreErrors",
                "FelixOffloadPassFailing", "FelixOffloadLagGrowing", "FelixOffloadScrubAnomaly",
                "FelixOffloadKeyCollision");
        RecordedSeries series = RecordedSeries.forRules(rules, "felix_store_ready", "felix_offload_segments_total",
                "felix_store_last_success_timestamp_seconds");

        S3Server s3 = server();
        String bucket = s3.createBucket("outage-alerts");
        Path root = Files.createDirectories(work.resolve("data"));
        ShardLogConfig logConfig = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
                .withFsyncPolicy(FsyncPolicy.none());
        String orders = new ShardKey("acme", "default", "orders", 0).directoryName();
        String audit = new ShardKey("acme", "default", "audit", 0).directoryName();
        String late = new ShardKey("acme", "default", "late", 0).directoryName();

        try (FaultProxy proxy = FaultProxy.start(s3.endpoint());
             ShardLog ordersLog = ShardLog.open(root.resolve(orders), logConfig);
             ShardLog auditLog = ShardLog.open(root.resolve(audit), logConfig)) {
            Path config = work.resolve("felix.yaml");
            Files.writeString(config, String.join("\n",
                    "data-dir: data",
                    // short timeouts so that a hung store is given up on within seconds
                    "store: s3://" + bucket + "?endpoint=" + proxy.endpoint() + "&region=" + s3.region()
                            + "&path-style=true&max-attempts=2&read-timeout=2&attempt-timeout=10&api-call-timeout=5",
                    "node-id: alerts-node",
                    "offload.schedule: '* * * * * ?'",
                    "retention.schedule: '*/2 * * * * ?'",
                    "scrub.schedule: '*/3 * * * * ?'",
                    "orphans.grace: 1h",
                    "http.port: 0",
                    "shutdown.grace: 10s",
                    ""), StandardCharsets.UTF_8);
            Map<String, String> env = DaemonIT.credentials(s3);
            try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, env, config)) {
                Scraper scr = new Scraper(daemon.base, series, List.of(ordersLog, auditLog));

                // 1. Baseline: ready, everything offloaded, then a while of nothing wrong.
                // The writer adds a segment to each shard about every 14 scrapes, the daemon offloads every second.
                scr.until("the daemon is ready with everything sealed offloaded", 0, 5, 250,
                        () -> scr.v("felix_store_ready", "") == 1 && scr.v("felix_offload_lag_segments", "") <= 2
                                && scr.v("felix_offload_segments_total", "") >= 4);
                int baselineStart = series.steps();
                for (int i = 0; i < 20; i++) {
                    scr.step(5, 250);
                }
                int baselineEnd = series.steps() - 1;
                series.mark("baseline from step " + baselineStart);

                // 2. Outage: the store goes away while the writer goes on, faster (a segment every 2-3 scrapes).
                int linesBefore = (int) daemon.stderr().lines().count();
                outage(proxy);
                int outageStart = series.steps();
                int[] firstNotReady = {-1};
                int[] firstLag = {-1};
                scr.until("the store counted as not ready for 15 scrapes and the lag grew over 40", 40, 30, outagePauseMillis(), () -> {
                    int now = series.steps() - 1;
                    if (firstNotReady[0] < 0 && scr.v("felix_store_ready", "") == 0) {
                        firstNotReady[0] = now;
                    }
                    if (firstLag[0] < 0 && scr.v("felix_offload_lag_segments", "") > 2) {
                        firstLag[0] = now;
                    }
                    return firstNotReady[0] >= 0 && now - firstNotReady[0] >= 15 && firstLag[0] >= 0
                            && now - firstLag[0] >= 40;
                });
                int outageEnd = series.steps() - 1;
                series.mark("outage from step " + outageStart + " (store not ready from step " + firstNotReady[0] + ")");
                String stderrInOutage = String.join("\n", daemon.stderr().lines().skip(linesBefore).toList());

                // 3. Recovery: back, caught up, and quiet long enough for every window to pass.
                recover(proxy);
                int recoveryStart = series.steps();
                double[] quiet = {Double.NaN, Double.NaN};
                int[] quietSince = {-1};
                scr.until("ready, caught up, and no store error or failed pass for 25 scrapes", 25, 5, 250, () -> {
                    int now = series.steps() - 1;
                    double errors = series.lastSum("felix_store_errors_total");
                    double failed = series.last("felix_pass_runs_total", "{pass=\"offload\",status=\"failed\"}")
                            + series.last("felix_pass_runs_total", "{pass=\"retention\",status=\"failed\"}")
                            + series.last("felix_pass_runs_total", "{pass=\"scrub\",status=\"failed\"}");
                    boolean settled = scr.v("felix_store_ready", "") == 1 && scr.v("felix_offload_lag_segments", "") <= 2;
                    if (!settled || errors != quiet[0] || failed != quiet[1]) {
                        quiet[0] = errors;
                        quiet[1] = failed;
                        quietSince[0] = now;
                        return false;
                    }
                    return now - quietSince[0] >= 25;
                });
                int recoveryEnd = series.steps() - 1;
                series.mark("recovery from step " + recoveryStart);

                // 4. Damage: a recorded object vanishes, and a foreign object sits at the key of a new shard's first segment.
                String nodePrefix = "alerts-node/" + orders + "/";
                String victim = s3.admin().listObjectsV2(b -> b.bucket(bucket).prefix(nodePrefix)).contents().stream()
                        .map(o -> o.key()).filter(k -> k.endsWith(".segment")).sorted().findFirst().orElseThrow();
                byte[] victimBytes = s3.admin().getObjectAsBytes(b -> b.bucket(bucket).key(victim)).asByteArray();
                String taken = "alerts-node/" + late + "/00000000000000000000-00000000000000000000.segment";
                s3.admin().putObject(b -> b.bucket(bucket).key(taken), RequestBody.fromString("not this shard's segment"));
                s3.admin().deleteObject(b -> b.bucket(bucket).key(victim));
                int damageStart = series.steps();
                double anomaliesBefore = series.lastSum("felix_scrub_anomalies_total")
                        - series.last("felix_scrub_anomalies_total", "{kind=\"orphan\"}");
                double collisionsBefore = scr.v("felix_offload_collisions_total", "");
                try (ShardLog lateLog = ShardLog.open(root.resolve(late), logConfig)) {
                    // enough for its first segment to be sealed, and no more (its lag stays at one segment)
                    for (int i = 0; i < 100; i++) {
                        lateLog.append(1_767_225_600_000_000L + i * 1000L, new byte[PAYLOAD]);
                    }
                    lateLog.flush();
                }
                int[] seenSince = {-1};
                scr.until("scrub found the missing object and an upload met the taken key, for 15 scrapes", 15, 5, 250,
                        () -> {
                    double anomalies = series.lastSum("felix_scrub_anomalies_total")
                            - series.last("felix_scrub_anomalies_total", "{kind=\"orphan\"}");
                    if (seenSince[0] < 0 && anomalies > anomaliesBefore
                            && scr.v("felix_offload_collisions_total", "") > collisionsBefore) {
                        seenSince[0] = series.steps() - 1;
                    }
                    return seenSince[0] >= 0 && series.steps() - 1 - seenSince[0] >= 15;
                });
                int damageEnd = series.steps() - 1;
                series.mark("damage from step " + damageStart);

                // 5. Repair, then long enough for the longest window (ScrubAnomaly's 6h) to pass without news. Nothing
                // is to happen here, so the scrapes follow each other without a pause (each stands for a minute however
                // soon it comes), while a scrub still runs every 3 s.
                s3.admin().putObject(b -> b.bucket(bucket).key(victim), RequestBody.fromBytes(victimBytes));
                s3.admin().deleteObject(b -> b.bucket(bucket).key(taken));
                int repairStart = series.steps();
                double[] last = {Double.NaN, Double.NaN};
                int[] unchangedSince = {-1};
                scr.until("no new anomaly or collision for 370 scrapes, the late shard offloaded", 370, 2, 0, () -> {
                    double anomalies = series.lastSum("felix_scrub_anomalies_total")
                            - series.last("felix_scrub_anomalies_total", "{kind=\"orphan\"}");
                    double collisions = scr.v("felix_offload_collisions_total", "");
                    boolean lateDone = scr.v("felix_offload_lag_segments", "") <= 2;
                    if (anomalies != last[0] || collisions != last[1] || !lateDone) {
                        last[0] = anomalies;
                        last[1] = collisions;
                        unchangedSince[0] = series.steps() - 1;
                        return false;
                    }
                    return series.steps() - 1 - unchangedSince[0] >= 370;
                });
                int end = series.steps() - 1;
                series.mark("repair from step " + repairStart);

                assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
                Path kept = Path.of("target", "outage-alerts").toAbsolutePath();
                Files.createDirectories(kept);
                Files.writeString(kept.resolve(getClass().getSimpleName() + ".daemon.err"), daemon.stderr(),
                        StandardCharsets.UTF_8);

                // What promtool says of the recorded series.
                series.expectSilentWithin("FelixOffloadStoreDown", baselineStart, baselineEnd);
                series.expect("nothing fires in the baseline", "max(max_over_time(ALERTS{alertstate=\"firing\"}["
                        + (baselineEnd - baselineStart + 1) + "m]))", baselineEnd, false);
                series.expect("felix_store_ready is 0 in the outage", "max(min_over_time(felix_store_ready["
                        + (outageEnd - outageStart + 1) + "m])) == bool 0", outageEnd, true);
                for (String a : List.of("FelixOffloadStoreDown", "FelixOffloadStoreErrors", "FelixOffloadPassFailing",
                        "FelixOffloadLagGrowing")) {
                    series.expectFiringWithin(a, outageStart, outageEnd);
                }
                for (String a : List.of("FelixOffloadScrubAnomaly", "FelixOffloadKeyCollision")) {
                    series.expectSilentWithin(a, outageStart, recoveryEnd);
                }
                series.expectNoneFiringAt(recoveryEnd);
                for (String a : List.of("FelixOffloadScrubAnomaly", "FelixOffloadKeyCollision")) {
                    series.expectFiringWithin(a, damageStart, damageEnd);
                }
                for (String a : List.of("FelixOffloadStoreDown", "FelixOffloadStoreErrors", "FelixOffloadPassFailing",
                        "FelixOffloadLagGrowing")) {
                    series.expectSilentWithin(a, damageStart, end);
                }
                series.expect("felix_store_ready stays 1 through the damage and repair",
                        "min(min_over_time(felix_store_ready[" + (end - damageStart + 1) + "m])) == bool 1", end, true);
                series.expectNoneFiringAt(end);
                Path test = work.resolve("outage-alerts.test.yml");
                Files.writeString(test, series.promtoolTest(RULES.toString(), alerts), StandardCharsets.UTF_8);
                Files.copy(test, kept.resolve(getClass().getSimpleName() + ".test.yml"),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                Promtool.Result r = Promtool.run(work, "test", "rules", test.toString());
                assertThat(r.exitCode()).as("promtool test rules %s (kept as %s):%n%s", test, kept, r.output()).isZero();

                // The daemon's log through all of it: dated lines, no traces, one line per failed pass.
                List<String> lines = daemon.stderr().lines().toList();
                assertThat(lines).as("every line of the daemon's log").allMatch(l -> ISO_LINE.matcher(l).matches());
                List<String> outageLines = stderrInOutage.lines().toList();
                long failedRuns = Pattern.compile("pass failed: ").matcher(stderrInOutage).results().count();
                assertThat(failedRuns).as("failed passes logged in the outage").isPositive();
                assertThat(outageLines.stream().filter(l -> l.contains(" ERROR ") || l.contains(" WARN ")))
                        .as("warnings and errors in the outage: at most one per failed pass, and the store's "
                                + "change of state").hasSizeLessThanOrEqualTo((int) failedRuns + 3);
                assertThat(lines.stream().filter(l -> l.contains("pass failed: ")))
                        .allSatisfy(l -> assertThat(l).contains(proxy.endpoint().toString()));
                String summary = String.format("store outage on %s: %d scrapes (baseline %d-%d, outage %d-%d, recovery "
                        + "%d-%d, damage %d-%d, repair %d-%d); promtool: every alert fired and resolved as expected; "
                        + "%d failed passes logged in %d lines", s3.name(), series.steps(), baselineStart, baselineEnd,
                        outageStart, outageEnd, recoveryStart, recoveryEnd, damageStart, damageEnd, repairStart, end,
                        failedRuns, outageLines.size());
                System.out.println(summary);
                Files.writeString(kept.resolve(getClass().getSimpleName() + ".summary.txt"), summary + "\n",
                        StandardCharsets.UTF_8);
            }
        }
    }
}
