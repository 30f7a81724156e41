package dev.felix.offload.bench.jmh;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentScan;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The full recovery scan of one big segment (the only, newest segment of a shard directory, named by
 * {@code bench.recovery.dir}) against a raw sequential read of the same file. The file is in the page
 * cache after the first pass, for every side alike: this compares CPU work, not the disk.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class RecoveryBenchmark {

    private static final int RAW_BUFFER = 1024 * 1024;

    private Path shardDir;
    private Path file;
    private ByteBuffer buffer;

    @Setup
    public void setUp() {
        shardDir = Path.of(System.getProperty("bench.recovery.dir"));
        file = shardDir.resolve(dev.felix.offload.log.SegmentFile.logName(0));
        buffer = ByteBuffer.allocateDirect(RAW_BUFFER);
    }

    /** What recovery does to the newest segment: every record read whole and its checksums verified. */
    @Benchmark
    public long scan() throws IOException {
        SegmentScan scan = SegmentScan.of(file, shardDir.getFileName().toString(), 0, ScanDepth.RECORDS);
        if (!scan.isClean()) {
            throw new IllegalStateException("segment not clean: " + scan.failure().getMessage());
        }
        return scan.recordCount();
    }

    /** Opening the shard as the broker does: recovery scan, index rebuild, producer replay. */
    @Benchmark
    public long open() throws IOException, CorruptionException {
        try (ShardLog log = ShardLog.open(shardDir, ShardLogConfig.defaults().withSegmentSizeBytes(Long.MAX_VALUE / 4)
                .withFsyncPolicy(FsyncPolicy.none()))) {
            return log.nextOffset();
        }
    }

    /** The baseline: read the file front to back in 1 MiB reads. */
    @Benchmark
    public long raw() throws IOException {
        long total = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            int n;
            while ((n = ch.read(buffer.clear())) >= 0) {
                total += n;
            }
        }
        return total;
    }

    /** The baseline plus one CRC-32 over every byte: about what checking checksums alone must cost. */
    @Benchmark
    public long rawCrc() throws IOException {
        CRC32 crc = new CRC32();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            while (ch.read(buffer.clear()) >= 0) {
                crc.update(buffer.flip());
            }
        }
        return crc.getValue();
    }
}
