package dev.felix.offload.bench;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.s3.AwsSdkWire;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.SegmentUpload;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.copy.VerifyMode;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Offload throughput against one S3 server: the same sealed segment files moved by (a) plain AWS SDK
 * PutObject calls with the same parallelism, (b) one offload pass with verification on (the CLI's
 * defaults: verify auto, two shards at a time), (b0) the same pass with verify none, to attribute
 * the cost of verifying, (b1) the same pass with a multipart threshold above the segment size (one
 * PUT per segment, as (a) does), to attribute the cost of multipart, (b2) the jar as an operator runs it,
 * (b4) the distribution's launcher with its class-data-sharing archive, (c) {@code rclone copy} and, where the
 * segments are above the store's multipart threshold, (c1) {@code rclone copy} sending them in the same parts
 * as the pass, so what the server spends assembling parts is on both sides. Each run writes under a fresh key prefix, which
 * is deleted (untimed) after it; before each pass the shards' manifests are removed so every segment
 * is offloaded again.
 */
final class OffloadSection {

    static final String SDK = "a: SDK PutObject";
    static final String PASS = "b: offload pass";
    static final String PASS_NO_VERIFY = "b0: offload, verify none";
    static final String PASS_SINGLE_PUT = "b1: offload, single PUT";
    static final String RCLONE = "c: rclone copy";
    static final String RCLONE_PARTS = "c1: rclone, in the pass's parts";
    static final String PASS_JAR = "b2: the jar, -Xmx256m";
    static final String PASS_LAUNCHER = "b4: the launcher";
    private static final String NODE = "bench-node";

    private final BenchConfig config;
    private final RootGenerator.Root root;
    private final long segmentBytes;
    private final Rclone rclone;

    /** What one server's runs measured. */
    static final class Result {
        final String server;
        final Map<String, List<Double>> mibps = new LinkedHashMap<>();
        final Map<String, String> failures = new LinkedHashMap<>();
        final Map<String, Integer> verifiedBy = new TreeMap<>();
        final Map<String, Integer> verifiedBySinglePut = new TreeMap<>();
        final Map<String, List<Double>> ratios = new LinkedHashMap<>();
        /** How b's store sent the segments over all runs, and why (its own words). */
        String sent;

        Result(String server) {
            this.server = server;
        }
    }

    OffloadSection(BenchConfig config, RootGenerator.Root root, long segmentBytes, Rclone rclone) {
        this.config = config;
        this.root = root;
        this.segmentBytes = segmentBytes;
        this.rclone = rclone;
    }

