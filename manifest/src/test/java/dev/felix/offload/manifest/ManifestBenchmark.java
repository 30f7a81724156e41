package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Times loading and saving manifests of 1k, 10k and 100k entries. Not a test: run with
 * {@code mvn -B -ntp -pl manifest -Pbench test}. Each figure is the median of the measured runs after
 * warm-up runs; save includes both fsyncs and the rename, load reads the file (from the page cache)
 * and decodes it. Encode and decode alone are shown to separate the codec from the disk.
 */
public final class ManifestBenchmark {

    private static final int WARM_UP_RUNS = 5;
    private static final int MEASURED_RUNS = 11;
    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    private ManifestBenchmark() {
    }

    /** A manifest of {@code n} entries shaped as offload writes them: 1000-record segments, 64 MiB each. */
    static Manifest manifestOf(int n) {
        ManifestEntry[] entries = new ManifestEntry[n];
        long base = 0;
        for (int i = 0; i < n; i++) {
            long last = base + 999;
            entries[i] = new ManifestEntry(i, base, last, 64L << 20, 1_700_000_000_000_000L + base * 1000,
                    1_700_000_000_000_000L + last * 1000, i * 0x9E3779B9,
                    "node-1/" + SHARD + "/" + String.format("%020d-%020d.segment", base, i));
            base = last + 1;
        }
        return Manifest.of(Arrays.asList(entries));
    }

    private interface Run {
        void run() throws Exception;
    }

    /** Median milliseconds of the measured runs. */
    private static double medianMillis(Run run) throws Exception {
        for (int i = 0; i < WARM_UP_RUNS; i++) {
            run.run();
        }
        long[] nanos = new long[MEASURED_RUNS];
        for (int i = 0; i < MEASURED_RUNS; i++) {
            long start = System.nanoTime();
            run.run();
            nanos[i] = System.nanoTime() - start;
        }
        Arrays.sort(nanos);
        return nanos[MEASURED_RUNS / 2] / 1e6;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/manifest-bench");
        System.out.printf(Locale.ROOT, "offload.manifest load/save, median of %d runs after %d warm-up runs, in %s%n",
                MEASURED_RUNS, WARM_UP_RUNS, dir.toAbsolutePath());
        System.out.printf(Locale.ROOT, "%9s %12s %10s %10s %10s %10s%n",
                "entries", "file bytes", "load ms", "save ms", "decode ms", "encode ms");
        warmUpEveryPath(dir);
        for (int n : new int[] {1_000, 10_000, 100_000}) {
            Path shardDir = dir.resolve(n + "-entries").resolve(SHARD);
            Files.createDirectories(shardDir);
            Files.deleteIfExists(ManifestStore.fileIn(shardDir));
            Manifest manifest = manifestOf(n);
            byte[] bytes = ManifestCodec.encode(manifest);
            ManifestStore store = ManifestStore.open(shardDir);

            double save = medianMillis(() -> store.save(manifest));
            double load = medianMillis(() -> check(ManifestStore.read(shardDir), n));
            CorruptionSite site = CorruptionSite.inFile(SHARD, ManifestStore.FILE_NAME, 0);
            double decode = medianMillis(() -> check(ManifestCodec.decode(ByteBuffer.wrap(bytes), site), n));
            double encode = medianMillis(() -> ManifestCodec.encode(manifest));

            System.out.printf(Locale.ROOT, "%9d %12d %10.2f %10.2f %10.2f %10.2f%n",
                    n, bytes.length, load, save, decode, encode);
        }
    }

    /**
     * Runs every measured path until the JIT has compiled it, so the first size in the table is not
     * charged for compiling what the later ones reuse.
     */
    private static void warmUpEveryPath(Path dir) throws Exception {
        Path shardDir = dir.resolve("warm-up").resolve(SHARD);
        Files.createDirectories(shardDir);
        Manifest manifest = manifestOf(10_000);
        byte[] bytes = ManifestCodec.encode(manifest);
        ManifestStore store = ManifestStore.open(shardDir);
        CorruptionSite site = CorruptionSite.inFile(SHARD, ManifestStore.FILE_NAME, 0);
        for (int i = 0; i < 40; i++) {
            store.save(manifest);
            check(ManifestStore.read(shardDir), 10_000);
            check(ManifestCodec.decode(ByteBuffer.wrap(bytes), site), 10_000);
            ManifestCodec.encode(manifest);
        }
    }

    private static void check(Manifest m, int n) throws IOException, CorruptionException {
        if (m.size() != n) {
            throw new IllegalStateException("read " + m.size() + " entries, expected " + n);
        }
    }
}
