package dev.felix.offload.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fleet scale: what a pass costs on a root of many shards that changed nothing, through the jar as
 * an operator runs it, against S3Proxy with a {@link CountingProxy} in front of it (the store URI's
 * endpoint is the proxy), for each size in {@code bench.scale.shards}:
 * <ol>
 *   <li>a root of N shards, each with a few small sealed segments, offloaded once (timed, but not
 *       the headline);</li>
 *   <li>quiet {@code offload} passes: wall time, the pass's own time ({@code elapsed_ms} of its
 *       JSON summary) and requests by kind;</li>
 *   <li>quiet {@code retention} passes (nothing expires): requests by kind, LISTs against the keys the
 *       node holds, the sweep's mode, and the heap: each pass runs under a small {@code -Xmx} with
 *       {@code -Xlog:gc}, and the largest heap left after a collection is read from that log;</li>
 *   <li>the daemon ({@code run}) on the root: the first and later {@code /metrics} scrapes, the first
 *       page of {@code /shards} and every page of it, and, with offload every 10 s and retention
 *       every 30 s, whether offload runs wait behind retention passes ({@code /health}'s passes,
 *       polled).</li>
 * </ol>
 */
final class ScaleSection {

    static final String NODE = "bench-scale";
    /** Ten years: the records' timestamps are from 2026, so no limit of this length expires any. */
    static final long NOTHING_EXPIRES_MS = 3650L * 24 * 3600 * 1000;
    private static final String BUCKET = "bench-scale";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern GC = Pattern.compile("(\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\)");
    private static final Pattern OWN_MS = Pattern.compile(" in (\\d+) ms");

    /** One measured pass through the jar. */
    record JarPass(double wallSeconds, long ownMillis, CountingProxy.Counts requests, String note) {
    }

    /** The heap a pass's collections left, from its {@code -Xlog:gc} file. */
    record Heap(int collections, double maxAfterMiB, double maxBeforeMiB) {
        String describe() {
            return collections == 0 ? "no collection" : Table.f("%.1f MiB (%d GCs; at most %.1f MiB before one)",
                    maxAfterMiB, collections, maxBeforeMiB);
        }
    }

    /** One offload or retention run of the daemon, from {@code /health}. */
    record DaemonRun(String pass, Instant started, Instant finished, long ownMillis, String summary) {
        double totalSeconds() {
            return Duration.between(started, finished).toNanos() / 1e9;
        }

        /** Seconds spent before the pass's own clock started: waiting for the root. */
        double waitSeconds() {
            return ownMillis < 0 ? Double.NaN : Math.max(0, totalSeconds() - ownMillis / 1000.0);
        }

        boolean overlaps(DaemonRun other) {
            return started.isBefore(other.finished) && other.started.isBefore(finished);
        }
    }

    /** What one size measured. */
    static final class Result {
        final int shards;
        long sealedSegments;
        long keys;
        long keyBytes;
        double firstOffloadSeconds;
        CountingProxy.Counts firstOffloadRequests;
        final List<JarPass> quietOffload = new ArrayList<>();
        final List<JarPass> retention = new ArrayList<>();
        final List<Heap> retentionHeap = new ArrayList<>();
        String retentionHeapFlag;
        double firstScrapeSeconds = Double.NaN;
        long scrapeBytes;
        final List<Double> laterScrapes = new ArrayList<>();
        double shardsPageSeconds = Double.NaN;
        long shardsPageBytes;
        double shardsAllSeconds = Double.NaN;
        long shardsAllBytes;
        int shardsPages;
        final List<DaemonRun> daemonRuns = new ArrayList<>();
        int offloadFireTimes;
        double daemonWindowSeconds;
        final Map<String, String> failures = new LinkedHashMap<>();

        Result(int shards) {
            this.shards = shards;
        }

        List<DaemonRun> runs(String pass) {
            return daemonRuns.stream().filter(r -> r.pass.equals(pass)).toList();
        }
    }

    private final BenchConfig config;
    private final JarRuns jar;

    ScaleSection(BenchConfig config) {
        this.config = config;
        this.jar = new JarRuns(config);
    }

