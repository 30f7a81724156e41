package dev.felix.offload.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs every benchmark section, prints the tables and writes them to {@code docs/benchmarks.md} (see
 * {@link BenchConfig} for the {@code bench.*} properties). A section that fails is reported in its
 * place; the others still run.
 */
public final class BenchMain {

    static final String COMMAND = "mvn -B -ntp -Pbench -pl bench,cli -am -DskipTests -Dexec.skip clean package"
            + " && java -jar bench/target/felix-bench.jar";

    private final BenchConfig config;
    private final StringBuilder doc = new StringBuilder();

    private BenchMain(BenchConfig config) {
        this.config = config;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        BenchConfig config;
        try {
            config = new BenchConfig();
        } catch (IllegalArgumentException e) { // a setting's message names it
            System.err.println("felix-bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        new BenchMain(config).run();
    }

    private void run() throws IOException {
        long started = System.nanoTime();
        Files.createDirectories(config.work);
        String when = ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z"));
        doc.append("# Benchmarks\n\n");
        doc.append("Written by `").append(COMMAND).append("`")
                .append(config.quick ? " with `-Dbench.quick=true` (**quick sizes**, not the full ones)" : "")
                .append(", ").append(when).append(". Every figure is the median of ").append(config.runs)
                .append(" runs; every ratio is taken within one run, where the sides ran one after the other ")
                .append("(their order rotating from run to run), and the median of those ratios is shown. ")
                .append("The machine is shared with other work, so single runs are noisy; medians and in-run ")
                .append("ratios are what to read.\n\n");
        doc.append("## Machine\n\n");
        for (Map.Entry<String, String> e : Machine.describe(config.work).entrySet()) {
            doc.append("- ").append(e.getKey()).append(": ").append(e.getValue()).append('\n');
        }
        doc.append("\n## Settings\n\n");
        for (Map.Entry<String, String> e : config.describe().entrySet()) {
            doc.append("- ").append(e.getKey()).append(": ").append(e.getValue()).append('\n');
        }
        doc.append('\n');
        System.out.print(doc);

        if (config.runs("offload") || config.runs("startup") || config.runs("reads") || config.runs("http")) {
            section("1-2, 5. Offload, reads, HTTP clients", this::remote);
        }
        JmhRounds jmh = new JmhRounds(config, List.of("-Xms1g", "-Xmx1g", "-Dbench.work=" + config.work.resolve("jmh"),
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        if (config.runs("log")) {
            section("3. The local log", () -> localLog(jmh));
        }
        if (config.runs("manifest")) {
            section("4. The manifest", () -> manifest(jmh));
        }
        if (config.runs("scale")) {
            section("6. Fleet scale", this::scale);
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        String end = Table.f("\nThe whole run took %.1f minutes.\n", minutes);
        doc.append(end);
        System.out.print(end);
        Files.createDirectories(config.out.getParent());
        String text = doc.toString();
        if (config.merge && Files.isRegularFile(config.out)) {
            text = Merge.sections(Files.readString(config.out), text, when, minutes, config.runs);
        }
        Files.writeString(config.out, text);
        System.out.println("written to " + config.out);
    }

    private interface Section {
        void run() throws Exception;
    }

    private void section(String name, Section s) {
        try {
            s.run();
        } catch (Exception | Error e) {
            StringWriter w = new StringWriter();
            e.printStackTrace(new PrintWriter(w));
            System.err.println(name + " failed:\n" + w);
            emit("**" + name + " failed**: `" + e + "`\n\n");
        }
    }

    private void emit(String text) {
        doc.append(text);
        System.out.print(text);
    }

    // ------------------------------------------------------------------ 1 and 2

    private RootGenerator.Root root(long segmentBytes, boolean first) throws IOException {
        int sealedPerShard = (int) Math.max(1, Math.round(config.offloadBytes / (double) segmentBytes
                / config.offloadShards));
        System.out.println("generating the data root (" + config.offloadShards + " shards x " + sealedPerShard
                + " sealed segments of " + Table.bytes(segmentBytes) + ") ...");
        return RootGenerator.generate(config.work.resolve(first ? "offload-root" : "offload-root-" + segmentBytes),
                config.offloadShards, sealedPerShard, segmentBytes, config.offloadPayloadBytes);
    }

    private void remote() throws IOException {
        // the start-up rows need no large root of their own
        boolean large = config.runs("offload") || config.runs("reads") || config.runs("http");
        RootGenerator.Root root = large ? root(config.offloadSegmentBytes, true) : null;
        Map<Long, RootGenerator.Root> shapes = new LinkedHashMap<>();
        if (large) {
            shapes.put(config.offloadSegmentBytes, root);
        }
        if (config.runs("offload")) {
            for (long size : config.offloadSegmentSizes) {
                if (!shapes.containsKey(size)) {
                    shapes.put(size, root(size, false));
                }
            }
        }
        OffloadSection.Rclone rclone = new OffloadSection.Rclone(config.rclone, config.work);
        Map<Long, List<OffloadSection.Result>> offload = new LinkedHashMap<>();
        shapes.keySet().forEach(size -> offload.put(size, new ArrayList<>()));
        List<ReadsSection.Result> reads = new ArrayList<>();
        List<HttpClientSection.Result> http = new ArrayList<>();
        List<StartupSection.Result> startup = new ArrayList<>();
        for (String name : config.servers) {
            Path dir = config.work.resolve("servers").resolve(name);
            BenchFiles.deleteTree(dir);
            Files.createDirectories(dir);
            System.out.println("starting " + name + " ...");
            S3ServerProcess started;
            try {
                started = S3ServerProcess.start(name, dir);
            } catch (IOException | RuntimeException e) {
                // One server that cannot start (RGW not installed, say) costs its own rows, not the
                // other servers' figures.
                System.out.println("  [" + name + "] not started: " + e.getMessage());
                String why = ("not started: " + e.getMessage()).replace('|', '/');
                String label = S3ServerProcess.label(name);
                for (List<OffloadSection.Result> results : offload.values()) {
                    OffloadSection.Result failed = new OffloadSection.Result(label);
                    failed.failures.put("all", why);
                    results.add(failed);
                }
                StartupSection.Result failedStartup = new StartupSection.Result(label);
                failedStartup.failures.put("all", why);
                startup.add(failedStartup);
                ReadsSection.Result failedReads = new ReadsSection.Result(label);
                failedReads.failure = why;
                reads.add(failedReads);
                HttpClientSection.Result failedHttp = new HttpClientSection.Result(label);
                for (String side : HttpClientSection.SIDES) {
                    failedHttp.failures.put(side, why);
                }
                http.add(failedHttp);
                continue;
            }
            try (S3ServerProcess server = started) {
                if (config.runs("offload")) {
                    for (Map.Entry<Long, RootGenerator.Root> shape : shapes.entrySet()) {
                        try {
                            offload.get(shape.getKey()).add(new OffloadSection(config, shape.getValue(), shape.getKey(),
                                    rclone).run(server));
                        } catch (IOException | RuntimeException e) {
                            System.out.println("  [offload " + name + "] failed: " + e);
                            OffloadSection.Result failed = new OffloadSection.Result(server.label());
                            failed.failures.put("all", e.toString());
                            offload.get(shape.getKey()).add(failed);
                        }
                    }
                }
                if (config.runs("startup")) {
                    try {
                        startup.add(new StartupSection(config, rclone).run(server));
                    } catch (IOException | RuntimeException e) {
                        System.out.println("  [startup " + name + "] failed: " + e);
                        StartupSection.Result failed = new StartupSection.Result(server.label());
                        failed.failures.put("all", e.toString());
                        startup.add(failed);
                    }
                }
                if (config.runs("reads")) {
                    try {
                        reads.add(new ReadsSection(config, root).run(server));
                    } catch (IOException | RuntimeException e) {
                        System.out.println("  [reads " + name + "] failed: " + e);
                        ReadsSection.Result failed = new ReadsSection.Result(server.label());
                        failed.failure = e.toString();
                        reads.add(failed);
                    }
                }
                if (config.runs("http")) {
                    http.add(new HttpClientSection(config, root).run(server));
                }
            }
        }
        if (config.runs("offload") || config.runs("startup")) {
            emit("## 1. Offload throughput and start-up\n\n");
        }
        if (config.runs("offload")) {
            char part = 'a';
            for (Map.Entry<Long, RootGenerator.Root> shape : shapes.entrySet()) {
                emit(Report.offload(config, shape.getValue(), shape.getKey(), "1" + part++, rclone,
                        offload.get(shape.getKey())));
            }
        }
        if (config.runs("startup")) {
            emit(StartupSection.report(config, rclone, startup));
        }
        if (config.runs("reads")) {
            emit(Report.reads(config, reads));
        }
        if (config.runs("http")) {
            emit(Report.http(config, root, http));
        }
    }

    // ------------------------------------------------------------------ 6

    private void scale() throws IOException {
        Path dir = config.work.resolve("servers").resolve("s3proxy-scale");
        BenchFiles.deleteTree(dir);
        Files.createDirectories(dir);
        System.out.println("starting " + S3ServerProcess.S3PROXY + " for the scale section ...");
        try (S3ServerProcess server = S3ServerProcess.start(S3ServerProcess.S3PROXY, dir)) {
            List<ScaleSection.Result> results = new ScaleSection(config).run(server);
            emit(ScaleSection.report(config, server.label(), System.getProperty("bench.commit", gitHead()), results));
        }
    }

    /** The commit checked out where the bench runs, or null outside a git work tree. */
    private static String gitHead() {
        try {
            Process p = new ProcessBuilder("git", "rev-parse", "--short", "HEAD").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            return p.waitFor() == 0 && out.matches("[0-9a-f]{4,40}") ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    // ------------------------------------------------------------------ 3 and 4

    private void localLog(JmhRounds jmh) {
        LocalLogSection s = new LocalLogSection(config, jmh);
        emit("## 3. The local log\n\n");
        section("3a. Appends", () -> emit(Report.APPENDS_TEXT + s.appends().markdown() + "\n"));
        section("3b. Recovery scan", () -> emit(Report.RECOVERY_TEXT + s.recovery().markdown() + "\n"));
        section("3c. Index rebuild", () -> emit(Report.REBUILD_TEXT + s.indexRebuild().markdown() + "\n"));
    }

    private void manifest(JmhRounds jmh) throws Exception {
        emit("## 4. The manifest\n\n" + Report.MANIFEST_TEXT + new ManifestSection(config, jmh).run().markdown() + "\n");
    }
}
