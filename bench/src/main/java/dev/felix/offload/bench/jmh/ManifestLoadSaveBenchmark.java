package dev.felix.offload.bench.jmh;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Loading and saving a shard's {@code offload.manifest} of {@code entries} entries against the same
 * file operations without the codec: load against reading the file's bytes; save (temporary, fsync,
 * atomic move, directory fsync) against doing exactly those steps with bytes already encoded. The
 * file is in the page cache for loads; saves pay two fsyncs each, on both sides.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ManifestLoadSaveBenchmark {

    static final String SHARD = "bench_default_stream-0_0-0d3aed4b998d2798";

    @Param({"1000", "10000", "100000"})
    public int entries;

    private Path shardDir;
    private Path rawDir;
    private Manifest manifest;
    private ManifestStore store;
    private byte[] encoded;

    /** A manifest shaped as offload writes them: one entry per 64 MiB segment of 1000 records. */
    public static Manifest manifestOf(int n) {
        List<ManifestEntry> list = new ArrayList<>(n);
        long base = 0;
        long micros = 1_767_225_600_000_000L;
        for (int i = 0; i < n; i++) {
            long last = base + 999;
            String key = String.format("node-1/%s/%020d-%020d.segment", SHARD, base, i);
            list.add(new ManifestEntry(i, base, last, 64L << 20, micros + base * 1000, micros + last * 1000,
                    (int) (i * 0x9E3779B1L), key));
            base = last + 1;
        }
        return Manifest.of(list);
    }

    @Setup
    public void setUp() throws IOException, CorruptionException {
        Path work = Path.of(System.getProperty("bench.work", System.getProperty("java.io.tmpdir")));
        Path root = Files.createDirectories(work.resolve("manifest-" + entries));
        shardDir = Files.createDirectories(root.resolve(SHARD));
        rawDir = Files.createDirectories(root.resolve("raw"));
        Files.deleteIfExists(ManifestStore.fileIn(shardDir));
        manifest = manifestOf(entries);
        store = ManifestStore.open(shardDir);
        store.save(manifest);
        encoded = ManifestCodec.encode(manifest);
        Files.write(rawDir.resolve("raw.manifest"), encoded);
    }

    @Benchmark
    public Manifest load() throws IOException, CorruptionException {
        Manifest m = ManifestStore.read(shardDir);
        if (m.size() != entries) {
            throw new IllegalStateException("read " + m.size() + " entries");
        }
        return m;
    }

    /** Reads the same number of bytes as {@link #load()} without decoding them. */
    @Benchmark
    public byte[] rawLoad() throws IOException {
        try (FileChannel ch = FileChannel.open(rawDir.resolve("raw.manifest"), StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate((int) ch.size());
            for (int n = 0; n >= 0 && buf.hasRemaining(); ) {
                n = ch.read(buf);
            }
            return buf.array();
        }
    }

    @Benchmark
    public void save() throws IOException {
        store.save(manifest);
    }

    /** The durable replace of {@link #save()} with the bytes already encoded. */
    @Benchmark
    public void rawSave() throws IOException {
        Path temp = rawDir.resolve("raw.manifest.tmp");
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(encoded);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        Files.move(temp, rawDir.resolve("raw.manifest"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(rawDir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