    /** Measures every size on {@code server}; a size that fails keeps what it measured and its failure. */
    List<Result> run(S3ServerProcess server) throws IOException {
        List<Result> results = new ArrayList<>();
        server.createBucket(BUCKET);
        try (CountingProxy proxy = CountingProxy.start(server.endpoint)) {
            for (int n : config.scaleShards) {
                Result r = new Result(n);
                results.add(r);
                try {
                    size(server, proxy, r);
                } catch (IOException | RuntimeException e) {
                    r.failures.put("all", e.toString());
                    System.out.println("  [scale " + n + "] failed: " + e);
                }
            }
        }
        return results;
    }

    private Map<String, String> env(S3ServerProcess server) {
        Map<String, String> env = new HashMap<>();
        env.put("AWS_ACCESS_KEY_ID", server.accessKey);
        env.put("AWS_SECRET_ACCESS_KEY", server.secretKey);
        env.put("FELIX_NODE_ID", NODE);
        return env;
    }

    private void size(S3ServerProcess server, CountingProxy proxy, Result r) throws IOException {
        int n = r.shards;
        Path dir = Files.createDirectories(config.work.resolve("scale").resolve(Integer.toString(n)));
        String prefix = "scale-" + n;
        System.out.printf("  [scale %d] generating %d shards x %d sealed segments of %s ...%n", n, n,
                config.scaleSegmentsPerShard, Table.bytes(config.scaleSegmentBytes));
        long t0 = System.nanoTime();
        // a fresh root each time: the offload below must find every segment new
        Path root = dir.resolve("root");
        BenchFiles.deleteTree(root);
        RootGenerator.Root generated = RootGenerator.generateCopies(root, n, config.scaleSegmentsPerShard,
                config.scaleSegmentBytes, config.scalePayloadBytes);
        r.sealedSegments = generated.sealed().size();
        System.out.printf("  [scale %d] generated %,d sealed segments in %.0f s%n", n, r.sealedSegments,
                (System.nanoTime() - t0) / 1e9);
        server.deleteAll(BUCKET, prefix + "/");
        Map<String, String> env = env(server);
        long timeout = TimeUnit.MINUTES.toNanos(config.scaleTimeoutMinutes);
        String store = "s3://" + BUCKET + "/" + prefix + "?endpoint=" + proxy.endpoint() + "&region=" + server.region
                + "&path-style=true";
        List<String> offload = List.of("offload", "--data-dir", root.toString(), "--store", store, "--json");
        // the filling offload only: more shards at once, so that it takes its share of a busy machine
        List<String> fill = new ArrayList<>(offload);
        fill.addAll(List.of("--parallelism", Integer.toString(config.scaleFillParallelism)));

        CountingProxy.Counts before = proxy.counts();
        r.firstOffloadSeconds = run(jar.command(List.of("-Xmx512m"), fill.toArray(String[]::new)), env,
                dir.resolve("first-offload.json"), timeout);
        r.firstOffloadRequests = proxy.counts().minus(before);
        long[] listed = server.countKeys(BUCKET, prefix + "/");
        r.keys = listed[0];
        r.keyBytes = listed[1];
        System.out.printf("  [scale %d] first offload: %.1f s, %s; the node holds %,d keys%n", n, r.firstOffloadSeconds,
                r.firstOffloadRequests.describe(), r.keys);

        for (int i = 0; i < config.runs; i++) {
            Path log = dir.resolve("quiet-offload.json");
            before = proxy.counts();
            double wall = run(jar.command(List.of("-Xmx512m"), offload.toArray(String[]::new)), env, log, timeout);
            JarPass p = new JarPass(wall, jsonLong(log, "elapsed_ms"), proxy.counts().minus(before),
                    "uploaded " + jsonLong(log, "segments_uploaded"));
            r.quietOffload.add(p);
            System.out.printf("  [scale %d] quiet offload %d/%d: %.2f s wall, pass %d ms, %s, %s%n", n, i + 1, config.runs,
                    wall, p.ownMillis(), p.requests().describe(), p.note());
        }

        Path cfg = dir.resolve("scale.properties");
        int port = JarRuns.freePort();
        Files.writeString(cfg, "data-dir=" + root + "\nstore=" + store + "\nnode-id=" + NODE
                + "\nhttp.bind=127.0.0.1\nhttp.port=" + port
                + "\noffload.schedule=0/10 * * * * ?\nretention.schedule=5/30 * * * * ?\nscrub.schedule=off\n"
                // limits as a fleet sets them, far enough out that nothing expires: each shard is looked at
                + "local.retention.ms=" + NOTHING_EXPIRES_MS + "\nretention.ms=" + NOTHING_EXPIRES_MS + "\n");
        r.retentionHeapFlag = "-Xmx" + config.scaleRetentionHeap;
        for (int i = 0; i < config.scaleRetentionRuns; i++) {
            Path log = dir.resolve("retention-" + (i + 1) + ".json");
            Path gc = dir.resolve("retention-" + (i + 1) + "-gc.log");
            Files.deleteIfExists(gc);
            before = proxy.counts();
            double wall;
            try {
                wall = run(jar.command(List.of(r.retentionHeapFlag, "-Xlog:gc:file=" + gc), "retention", "--config",
                        cfg.toString(), "--json"), env, log, timeout);
            } catch (IOException e) {
                // Out of memory under the small heap, say: that is the finding; the pass is run again with
                // room so that its requests are still counted.
                r.failures.put("retention " + (i + 1) + " under " + r.retentionHeapFlag, e.getMessage());
                System.out.printf("  [scale %d] retention %d under %s failed: %s%n", n, i + 1, r.retentionHeapFlag,
                        e.getMessage());
                Files.deleteIfExists(gc);
                before = proxy.counts();
                wall = run(jar.command(List.of("-Xmx1g", "-Xlog:gc:file=" + gc), "retention", "--config",
                        cfg.toString(), "--json"), env, log, timeout);
            }
            JarPass p = new JarPass(wall, jsonLong(log, "elapsed_ms"), proxy.counts().minus(before), jsonText(log, "sweep"));
            r.retention.add(p);
            r.retentionHeap.add(heap(gc));
            System.out.printf("  [scale %d] retention %d/%d: %.2f s wall, pass %d ms, %s, sweep by %s; heap after GC %s%n",
                    n, i + 1, config.scaleRetentionRuns, wall, p.ownMillis(), p.requests().describe(), p.note(),
                    r.retentionHeap.get(i).describe());
        }

        daemon(r, dir, cfg, port, env);
    }

