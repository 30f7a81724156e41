package dev.felix.offload.bench;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What a command costs before its first byte: {@code felix-offload} as an operator runs it, timed from
 * process start to exit, for commands that do (almost) nothing else: {@code --version}, an
 * {@code offload} with nothing left to offload and a {@code read} of records on local disk, each on
 * the filesystem store and on the S3 server, and {@code run} until {@code /health} answers. Each as
 * the bare jar and through the distribution's launcher with the class-data-sharing archive it makes
 * ({@link Launcher}); {@code rclone lsf} of an empty prefix beside them, for how long a native command
 * takes to reach the same server.
 *
 * <p>A small root ({@code felix-offload sample-data}) is offloaded once to each store before the
 * timed runs (untimed), so the S3 store's probe findings are kept in the root, as they are for any
 * command after the first.
 */
final class StartupSection {

    static final String JAR = "jar";
    static final String LAUNCHER = "launcher";
    static final String VERSION = "`--version`";
    static final String OFFLOAD_FS = "no-op `offload`, filesystem store";
    static final String OFFLOAD_S3 = "no-op `offload`, S3 store";
    static final String READ_FS = "local `read`, filesystem store";
    static final String READ_S3 = "local `read`, S3 store";
    static final String RUN_S3 = "`run` until `/health` answers, S3 store";
    static final String RCLONE = "`rclone lsf` of an empty prefix";
    static final List<String> ROWS = List.of(VERSION, OFFLOAD_FS, OFFLOAD_S3, READ_FS, READ_S3, RUN_S3);
    private static final String NODE = "bench-startup";

    /** What one server's runs measured: seconds per row and variant, and in-run ratios. */
    static final class Result {
        final String server;
        final Map<String, Map<String, List<Double>>> seconds = new LinkedHashMap<>();
        final List<Double> rclone = new ArrayList<>();
        final Map<String, List<Double>> ratios = new LinkedHashMap<>();
        final Map<String, String> failures = new LinkedHashMap<>();

        Result(String server) {
            this.server = server;
        }
    }

    private final BenchConfig config;
    private final JarRuns jar;
    private final OffloadSection.Rclone rclone;

    StartupSection(BenchConfig config, OffloadSection.Rclone rclone) {
        this.config = config;
        this.jar = new JarRuns(config);
        this.rclone = rclone;
    }

    private static Map<String, String> env(S3ServerProcess server) {
        Map<String, String> env = new HashMap<>();
        env.put("AWS_ACCESS_KEY_ID", server.accessKey);
        env.put("AWS_SECRET_ACCESS_KEY", server.secretKey);
        env.put("FELIX_NODE_ID", NODE);
        return env;
    }

    private static String s3Uri(S3ServerProcess server, String bucket, String prefix) {
        return "s3://" + bucket + "/" + prefix + "?endpoint=" + server.endpoint + "&region=" + server.region
                + "&path-style=true";
    }

    /** A fresh {@code felix-offload sample-data} root. */
    private static Path sampleRoot(BenchConfig config, Path root) throws IOException {
        BenchFiles.deleteTree(root);
        JarRuns runs = new JarRuns(config);
        JarRuns.timed(runs.command(List.of(), "sample-data", "--data-dir", root.toString()), Map.of(),
                root.resolveSibling(root.getFileName() + "-sample.log"));
        return root;
    }

