package dev.felix.offload.bench.jmh;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Appends to the shard log against a raw FileChannel writing the same bytes. One operation is one
 * append call: a batch of {@code batch} records through {@link ShardLog#appendBatch} (one write, and
 * with {@code fsync=batch} one fdatasync, as {@link FsyncPolicy#onCommit()} does per call), or with
 * {@code batch=1} one plain record through {@link ShardLog#append}.
 *
 * <p>The raw side writes the very bytes the log writes for those records, with one write per
 * operation (and one {@code force(false)} per operation with {@code fsync=batch}) into files of the
 * log's segment size, forcing each file when it is full, as the log does when it rolls. So the
 * difference is what the log does beyond the I/O: encoding, CRCs, the sparse index, producer state,
 * locks, and the extra work of a roll (index file, header fsync, directory fsync).
 *
 * <p>Every iteration starts in an empty directory under {@code bench.work}, deleted afterwards.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AppendBenchmark {

    private static final long PRODUCER = 7;
    private static final long TS = 1_767_225_600_000_000L;

    @Param({"100", "16384"})
    public int payload;

    /** {@code off}: FsyncPolicy.none(); {@code batch}: FsyncPolicy.onCommit(), one fsync per append call. */
    @Param({"off", "batch"})
    public String fsync;

    /** Records per append call; 1 means plain single-record appends. */
    @Param({"16"})
    public int batch;

    private Path dir;
    private ShardLog log;
    private List<byte[]> payloads;
    private byte[] single;
    private long sequence;

    private FileChannel raw;
    private byte[] rawBytes;
    private long rawPosition;
    private int rawFiles;
    private long segmentBytes;

    @Setup(Level.Iteration)
    public void setUp() throws IOException, CorruptionException {
        Path work = Path.of(System.getProperty("bench.work", System.getProperty("java.io.tmpdir")));
        Files.createDirectories(work);
        dir = Files.createTempDirectory(work, "append-");
        SplittableRandom random = new SplittableRandom(payload * 31L + batch);
        payloads = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
            byte[] p = new byte[payload];
            random.nextBytes(p);
            payloads.add(p);
        }
        single = payloads.get(0);
        ShardLogConfig config = ShardLogConfig.defaults()
                .withFsyncPolicy("batch".equals(fsync) ? FsyncPolicy.onCommit() : FsyncPolicy.none());
        segmentBytes = config.segmentSizeBytes();
        log = ShardLog.open(dir.resolve("shard"), config);
        sequence = 0;

        // The bytes the log writes for one operation: the same records, encoded the same way.
        List<Record> records = new ArrayList<>();
        if (batch == 1) {
            records.add(Record.plain(0, TS, single));
        } else {
            records.add(Record.batchOpen(0, TS, new BatchTag(PRODUCER, 0, batch), payloads.get(0)));
            for (int i = 1; i < batch; i++) {
                records.add(Record.batchContinue(i, TS, payloads.get(i)));
            }
        }
        int total = records.stream().mapToInt(Record::encodedLength).sum();
        ByteBuffer buf = ByteBuffer.allocate(total);
        for (Record r : records) {
            RecordCodec.encodeInto(r, buf);
        }
        rawBytes = buf.array();
        rawFiles = 0;
        openRaw();
    }

    private void openRaw() throws IOException {
        raw = FileChannel.open(dir.resolve("raw-" + rawFiles++ + ".log"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE);
        rawPosition = 0;
    }

    @TearDown(Level.Iteration)
    public void tearDown() throws IOException {
        log.close();
        raw.close();
        deleteTree(dir);
    }

    @Benchmark
    public long log() throws IOException {
        if (batch == 1) {
            return log.append(TS, single);
        }
        return log.appendBatch(PRODUCER, sequence++, TS, payloads);
    }

    @Benchmark
    public long raw() throws IOException {
        if (rawPosition > 0 && rawPosition + rawBytes.length > segmentBytes) {
            raw.force(true);
            raw.close();
            openRaw();
        }
        ByteBuffer b = ByteBuffer.wrap(rawBytes);
        while (b.hasRemaining()) {
            rawPosition += raw.write(b, rawPosition);
        }
        if ("batch".equals(fsync)) {
            raw.force(false);
        }
        return rawPosition;
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