    private void daemon(Result r, Path dir, Path cfg, int port, Map<String, String> env) throws IOException {
        pauseWhileAsked();
        URI base = URI.create("http://127.0.0.1:" + port);
        Path log = dir.resolve("daemon.log");
        ProcessBuilder pb = new ProcessBuilder(jar.command(List.of("-Xmx512m"), "run", "--config", cfg.toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            waitForHealth(p, base.resolve("/health"), log);
            long t = System.nanoTime();
            byte[] body = get(base.resolve("/metrics"));
            r.firstScrapeSeconds = (System.nanoTime() - t) / 1e9;
            r.scrapeBytes = body.length;
            for (int i = 0; i < 5; i++) {
                sleep(1500); // a survey is reused for a second after it ends
                t = System.nanoTime();
                get(base.resolve("/metrics"));
                r.laterScrapes.add((System.nanoTime() - t) / 1e9);
            }
            t = System.nanoTime();
            r.shardsPageBytes = get(base.resolve("/shards")).length;
            r.shardsPageSeconds = (System.nanoTime() - t) / 1e9;
            t = System.nanoTime();
            String after = null;
            do {
                byte[] page = get(base.resolve("/shards" + (after == null ? ""
                        : "?after=" + java.net.URLEncoder.encode(after, StandardCharsets.UTF_8))));
                r.shardsAllBytes += page.length;
                r.shardsPages++;
                JsonNode next = JSON.readTree(page).get("next_after");
                after = next == null || next.isNull() ? null : next.asText();
            } while (after != null);
            r.shardsAllSeconds = (System.nanoTime() - t) / 1e9;
            System.out.printf("  [scale %d] /metrics first %.3f s (%s), later %s s; /shards first page %.3f s (%s), "
                            + "all %d pages %.3f s (%s)%n", r.shards, r.firstScrapeSeconds, Table.bytes(r.scrapeBytes),
                    r.laterScrapes.stream().map(Table::num).toList(), r.shardsPageSeconds, Table.bytes(r.shardsPageBytes),
                    r.shardsPages, r.shardsAllSeconds, Table.bytes(r.shardsAllBytes));

            // the schedules' runs, watched on /health until the window is over and no pass runs
            Instant windowStart = Instant.now();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(config.scaleDaemonSeconds);
            long hardEnd = end + TimeUnit.MINUTES.toNanos(config.scaleTimeoutMinutes);
            Map<String, DaemonRun> seen = new LinkedHashMap<>();
            while (true) {
                JsonNode passes = JSON.readTree(get(base.resolve("/health"))).path("passes");
                boolean running = false;
                for (String pass : List.of("offload", "retention")) {
                    JsonNode node = passes.path(pass);
                    running |= node.path("running").asBoolean(false);
                    JsonNode last = node.path("last");
                    if (last.has("started") && last.has("finished")) {
                        String summary = last.path("summary").asText("");
                        Matcher m = OWN_MS.matcher(summary);
                        DaemonRun run = new DaemonRun(pass, Instant.parse(last.get("started").asText()),
                                Instant.parse(last.get("finished").asText()), m.find() ? Long.parseLong(m.group(1)) : -1,
                                summary);
                        seen.putIfAbsent(pass + run.started(), run);
                    }
                }
                long now = System.nanoTime();
                if (now > hardEnd || now > end && !running) {
                    break;
                }
                sleep(200);
            }
            r.daemonWindowSeconds = Duration.between(windowStart, Instant.now()).toNanos() / 1e9;
            r.daemonRuns.addAll(seen.values().stream().filter(d -> !d.started().isBefore(windowStart.minusSeconds(60)))
                    .sorted(java.util.Comparator.comparing(DaemonRun::started)).toList());
            r.offloadFireTimes = (int) Math.floor(r.daemonWindowSeconds / 10);
            for (DaemonRun d : r.daemonRuns) {
                System.out.printf("  [scale %d] daemon %s %s..%s (%.1f s, own %d ms): %s%n", r.shards, d.pass(),
                        d.started(), d.finished(), d.totalSeconds(), d.ownMillis(), d.summary());
            }
        } finally {
            JarRuns.stop(p);
        }
    }

    private static void waitForHealth(Process p, URI health, Path log) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (true) {
            try {
                HTTP.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding());
                return;
            } catch (IOException notYet) {
                if (!p.isAlive()) {
                    throw new IOException("the daemon exited with " + p.exitValue() + ": " + JarRuns.tail(log));
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("the daemon did not answer " + health + " within 3 minutes");
                }
                sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }

    private static byte[] get(URI uri) throws IOException {
        try {
            HttpResponse<byte[]> response = HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(15)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            return response.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /**
     * Waits while the file {@code -Dbench.pause-while=PATH} names exists: on a shared machine, another
     * benchmark's marker, so that neither measures the other.
     */
    private static void pauseWhileAsked() {
        String marker = System.getProperty("bench.pause-while");
        if (marker == null) {
            return;
        }
        boolean said = false;
        while (Files.exists(Path.of(marker))) {
            if (!said) {
                System.out.println("  (paused while " + marker + " exists)");
                said = true;
            }
            sleep(10_000);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A number field of the JSON summary the command printed last in {@code log}; -1 when absent. */
    private static long jsonLong(Path log, String field) throws IOException {
        JsonNode n = summary(log).get(field);
        return n == null ? -1 : n.asLong();
    }

    private static String jsonText(Path log, String field) throws IOException {
        JsonNode n = summary(log).path("orphans").get(field);
        return n == null ? "n/a" : n.asText();
    }

    /** The command's JSON summary: its standard output, {@code log} (the log lines went to a file of their own). */
    private static JsonNode summary(Path log) throws IOException {
        String text = Files.readString(log).trim();
        return text.startsWith("{") ? JSON.readTree(text) : JSON.createObjectNode();
    }

    /**
     * Runs the jar's {@code command}, its standard output to {@code out} and its standard error beside
     * it ({@code .err}); seconds from start to exit, or the failure with the error's last lines.
     */
    private static double run(List<String> command, Map<String, String> env, Path out, long timeoutNanos)
            throws IOException {
        pauseWhileAsked();
        Path err = out.resolveSibling(out.getFileName() + ".err");
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        JarRuns.awaitExit(p, timeoutNanos, String.join(" ", command));
        double seconds = (System.nanoTime() - start) / 1e9;
        if (p.exitValue() != 0) {
            throw new IOException(command.get(command.indexOf("-jar") + 2) + " exited with " + p.exitValue() + ": "
                    + JarRuns.tail(err) + " " + JarRuns.tail(out));
        }
        return seconds;
    }

    /** The largest heap left after a collection, and before one, from a {@code -Xlog:gc} file. */
    static Heap heap(Path gcLog) throws IOException {
        if (!Files.isRegularFile(gcLog)) {
            return new Heap(0, Double.NaN, Double.NaN);
        }
        int count = 0;
        double after = 0;
        double before = 0;
        for (String line : Files.readAllLines(gcLog)) {
            Matcher m = GC.matcher(line);
            if (m.find()) {
                count++;
                before = Math.max(before, mib(m.group(1), m.group(2)));
                after = Math.max(after, mib(m.group(3), m.group(4)));
            }
        }
        return new Heap(count, after, before);
    }

    private static double mib(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "K" -> v / 1024;
            case "G" -> v * 1024;
            default -> v;
        };
    }

    // ------------------------------------------------------------------ the report

    private static final double UNKNOWN = Double.NaN;

    static String report(BenchConfig config, String server, String commit, List<Result> results) {
        StringBuilder sb = new StringBuilder("## 6. Fleet scale\n\n");
        sb.append(Table.f("What a pass costs on a root of many shards where nothing changed: `felix-offload` as an operator "
                + "runs it (`java -jar cli/target/felix-offload.jar`, its own JVM per command), against %s, with a "
                + "request-counting proxy of the bench's in front of it (the store URI's endpoint; bytes forwarded as they "
                + "are, connections kept alive). Each root holds N shards of %d sealed segments of %s (payloads of %d B) "
                + "and a small active segment (one shard written through the shard log, copied into the others); it is "
                + "offloaded once (timed, not the headline; `--parallelism " + config.scaleFillParallelism + "`), then:\n\n", server,
                config.scaleSegmentsPerShard, Table.bytes(config.scaleSegmentBytes), config.scalePayloadBytes));
        sb.append("- **quiet offload**: `offload --json` with nothing left to upload, ").append(config.runs)
                .append(" times: wall time from process start to exit, the pass's own time (`elapsed_ms`), requests by kind;\n");
        sb.append("- **retention**: `retention --config FILE --json` with nothing to expire (`local.retention.ms` and "
                + "`retention.ms` of ten years, the records being from 2026), ")
                .append(config.scaleRetentionRuns).append(" passes one after the other, each under `-Xmx")
                .append(config.scaleRetentionHeap).append(" -Xlog:gc`: the heap is the largest heap left after a ")
                .append("collection in that log (what was live then, garbage of the young generation aside). The first ")
                .append("pass after the offload lists the whole prefix (no full sweep recorded yet); later ones check the ")
                .append("journal of pending writes. LIST / keys is LIST requests against the keys the node holds;\n");
        sb.append("- **daemon**: `run --config FILE` on the same root (offload every 10 s, retention every 30 s, scrub ")
                .append("off), `-Xmx512m`: the first `/metrics` scrape after `/health` answers, 5 later ones 1.5 s apart, ")
                .append("the first page of `/shards` and all its pages; then for ").append(config.scaleDaemonSeconds)
                .append(" s the passes' runs as `/health` reports them: the offload pass's own time (the `in N ms` of its ")
                .append("summary), and for offload runs that overlapped a retention pass, how long they waited before their ")
                .append("own clock started (run time minus own time: the root held by retention).\n\n");
        if (commit != null) {
            sb.append("Commit measured: ").append(commit).append(". The machine (2 cores) was shared with other work ")
                    .append("while this ran, so times are noisy; request counts are exact.\n\n");
        }
        Table setup = new Table("shards", "sealed segments", "keys the node holds", "first offload s",
                "first offload requests", "requests per segment");
        Table jar = new Table("shards", "quiet offload wall s", "quiet offload pass s", "quiet offload requests",
                "retention 1 (full listing) s", "retention 1 requests", "later retention wall s", "later retention pass s",
                "later retention requests", "later LIST / keys", "retention heap after GC", "later sweep");
        Table daemon = new Table("shards", "/metrics first s", "/metrics later s", "/metrics bytes", "/shards page s",
                "/shards all pages s", "daemon offload pass (first, later) s", "offload runs / fire times",
                "offload runs overlapping retention", "their longest wait s", "retention runs (own s)");
        for (Result r : results) {
            String n = Table.f("%,d", r.shards);
            if (r.firstOffloadRequests == null) {
                setup.row(n, "failed: " + r.failures.getOrDefault("all", "?").replace('|', '/'));
                continue;
            }
            setup.row(n, Table.f("%,d", r.sealedSegments), Table.f("%,d (%s)", r.keys, Table.bytes(r.keyBytes)),
                    Table.num(r.firstOffloadSeconds), r.firstOffloadRequests.describe(),
                    Table.num(r.firstOffloadRequests.total() / (double) Math.max(1, r.sealedSegments)));
            if (r.quietOffload.isEmpty()) {
                jar.row(n, "failed: " + r.failures.getOrDefault("all", "?").replace('|', '/'));
                continue;
            }
            List<JarPass> later = r.retention.size() > 1 ? r.retention.subList(1, r.retention.size()) : List.of();
            JarPass first = r.retention.isEmpty() ? null : r.retention.get(0);
            JarPass lastLater = later.isEmpty() ? null : later.get(later.size() - 1);
            String heap = r.retentionHeap.isEmpty() ? "n/a" : r.retentionHeap.stream()
                    .mapToDouble(Heap::maxAfterMiB).max().stream().mapToObj(v -> Table.f("%.1f MiB", v)).findFirst()
                    .orElse("n/a") + failedUnder(r);
            jar.row(n, spread(r.quietOffload.stream().map(JarPass::wallSeconds).toList()),
                    spread(r.quietOffload.stream().map(q -> q.ownMillis() / 1000.0).toList()),
                    r.quietOffload.get(r.quietOffload.size() - 1).requests().describe(),
                    first == null ? "n/a" : Table.num(first.wallSeconds()),
                    first == null ? "n/a" : first.requests().describe(),
                    later.isEmpty() ? "n/a" : spread(later.stream().map(JarPass::wallSeconds).toList()),
                    later.isEmpty() ? "n/a" : spread(later.stream().map(q -> q.ownMillis() / 1000.0).toList()),
                    lastLater == null ? "n/a" : lastLater.requests().describe(),
                    lastLater == null ? "n/a" : Table.f("%.4f", lastLater.requests().of(CountingProxy.Kind.LIST)
                            / (double) Math.max(1, r.keys)),
                    heap, lastLater == null ? "n/a" : lastLater.note().replace('|', '/'));
            if (Double.isNaN(r.firstScrapeSeconds)) {
                daemon.row(n, "failed: " + r.failures.getOrDefault("all", "?").replace('|', '/'));
                continue;
            }
            List<DaemonRun> offloads = r.runs("offload");
            List<DaemonRun> retentions = r.runs("retention");
            List<DaemonRun> overlapping = offloads.stream().filter(o -> retentions.stream().anyMatch(o::overlaps)).toList();
            String offloadOwn = offloads.isEmpty() ? "none" : Table.num(offloads.get(0).ownMillis() / 1000.0)
                    + (offloads.size() > 1 ? ", " + spread(offloads.subList(1, offloads.size()).stream()
                    .map(d -> d.ownMillis() / 1000.0).toList()) : "");
            daemon.row(n, Table.num(r.firstScrapeSeconds), spread(r.laterScrapes), Table.bytes(r.scrapeBytes),
                    Table.num(r.shardsPageSeconds) + " (" + Table.bytes(r.shardsPageBytes) + ")",
                    Table.num(r.shardsAllSeconds) + " (" + r.shardsPages + " pages, " + Table.bytes(r.shardsAllBytes) + ")",
                    offloadOwn, offloads.size() + " / " + r.offloadFireTimes, Integer.toString(overlapping.size()),
                    overlapping.isEmpty() ? "n/a" : Table.num(overlapping.stream().mapToDouble(DaemonRun::waitSeconds)
                            .max().orElse(UNKNOWN)),
                    retentions.isEmpty() ? "none" : retentions.size() + " (" + spread(retentions.stream()
                            .map(d -> d.ownMillis() < 0 ? d.totalSeconds() : d.ownMillis() / 1000.0).toList()) + ")");
        }
        sb.append("Setup (the offload that fills the store):\n\n").append(setup.markdown()).append('\n');
        sb.append("Passes through the jar with nothing to do. Seconds: median (fastest–slowest); requests of the last ")
                .append("run:\n\n").append(jar.markdown()).append('\n');
        sb.append("The daemon on the same root:\n\n").append(daemon.markdown()).append('\n');
        sb.append(growth(results));
        results.forEach(r -> r.failures.forEach((what, why) -> sb.append("- ").append(Table.f("%,d", r.shards))
                .append(" shards, ").append(what).append(": ").append(why.replace('|', '/')).append('\n')));
        sb.append('\n');
        return sb.toString();
    }

    private static String failedUnder(Result r) {
        long failed = r.failures.keySet().stream().filter(k -> k.startsWith("retention ")).count();
        return failed == 0 ? " (every pass under " + r.retentionHeapFlag + ")"
                : "; " + failed + " passes failed under " + r.retentionHeapFlag + " (run again with -Xmx1g)";
    }

    /** How each figure grows from the smallest size to the largest, against the growth of N. */
    private static String growth(List<Result> results) {
        List<Result> ok = results.stream().filter(r -> !r.quietOffload.isEmpty()).toList();
        if (ok.size() < 2) {
            return "";
        }
        Table t = new Table("figure", "per size", "growth", "N grew");
        Result a = ok.get(0);
        Result b = ok.get(ok.size() - 1);
        String nGrew = Table.f("%.0fx", b.shards / (double) a.shards);
        row(t, ok, "quiet offload pass s (median)", r -> Stats.median(r.quietOffload.stream()
                .map(q -> q.ownMillis() / 1000.0).toList()), nGrew);
        row(t, ok, "quiet offload requests", r -> (double) r.quietOffload.get(r.quietOffload.size() - 1).requests()
                .total(), nGrew);
        row(t, ok, "later retention pass s (median)", r -> r.retention.size() < 2 ? UNKNOWN : Stats.median(
                r.retention.subList(1, r.retention.size()).stream().map(q -> q.ownMillis() / 1000.0).toList()), nGrew);
        row(t, ok, "later retention LIST requests", r -> r.retention.size() < 2 ? UNKNOWN
                : (double) r.retention.get(r.retention.size() - 1).requests().of(CountingProxy.Kind.LIST), nGrew);
        row(t, ok, "later retention requests", r -> r.retention.size() < 2 ? UNKNOWN
                : (double) r.retention.get(r.retention.size() - 1).requests().total(), nGrew);
        row(t, ok, "retention heap after GC MiB (max)", r -> r.retentionHeap.stream().mapToDouble(Heap::maxAfterMiB)
                .max().orElse(UNKNOWN), nGrew);
        row(t, ok, "first /metrics s", r -> r.firstScrapeSeconds, nGrew);
        row(t, ok, "later /metrics s (median)", r -> r.laterScrapes.isEmpty() ? UNKNOWN : Stats.median(r.laterScrapes),
                nGrew);
        row(t, ok, "/shards first page s", r -> r.shardsPageSeconds, nGrew);
        row(t, ok, "daemon quiet offload pass s (median of later runs)", r -> {
            List<DaemonRun> o = r.runs("offload");
            return o.size() < 2 ? UNKNOWN : Stats.median(o.subList(1, o.size()).stream().map(d -> d.ownMillis() / 1000.0)
                    .toList());
        }, nGrew);
        return "How each figure grows with N (smallest to largest size; growth below N's means it does not follow "
                + "the store's size):\n\n" + t.markdown() + "\n";
    }

    private static void row(Table t, List<Result> ok, String name, java.util.function.ToDoubleFunction<Result> f,
                            String nGrew) {
        List<String> cells = new ArrayList<>();
        for (Result r : ok) {
            cells.add(Table.f("%,d: ", r.shards) + Table.num(f.applyAsDouble(r)));
        }
        double first = f.applyAsDouble(ok.get(0));
        double last = f.applyAsDouble(ok.get(ok.size() - 1));
        t.row(name, String.join("; ", cells), first > 0 && !Double.isNaN(last) ? Table.f("%.1fx", last / first)
                : "n/a", nGrew);
    }

    private static String spread(List<Double> v) {
        if (v.isEmpty()) {
            return "n/a";
        }
        double[] a = Stats.toArray(v);
        return v.size() == 1 ? Table.num(a[0])
                : Table.num(Stats.median(a)) + " (" + Table.num(Stats.min(a)) + "–" + Table.num(Stats.max(a)) + ")";
    }
}