    Result run(S3ServerProcess server) throws IOException {
        Result result = new Result(server.label());
        if (!Files.isRegularFile(config.cliJar)) {
            result.failures.put("all", "no " + config.cliJar + " (the benchmark command in README builds it)");
            return result;
        }
        Path dir = Files.createDirectories(config.work.resolve("startup").resolve(server.name));
        String bucket = "bench-startup";
        server.createBucket(bucket);
        String prefix = "startup-" + server.name;
        server.deleteAll(bucket, prefix + "/");
        Path fsStore = dir.resolve("fs-store");
        BenchFiles.deleteTree(fsStore);
        Path fsRoot = sampleRoot(config, dir.resolve("fs-root"));
        Path s3Root = sampleRoot(config, dir.resolve("s3-root"));
        Map<String, String> env = env(server);
        String s3 = s3Uri(server, bucket, prefix);
        String fs = fsStore.toUri().toString();
        // Offloaded once, untimed: what is left is a no-op, and the S3 root keeps the probe's findings.
        JarRuns.timed(jar.command(List.of(), "offload", "--data-dir", fsRoot.toString(), "--store", fs), env,
                dir.resolve("first-offload-fs.log"));
        JarRuns.timed(jar.command(List.of(), "offload", "--data-dir", s3Root.toString(), "--store", s3), env,
                dir.resolve("first-offload-s3.log"));
        String shard = firstShard(fsRoot);
        int port = JarRuns.freePort();
        Path runConfig = dir.resolve("run.properties");
        Files.writeString(runConfig, "data-dir=" + s3Root + "\nstore=" + s3 + "\nhttp.bind=127.0.0.1\nhttp.port=" + port
                + "\noffload.schedule=0 0 1 1 *\nretention.schedule=0 0 1 1 *\nscrub.schedule=0 0 1 1 *\n");
        URI health = URI.create("http://127.0.0.1:" + port + "/health");

        Map<String, List<String>> variants = new LinkedHashMap<>();
        variants.put(JAR, List.of());
        if (config.launcher != null) {
            variants.put(LAUNCHER, List.of());
        } else {
            result.failures.put(LAUNCHER, config.launcherMissing);
        }
        for (String variant : List.of(JAR, LAUNCHER)) {
            Map<String, List<Double>> rows = new LinkedHashMap<>();
            ROWS.forEach(r -> rows.put(r, new ArrayList<>()));
            result.seconds.put(variant, rows);
        }
        for (int round = -config.warmups; round < config.runs; round++) {
            Map<String, Double> thisRound = new HashMap<>();
            List<String> order = new ArrayList<>();
            for (String variant : variants.keySet()) {
                for (String row : ROWS) {
                    order.add(variant + "|" + row);
                }
            }
            order.add("rclone");
            for (int i = 0; i < order.size(); i++) {
                String item = order.get(Math.floorMod(i + round, order.size()));
                Path log = dir.resolve("run.log");
                double seconds;
                try {
                    if (item.equals("rclone")) {
                        if (!rclone.available()) {
                            continue;
                        }
                        seconds = rclone.lsf(server, bucket, "nothing-here/");
                    } else {
                        String variant = item.substring(0, item.indexOf('|'));
                        String row = item.substring(item.indexOf('|') + 1);
                        List<String> flags = variants.get(variant);
                        java.util.function.Function<String[], List<String>> cmd = variant.equals(LAUNCHER)
                                ? jar::launcherCommand : a -> jar.command(flags, a);
                        seconds = switch (row) {
                            case VERSION -> JarRuns.timed(cmd.apply(new String[] {"--version"}), env, log);
                            case OFFLOAD_FS -> JarRuns.timed(cmd.apply(new String[] {"offload", "--data-dir",
                                    fsRoot.toString(), "--store", fs}), env, log);
                            case OFFLOAD_S3 -> JarRuns.timed(cmd.apply(new String[] {"offload", "--data-dir",
                                    s3Root.toString(), "--store", s3}), env, log);
                            case READ_FS -> JarRuns.timed(cmd.apply(new String[] {"read", "--data-dir", fsRoot.toString(),
                                    "--store", fs, "--shard", shard, "--from", "0", "--max-records", "1"}), env, log);
                            case READ_S3 -> JarRuns.timed(cmd.apply(new String[] {"read", "--data-dir", s3Root.toString(),
                                    "--store", s3, "--shard", shard, "--from", "0", "--max-records", "1"}), env, log);
                            case RUN_S3 -> JarRuns.untilAnswered(cmd.apply(new String[] {"run", "--config",
                                    runConfig.toString()}), env, log, health);
                            default -> throw new IllegalStateException(row);
                        };
                    }
                } catch (IOException | RuntimeException e) {
                    result.failures.put(item, e.getMessage());
                    System.out.printf("  [startup %s] %s failed: %s%n", server.name, item, e.getMessage());
                    continue;
                }
                thisRound.put(item, seconds);
                System.out.printf("  [startup %s] %s %s: %.2f s%n", server.name, round < 0 ? "warm-up"
                        : "run " + (round + 1) + "/" + config.runs, item.replace('|', ' '), seconds);
                if (round >= 0) {
                    if (item.equals("rclone")) {
                        result.rclone.add(seconds);
                    } else {
                        result.seconds.get(item.substring(0, item.indexOf('|'))).get(item.substring(item.indexOf('|') + 1))
                                .add(seconds);
                    }
                }
            }
            if (round >= 0) {
                for (String variant : variants.keySet()) {
                    ratio(result, thisRound, variant + ": read S3 / filesystem", variant + "|" + READ_S3,
                            variant + "|" + READ_FS);
                    ratio(result, thisRound, variant + ": offload S3 / filesystem", variant + "|" + OFFLOAD_S3,
                            variant + "|" + OFFLOAD_FS);
                }
                for (String row : ROWS) {
                    ratio(result, thisRound, "launcher/jar " + row, LAUNCHER + "|" + row, JAR + "|" + row);
                }
            }
        }
        return result;
    }

