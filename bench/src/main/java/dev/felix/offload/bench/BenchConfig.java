package dev.felix.offload.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every size and count of a run, from {@code bench.*} system properties. {@code -Dbench.quick=true}
 * switches the defaults to small sizes (a few minutes in all); any property given explicitly wins.
 */
final class BenchConfig {

    static final long MiB = 1024L * 1024;
    static final long GiB = 1024L * MiB;

    final boolean quick = Boolean.getBoolean("bench.quick");
    final List<String> sections = list("bench.sections", "offload,startup,reads,http,log,manifest");
    /** Replace only the sections run in the existing output file, keeping the others (a re-run of one section). */
    final boolean merge = Boolean.getBoolean("bench.merge");
    final int runs = integer("bench.runs", 5);
    final int warmups = integer("bench.warmups", 1);
    final Path work = Path.of(System.getProperty("bench.work", defaultWork())).toAbsolutePath();
    final Path out = Path.of(System.getProperty("bench.out", defaultOut())).toAbsolutePath();

    final List<String> servers = list("bench.servers", "s3proxy,s3mock,rgw");
    final long offloadBytes = size("bench.offload.bytes", quick ? 128 * MiB : GiB);
    /**
     * The segment sizes the offload section runs with, each its own root of {@link #offloadBytes}: large
     * segments, and small ones so that costs per segment show. The reads and HTTP sections use the first.
     */
    final List<Long> offloadSegmentSizes = list("bench.offload.segment.bytes", quick ? "32m" : "128m,4m").stream()
            .map(v -> {
                try {
                    return parseSize(v);
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("bench.offload.segment.bytes: '" + v
                            + "' is not a byte count (digits, then k, m or g)");
                }
            }).toList();
    final long offloadSegmentBytes = offloadSegmentSizes.get(0);
    final int offloadShards = integer("bench.offload.shards", 2);
    final int offloadParallelism = integer("bench.offload.parallelism", 2);
    final int offloadPayloadBytes = integer("bench.offload.payload.bytes", 1024);
    final boolean offloadNoVerifySide = !"false".equals(System.getProperty("bench.offload.no-verify-side"));
    final boolean offloadSinglePutSide = !"false".equals(System.getProperty("bench.offload.single-put-side"));
    final String rclone = System.getProperty("bench.rclone", "rclone");
    /** The command's jar, for side b2 (the pass as its own process with a 256 MiB heap). */
    final Path cliJar = Path.of(System.getProperty("bench.cli.jar", "cli/target/felix-offload.jar")).toAbsolutePath();
    /**
     * The distribution's launcher, with the class-data-sharing archive it makes (side b4 and the start-up
     * rows): the tarball in {@code bench.dist} (default {@code dist/target}) unpacked under the work
     * directory, or {@code -Dbench.launcher=PATH}; null, with {@link #launcherMissing} saying why, without one.
     */
    private final Launcher.Found launcherFound = sectionsNeedLauncher() ? Launcher.find(System.getProperty("bench.launcher"),
            Path.of(System.getProperty("bench.dist", "dist/target")).toAbsolutePath(), work)
            : new Launcher.Found(null, "not asked for");
    final Path launcher = launcherFound.launcher();
    final String launcherMissing = launcherFound.why();

    final int randomReads = integer("bench.reads.random", 20);
    final int chunkBytes = integer("bench.reads.chunk.bytes", 4 * 1024 * 1024);

    final long recoveryBytes = size("bench.log.recovery.bytes", quick ? 128 * MiB : GiB);
    final int recoveryPayloadBytes = integer("bench.log.recovery.payload.bytes", 1024);
    final long rebuildBytes = size("bench.log.rebuild.bytes", quick ? 64 * MiB : 256 * MiB);
    final int batchRecords = integer("bench.log.batch.records", 16);

    /** Fleet scale (section 6, only when asked for: it takes long): shard counts, and each shard's shape. */
    final List<Integer> scaleShards = list("bench.scale.shards", quick ? "200,1000" : "1000,10000,30000").stream()
            .map(v -> {
                try {
                    return Integer.parseInt(v);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bench.scale.shards: '" + v + "' is not a whole number");
                }
            }).toList();
    final int scaleSegmentsPerShard = integer("bench.scale.segments", 8);
    final long scaleSegmentBytes = size("bench.scale.segment.bytes", 4 * 1024);
    final int scalePayloadBytes = integer("bench.scale.payload.bytes", 200);
    /** Shards at once in the offload that fills the store (not measured as a pass of nothing to do). */
    final int scaleFillParallelism = integer("bench.scale.fill.parallelism", 16);
    final int scaleRetentionRuns = integer("bench.scale.retention.runs", 3);
    /** The heap a retention pass runs under: small, so that one growing with the objects fails. */
    final String scaleRetentionHeap = System.getProperty("bench.scale.retention.heap", "64m");
    final int scaleDaemonSeconds = integer("bench.scale.daemon.seconds", 75);
    final int scaleTimeoutMinutes = integer("bench.scale.timeout.minutes", 60);

