package dev.felix.offload.bench.jmh;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.CorruptionException;
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
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * Rebuilding a segment's sparse index from its record headers alone ({@link ShardLog#rebuildIndexOf}),
 * on segments of the same size with different payload sizes: it should cost per record, not per
 * byte. A raw sequential read of the same file is the reference for reading every byte. Segments are
 * under {@code bench.rebuild.dir}/{@code <payload>}/shard.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class IndexRebuildBenchmark {

    @Param({"100", "65536"})
    public int payload;

    private SegmentFile file;
    private long size;
    private ByteBuffer buffer;

    @Setup
    public void setUp() throws IOException {
        Path shard = Path.of(System.getProperty("bench.rebuild.dir")).resolve(Integer.toString(payload)).resolve("shard");
        file = SegmentFile.in(shard, 0);
        size = Files.size(file.log());
        buffer = ByteBuffer.allocateDirect(1024 * 1024);
    }

    @Benchmark
    public int rebuild() throws IOException, CorruptionException {
        return ShardLog.rebuildIndexOf(file, "shard", size, SegmentWriter.DEFAULT_INDEX_SPACING_BYTES).size();
    }

    @Benchmark
    public long raw() throws IOException {
        long total = 0;
        try (FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.READ)) {
            int n;
            while ((n = ch.read(buffer.clear())) >= 0) {
                total += n;
            }
        }
        return total;
    }
}