    private static void ratio(Result result, Map<String, Double> round, String name, String top, String bottom) {
        if (round.containsKey(top) && round.containsKey(bottom)) {
            result.ratios.computeIfAbsent(name, k -> new ArrayList<>()).add(round.get(top) / round.get(bottom));
        }
    }

    private static String firstShard(Path root) throws IOException {
        try (Stream<Path> dirs = Files.list(root)) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow(() -> new IOException("no shard in " + root));
        }
    }

    static String report(BenchConfig config, OffloadSection.Rclone rclone, List<Result> results) {
        StringBuilder sb = new StringBuilder("### 1c. Start-up\n\n");
        sb.append("What a command costs before its first byte: `felix-offload` as an operator runs it, timed from ")
                .append("process start to exit, on a small root (`sample-data`, offloaded once before, untimed, so every ")
                .append("`offload` here has nothing left to do and the S3 store's probe findings are kept in the root). ")
                .append("The local `read` reads one record from offset 0, on local disk; `run` is timed until `/health` ")
                .append("answers at all. **jar**: `java -jar felix-offload.jar`, no flags. **launcher**: ")
                .append(config.launcher != null ? "the distribution's `bin/felix-offload` (" + config.launcher
                        + "), with the class-data-sharing archive it made on its first start (untimed)"
                        + (Launcher.hasArchive(config.launcher) ? "" : "; **it made none**, so these starts ran without one")
                        + "." : "not run: " + config.launcherMissing + ".")
                .append(rclone.available() ? " `rclone lsf` of an empty prefix on the same server (" + rclone.version()
                        + ") is beside them: a native command reaching the same server." : "")
                .append(" Seconds: median (fastest–slowest); ratios within a run, median over runs.\n\n");
        Table t = new Table("server", "command", "jar s", "launcher s", "launcher / jar");
        for (Result r : results) {
            if (r.failures.containsKey("all")) {
                t.row(r.server, "failed: " + r.failures.get("all").replace('|', '/'));
                continue;
            }
            boolean first = true;
            for (String row : ROWS) {
                t.row(first ? r.server : "", row, cell(r, JAR, row), cell(r, LAUNCHER, row), ratio(r, "launcher/jar " + row));
                first = false;
            }
            t.row("", RCLONE, r.rclone.isEmpty() ? rclone.available() ? "failed" : "not installed" : spread(r.rclone),
                    "", "");
            for (String variant : List.of(JAR, LAUNCHER)) {
                t.row("", variant + ": local `read`, S3 / filesystem (target <= 1.2x)",
                        ratio(r, variant + ": read S3 / filesystem"), "", "");
                t.row("", variant + ": no-op `offload`, S3 / filesystem", ratio(r, variant + ": offload S3 / filesystem"),
                        "", "");
            }
        }
        sb.append(t.markdown()).append('\n');
        return sb.toString();
    }

    private static String cell(Result r, String variant, String row) {
        List<Double> v = r.seconds.get(variant).get(row);
        if (v.isEmpty()) {
            String why = r.failures.getOrDefault(variant + "|" + row, r.failures.get(variant));
            return why == null ? "n/a" : "failed: " + why.replace('|', '/');
        }
        return spread(v);
    }

    private static String spread(List<Double> v) {
        double[] a = Stats.toArray(v);
        return Table.num(Stats.median(a)) + " (" + Table.num(Stats.min(a)) + "–" + Table.num(Stats.max(a)) + ")";
    }

    private static String ratio(Result r, String name) {
        List<Double> v = r.ratios.get(name);
        return v == null || v.isEmpty() ? "n/a" : Table.ratio(Stats.median(v));
    }
}