    final List<String> manifestSizes = list("bench.manifest.sizes", "1000,10000,100000");

    final int jmhWarmupIterations = integer("bench.jmh.warmup.iterations", quick ? 1 : 2);
    final int jmhWarmupMillis = integer("bench.jmh.warmup.ms", 300);
    final int jmhIterations = integer("bench.jmh.iterations", quick ? 2 : 3);
    final int jmhMillis = integer("bench.jmh.ms", 500);
    /** Single-shot benchmarks (one whole scan per iteration): warm-up and measured shots per run. */
    final int jmhShotWarmups = integer("bench.jmh.shot.warmups", 2);
    final int jmhShots = integer("bench.jmh.shots", quick ? 2 : 4);
    /** Manifest loads and saves take up to a few hundred ms at 100k entries: a longer warm-up per iteration. */
    final int jmhManifestWarmupMillis = integer("bench.jmh.manifest.warmup.ms", 1000);

    BenchConfig() {
        // a typo in a name would otherwise run nothing for it, or fail only after the other servers' runs
        only("bench.sections", sections, List.of("offload", "startup", "reads", "http", "log", "manifest", "scale"));
        only("bench.servers", servers, List.of(S3ServerProcess.S3PROXY, S3ServerProcess.S3MOCK, S3ServerProcess.RGW));
    }

    private static void only(String setting, List<String> given, List<String> known) {
        for (String name : given) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException(setting + ": unknown name '" + name + "'; use any of "
                        + String.join(",", known));
            }
        }
    }

    boolean runs(String section) {
        return sections.contains(section);
    }

    /** The settings, for the report. */
    Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("runs", runs + " measured after " + warmups + " warm-up");
        m.put("offload", Table.bytes(offloadBytes) + " of sealed segments of "
                + String.join(" and of ", offloadSegmentSizes.stream().map(Table::bytes).toList())
                + ", " + offloadShards + " shards, parallelism " + offloadParallelism + ", payloads of "
                + offloadPayloadBytes + " B");
        m.put("reads", randomReads + " random single-record reads per run, chunks of " + Table.bytes(chunkBytes));
        m.put("log", "recovery segment " + Table.bytes(recoveryBytes) + " (" + recoveryPayloadBytes
                + " B payloads), index rebuild segments " + Table.bytes(rebuildBytes) + ", batches of " + batchRecords
                + " records");
        if (runs("scale")) {
            m.put("scale", scaleShards.stream().map(n -> Table.f("%,d", n)).toList() + " shards of "
                    + scaleSegmentsPerShard + " sealed segments of " + Table.bytes(scaleSegmentBytes) + ", retention under -Xmx"
                    + scaleRetentionHeap + ", daemon watched " + scaleDaemonSeconds + " s");
        }
        m.put("JMH", "each run is 1 fork: " + jmhWarmupIterations + " x " + jmhWarmupMillis + " ms warm-up, "
                + jmhIterations + " x " + jmhMillis + " ms measured (manifest: warm-up iterations of "
                + jmhManifestWarmupMillis + " ms; single-shot scans: " + jmhShotWarmups + " warm-up and " + jmhShots
                + " measured shots)");
        return m;
    }

    private static String defaultWork() {
        return Files.isDirectory(Path.of("bench", "target")) ? "bench/target/bench-work" : "felix-bench-work";
    }

    private static String defaultOut() {
        return Files.isDirectory(Path.of("docs")) ? "docs/benchmarks.md" : "benchmarks.md";
    }

    private static List<String> list(String name, String def) {
        return Arrays.stream(System.getProperty(name, def).split(","))
                .map(s -> s.trim().toLowerCase(Locale.ROOT)).filter(s -> !s.isEmpty()).toList();
    }

    private static int integer(String name, int def) {
        String v = System.getProperty(name);
        try {
            return v == null ? def : Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": '" + v + "' is not a whole number");
        }
    }

    /** A byte count: digits with an optional k, m or g (powers of 1024). */
    static long size(String name, long def) {
        String v = System.getProperty(name);
        try {
            return v == null ? def : parseSize(v);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(name + ": '" + v + "' is not a byte count (digits, then k, m or g)");
        }
    }

    static long parseSize(String text) {
        String v = text.trim().toLowerCase(Locale.ROOT).replace("ib", "").replace("b", "");
        long unit = 1;
        char last = v.charAt(v.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g') {
            unit = last == 'k' ? 1024 : last == 'm' ? MiB : GiB;
            v = v.substring(0, v.length() - 1);
        }
        return Long.parseLong(v.trim()) * unit;
    }

    private boolean sectionsNeedLauncher() {
        return sections.contains("offload") || sections.contains("startup");
    }
}
