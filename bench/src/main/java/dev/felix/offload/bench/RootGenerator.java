package dev.felix.offload.bench;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.format.SegmentHeader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes data roots through the shard log, as {@code felix-offload generate} does: plain records with
 * seeded random (incompressible) payloads and increasing timestamps, fsync off but at rolls. A root
 * already written with the same parameters is reused (a marker file names them).
 */
final class RootGenerator {

    private static final String MARKER = "bench-root.txt";
    private static final long START_MICROS = 1_767_225_600_000_000L;

    private RootGenerator() {
    }

    /** A generated root: its shard directories and the sealed segment files in them, in order. */
    record Root(Path path, List<Path> shards, List<Path> sealed, long sealedBytes, long recordsPerSegment) {
    }

    /**
     * A root of {@code shards} shards, each with {@code sealedPerShard} sealed segments of (just under)
     * {@code segmentBytes} and a small active segment after them.
     */
    static Root generate(Path root, int shards, int sealedPerShard, long segmentBytes, int payloadBytes)
            throws IOException {
        long perSegment = recordsPerSegment(segmentBytes, payloadBytes);
        long records = perSegment * sealedPerShard + 10; // ten records into the active segment
        String params = "shards=" + shards + " sealed=" + sealedPerShard + " segment=" + segmentBytes + " payload="
                + payloadBytes + " records=" + records + "\n";
        Path marker = root.resolve(MARKER);
        if (!(Files.isRegularFile(marker) && Files.readString(marker).equals(params))) {
            ShardLogConfig config = emptied(root, segmentBytes);
            for (int k = 0; k < shards; k++) {
                ShardKey key = new ShardKey("bench", "default", "stream-0", k);
                write(root.resolve(key.directoryName()), config, records, payloadBytes, 1_000_003L * (k + 1));
            }
            Files.writeString(marker, params);
        }
        return describe(root, perSegment);
    }

    /** Empties {@code root} for a new root and answers the log settings its shards are written with. */
    private static ShardLogConfig emptied(Path root, long segmentBytes) throws IOException {
        Files.createDirectories(root);
        BenchFiles.deleteTree(root);
        Files.createDirectories(root);
        return ShardLogConfig.defaults().withSegmentSizeBytes(segmentBytes).withFsyncPolicy(FsyncPolicy.none());
    }

    private static void write(Path dir, ShardLogConfig config, long records, int payloadBytes, long seed)
            throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] payload = new byte[payloadBytes];
        long ts = START_MICROS;
        try (ShardLog log = ShardLog.open(dir, config)) {
            for (long i = 0; i < records; i++) {
                random.nextBytes(payload);
                ts += 1000 + random.nextInt(1000);
                log.append(ts, payload);
            }
        } catch (CorruptionException e) {
            throw new IOException(e);
        }
    }

    /**
     * A root of {@code shards} shards that all hold the same records: one shard written through the
     * shard log (fsync at its rolls), its files then copied into every other shard directory without
     * fsync. For roots of tens of thousands of small shards, where writing each through the log would
     * cost a few fsyncs per shard; the segment files name no shard, so each copy is a shard of its own.
     */
    static Root generateCopies(Path root, int shards, int sealedPerShard, long segmentBytes, int payloadBytes)
            throws IOException {
        long perSegment = recordsPerSegment(segmentBytes, payloadBytes);
        long records = perSegment * sealedPerShard + 10;
        String params = "copies shards=" + shards + " sealed=" + sealedPerShard + " segment=" + segmentBytes
                + " payload=" + payloadBytes + " records=" + records + "\n";
        Path marker = root.resolve(MARKER);
        if (!(Files.isRegularFile(marker) && Files.readString(marker).equals(params))) {
            ShardLogConfig config = emptied(root, segmentBytes);
            Path template = root.resolve(new ShardKey("bench", "default", "stream-0", 0).directoryName());
            write(template, config, records, payloadBytes, 1_000_003L);
            List<Path> files;
            try (java.util.stream.Stream<Path> list = Files.list(template)) {
                files = list.sorted().toList();
            }
            for (int k = 1; k < shards; k++) {
                Path dir = Files.createDirectories(root.resolve(new ShardKey("bench", "default", "stream-0", k)
                        .directoryName()));
                for (Path f : files) {
                    Files.copy(f, dir.resolve(f.getFileName()));
                }
            }
            Files.writeString(marker, params);
        }
        return describe(root, perSegment);
    }

    /** Records of {@code payloadBytes} a segment of {@code segmentBytes} holds; at least one, or it is refused. */
    private static long recordsPerSegment(long segmentBytes, int payloadBytes) {
        int recordBytes = RecordCodec.encodedLength(RecordKind.PLAIN, payloadBytes);
        long perSegment = (segmentBytes - SegmentHeader.LENGTH) / recordBytes;
        if (perSegment < 1) {
            throw new IllegalArgumentException("segments of " + segmentBytes + " bytes hold no " + payloadBytes
                    + "-byte record");
        }
        return perSegment;
    }

    /** Every shard of the root, with all but each shard's newest segment counted as sealed. */
    static Root describe(Path root, long recordsPerSegment) throws IOException {
        List<Path> shards = new dev.felix.offload.log.DataRoot(root).streamShards().stream().map(dev.felix.offload.log.DataRoot.Shard::directory).toList();
        List<Path> sealed = new ArrayList<>();
        long bytes = 0;
        for (Path shard : shards) {
            List<SegmentFile> files = SegmentFile.list(shard);
            for (int i = 0; i < files.size() - 1; i++) {
                sealed.add(files.get(i).log());
                bytes += Files.size(files.get(i).log());
            }
        }
        return new Root(root, shards, sealed, bytes, recordsPerSegment);
    }

    /**
     * One segment file of about {@code bytes} (the only, active segment of a shard directory), written
     * through the shard log; reused when it exists with these parameters.
     */
    static SegmentFile bigSegment(Path shardDir, long bytes, int payloadBytes) throws IOException {
        String params = "bytes=" + bytes + " payload=" + payloadBytes + "\n";
        Path marker = shardDir.resolveSibling(shardDir.getFileName() + ".txt");
        SegmentFile file = SegmentFile.in(shardDir, 0);
        if (Files.isRegularFile(marker) && Files.readString(marker).equals(params) && Files.isRegularFile(file.log())) {
            return file;
        }
        BenchFiles.deleteTree(shardDir);
        int recordBytes = RecordCodec.encodedLength(RecordKind.PLAIN, payloadBytes);
        long records = Math.max(1, (bytes - SegmentHeader.LENGTH) / recordBytes);
        ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(bytes + 2L * recordBytes + 64)
                .withFsyncPolicy(FsyncPolicy.none());
        write(shardDir, config, records, payloadBytes, 42);
        Files.writeString(marker, params);
        return file;
    }
}