    Result run(S3ServerProcess server) throws IOException {
        String bucket = "bench-offload";
        server.createBucket(bucket);
        Result result = new Result(server.label());
        List<String> sides = new ArrayList<>(List.of(SDK, PASS));
        if (config.offloadNoVerifySide) {
            sides.add(PASS_NO_VERIFY);
        }
        if (config.offloadSinglePutSide) {
            sides.add(PASS_SINGLE_PUT);
        }
        RemoteStoreSettings defaults = server.settings(bucket);
        boolean parts = segmentBytes > defaults.multipartThreshold();
        if (rclone.available()) {
            sides.add(RCLONE);
            if (parts) {
                sides.add(RCLONE_PARTS);
            }
        } else {
            result.failures.put(RCLONE, rclone.why());
            result.failures.put(RCLONE_PARTS, rclone.why());
        }
        if (!parts) {
            result.failures.put(RCLONE_PARTS, "not run: segments go in one PUT");
        }
        sides.add(PASS_JAR);
        if (!Files.isRegularFile(config.cliJar)) {
            result.failures.put(PASS_JAR, "no " + config.cliJar + " (the benchmark command in README builds it)");
        }
        sides.add(PASS_LAUNCHER);
        if (config.launcher == null) {
            result.failures.put(PASS_LAUNCHER, "not run: " + config.launcherMissing);
        }
        for (String s : sides) {
            result.mibps.put(s, new ArrayList<>());
        }
        S3Client client = server.client(config.offloadParallelism * 2 + 16);
        // b1: the same store with its multipart threshold above the segment size, so each segment is one PUT.
        long threshold = Math.max(2 * segmentBytes, 64L * 1024 * 1024);
        try (ObjectStore store = AwsSdkWire.store(server.settings(bucket));
             ObjectStore singlePut = AwsSdkWire.store(server.settings(bucket).toBuilder()
                     .multipart(threshold, 16L * 1024 * 1024, 4).build())) {
            for (int round = -config.warmups; round < config.runs; round++) {
                Map<String, Double> thisRound = new LinkedHashMap<>();
                for (int i = 0; i < sides.size(); i++) {
                    String side = sides.get(Math.floorMod(i + round, sides.size()));
                    if (result.failures.containsKey(side)) {
                        continue;
                    }
                    String prefix = (round < 0 ? "warm" + (-round) : "run" + round) + "-" + slug(side);
                    double seconds;
                    try {
                        seconds = switch (side) {
                            case SDK -> sdk(client, bucket, prefix);
                            case PASS -> pass(store, prefix, VerifyMode.AUTO, round >= 0 ? result.verifiedBy : null);
                            case PASS_NO_VERIFY -> pass(store, prefix, VerifyMode.NONE, null);
                            case PASS_SINGLE_PUT -> pass(singlePut, prefix, VerifyMode.AUTO,
                                    round >= 0 ? result.verifiedBySinglePut : null);
                            case RCLONE -> rclone.copy(server, bucket, prefix, root, config.offloadParallelism, List.of());
                            case RCLONE_PARTS -> rclone.copy(server, bucket, prefix, root, config.offloadParallelism,
                                    // rclone reads a bare number as KiB; B says bytes
                                    List.of("--s3-upload-cutoff", defaults.multipartThreshold() + "B",
                                            "--s3-chunk-size", defaults.partSize() + "B",
                                            "--s3-upload-concurrency", Integer.toString(defaults.partConcurrency())));
                            case PASS_JAR -> jar(server, bucket, prefix, List.of());
                            case PASS_LAUNCHER -> jar(server, bucket, prefix, null);
                            default -> throw new IllegalStateException(side);
                        };
                        if (side.equals(SDK) || side.equals(RCLONE) || side.equals(RCLONE_PARTS)) {
                            long stored = server.storedBytes(bucket, prefix + "/");
                            if (stored != root.sealedBytes()) {
                                throw new IOException(side + " stored " + stored + " bytes, expected " + root.sealedBytes());
                            }
                        }
                    } catch (IOException | RuntimeException e) {
                        result.failures.put(side, "failed: " + e.getMessage());
                        System.out.printf("  [offload %s] %s failed: %s%n", server.name, side, e);
                        continue;
                    } finally {
                        server.deleteAll(bucket, prefix + "/");
                    }
                    double mibps = root.sealedBytes() / (double) BenchConfig.MiB / seconds;
                    thisRound.put(side, mibps);
                    System.out.printf("  [offload %s] %s %s: %.1f s, %.1f MiB/s%n", server.name,
                            round < 0 ? "warm-up" : "run " + (round + 1) + "/" + config.runs, side, seconds, mibps);
                    if (round >= 0) {
                        result.mibps.get(side).add(mibps);
                    }
                }
                if (round >= 0) {
                    ratio(result, thisRound, "b/a", PASS, SDK);
                    ratio(result, thisRound, "b/c", PASS, RCLONE);
                    ratio(result, thisRound, "b/c1", PASS, RCLONE_PARTS);
                    ratio(result, thisRound, "b0/a", PASS_NO_VERIFY, SDK);
                    ratio(result, thisRound, "b/b0", PASS, PASS_NO_VERIFY);
                    ratio(result, thisRound, "b1/b", PASS_SINGLE_PUT, PASS);
                    ratio(result, thisRound, "b1/a", PASS_SINGLE_PUT, SDK);
                    ratio(result, thisRound, "b2/a", PASS_JAR, SDK);
                    ratio(result, thisRound, "b2/c", PASS_JAR, RCLONE);
                    ratio(result, thisRound, "b4/c", PASS_LAUNCHER, RCLONE);
                    ratio(result, thisRound, "b4/b2", PASS_LAUNCHER, PASS_JAR);
                }
            }
            result.sent = store.describeUploads().orElse(null);
        } finally {
            client.close();
            resetManifests(root);
        }
        return result;
    }

    private static void ratio(Result result, Map<String, Double> round, String name, String top, String bottom) {
        if (round.containsKey(top) && round.containsKey(bottom)) {
            result.ratios.computeIfAbsent(name, k -> new ArrayList<>()).add(round.get(top) / round.get(bottom));
        }
    }

    private static String slug(String side) {
        return side.substring(0, side.indexOf(':')).trim();
    }

    /** (a): every sealed file with one PutObject each, {@code parallelism} at a time; seconds. */
    private double sdk(S3Client client, String bucket, String prefix) throws IOException {
        long start = System.nanoTime();
        List<java.util.concurrent.Callable<?>> puts = new ArrayList<>();
        for (Path file : root.sealed()) {
            String key = HttpClientSection.key(prefix, file);
            puts.add(() -> client.putObject(b -> b.bucket(bucket).key(key).contentType("application/octet-stream"),
                    RequestBody.fromFile(file)));
        }
        Parallel.run(config.offloadParallelism, puts);
        return (System.nanoTime() - start) / 1e9;
    }

    /** (b) or (b0): one offload pass over the root; seconds. */
    private double pass(ObjectStore store, String prefix, VerifyMode verify, Map<String, Integer> verifiedBy)
            throws IOException {
        resetManifests(root);
        OffloadSettings settings = OffloadSettings.defaults().withKeyPrefix(prefix).withVerify(verify)
                .withParallelism(config.offloadParallelism);
        OffloadPass pass = new OffloadPass(new DataRoot(root.path()), store, settings, StepHook.none(),
                Map.of(NodeId.ENV, NODE), shard -> OptionalLong.empty());
        long start = System.nanoTime();
        PassReport report = pass.run(ProgressListener.none());
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!report.complete() || report.bytesUploaded() != root.sealedBytes()) {
            StringBuilder why = new StringBuilder();
            for (ShardResult s : report.shards()) {
                if (s.problem() != null) {
                    why.append(s.shard()).append(": ").append(s.problem()).append("; ");
                }
            }
            throw new IOException("pass incomplete: " + report.bytesUploaded() + " of " + root.sealedBytes()
                    + " bytes; " + why);
        }
        if (verifiedBy != null) {
            for (ShardResult s : report.shards()) {
                for (SegmentUpload u : s.uploaded()) {
                    verifiedBy.merge(u.verifiedBy().label(), 1, Integer::sum);
                }
            }
        }
        return seconds;
    }

    /**
     * (b2): {@code felix-offload offload} as an operator runs it, the jar in its own JVM with a heap of
     * 256 MiB, its defaults but the parallelism, under {@code prefix}; seconds from process start to
     * exit, as for rclone. A heap too small for the pass shows as its failure.
     */
    /** @param jvmFlags flags for the bare jar; null runs the launcher ({@code bench.launcher}) instead */
    private double jar(S3ServerProcess server, String bucket, String prefix, List<String> jvmFlags) throws IOException {
        resetManifests(root);
        Path log = config.work.resolve("offload-jar-" + server.name + ".log");
        String uri = "s3://" + bucket + "/" + prefix + "?endpoint=" + server.endpoint + "&region=" + server.region
                + "&path-style=true";
        List<String> command = new ArrayList<>();
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        if (jvmFlags == null) { // the launcher, with its own flags and archive; the same heap as b2
            command.add(config.launcher.toString());
            pb.environment().put("FELIX_OFFLOAD_HEAP", "256m");
        } else {
            command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m"));
            command.addAll(jvmFlags);
            command.addAll(List.of("-jar", config.cliJar.toString()));
        }
        command.addAll(List.of("offload", "--data-dir", root.path().toString(),
                "--store", uri, "--parallelism", Integer.toString(config.offloadParallelism)));
        pb.environment().put("AWS_ACCESS_KEY_ID", server.accessKey);
        pb.environment().put("AWS_SECRET_ACCESS_KEY", server.secretKey);
        pb.environment().put(NodeId.ENV, NODE);
        long start = System.nanoTime();
        Process p = pb.start();
        try {
            if (!p.waitFor(30, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException("the offload jar did not finish in 30 minutes");
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (p.exitValue() != 0) {
                throw new IOException("the offload jar exited with " + p.exitValue() + ": "
                        + Files.readString(log).lines().limit(5).reduce("", (a, b) -> a + " " + b));
            }
            long recorded = 0;
            for (Path shard : root.shards()) {
                recorded += ManifestStore.read(shard).entries().stream().mapToLong(e -> e.sizeBytes()).sum();
            }
            if (recorded != root.sealedBytes()) {
                throw new IOException("the offload jar recorded " + recorded + " bytes, expected " + root.sealedBytes());
            }
            return seconds;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (CorruptionException e) {
            throw new IOException(e);
        } finally {
            resetManifests(root);
        }
    }

    /** Removes every shard's manifest, so the next pass offloads every sealed segment again. */
    static void resetManifests(RootGenerator.Root root) throws IOException {
        for (Path shard : root.shards()) {
            Files.deleteIfExists(ManifestStore.fileIn(shard));
            Files.deleteIfExists(shard.resolve(ManifestStore.FILE_NAME + ".tmp"));
        }
    }

    /** {@code rclone}, when installed. */
    static final class Rclone {
        private final String command;
        private final String version;
        private final String why;
        private final Path work;

        Rclone(String command, Path work) {
            this.command = command;
            this.work = work;
            String v = null;
            String reason = null;
            try {
                Process p = new ProcessBuilder(command, "version").redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    v = out.lines().findFirst().orElse("rclone").trim();
                } else {
                    reason = "rclone version failed: " + out.trim();
                }
            } catch (IOException e) {
                reason = "not installed (apt-get install rclone)";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                reason = "interrupted";
            }
            this.version = v;
            this.why = reason;
        }

        boolean available() {
            return version != null;
        }

        String version() {
            return version;
        }

        String why() {
            return why;
        }

        /**
         * {@code rclone copy} of the sealed files to {@code bucket/prefix}, {@code transfers} at a time,
         * rclone's defaults otherwise (single PUT below its 200 MiB cutoff, MD5 checked against the
         * ETag) but {@code flags}; with {@code AWS_CA_BUNDLE} unset. Seconds, from process start to exit.
         */
        double copy(S3ServerProcess server, String bucket, String prefix, RootGenerator.Root root, int transfers,
                List<String> flags) throws IOException {
            Path list = work.resolve("rclone-files.txt");
            StringBuilder files = new StringBuilder();
            for (Path f : root.sealed()) {
                files.append(root.path().relativize(f)).append('\n');
            }
            Files.writeString(list, files);
            List<String> args = new ArrayList<>(List.of(command, "copy", root.path().toString(),
                    ":s3:" + bucket + "/" + prefix, "--files-from", list.toString(), "--transfers", Integer.toString(transfers),
                    "--checkers", Integer.toString(Math.max(transfers, 1)), "-q"));
            args.addAll(flags);
            return timed(server, args);
        }

        /** {@code rclone lsf} of {@code prefix} (an empty one: how long the command takes to reach the server). */
        double lsf(S3ServerProcess server, String bucket, String prefix) throws IOException {
            return timed(server, List.of(command, "lsf", ":s3:" + bucket + "/" + prefix, "-q"));
        }

        /** Runs rclone with the server's settings in its environment; seconds from process start to exit. */
        private double timed(S3ServerProcess server, List<String> args) throws IOException {
            Path config = work.resolve("rclone.conf");
            if (!Files.exists(config)) {
                Files.writeString(config, "");
            }
            Path log = work.resolve("rclone-" + server.name + ".log");
            ProcessBuilder pb = new ProcessBuilder(args).redirectErrorStream(true).redirectOutput(log.toFile());
            Map<String, String> env = pb.environment();
            env.remove("AWS_CA_BUNDLE");
            env.put("RCLONE_CONFIG", config.toString());
            env.put("RCLONE_S3_PROVIDER", "Other");
            env.put("RCLONE_S3_ENV_AUTH", "false");
            env.put("RCLONE_S3_ACCESS_KEY_ID", server.accessKey);
            env.put("RCLONE_S3_SECRET_ACCESS_KEY", server.secretKey);
            env.put("RCLONE_S3_ENDPOINT", server.endpoint.toString());
            env.put("RCLONE_S3_REGION", server.region);
            env.put("RCLONE_S3_FORCE_PATH_STYLE", "true");
            long start = System.nanoTime();
            Process p = pb.start();
            JarRuns.awaitExit(p, TimeUnit.MINUTES.toNanos(30), "rclone");
            double seconds = (System.nanoTime() - start) / 1e9;
            if (p.exitValue() != 0) {
                throw new IOException("rclone exited with " + p.exitValue() + ": "
                        + Files.readString(log).lines().limit(5).reduce("", (a, b) -> a + " " + b));
            }
            return seconds;
        }
    }
}
