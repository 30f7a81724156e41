package dev.felix.offload.pass;

import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.store.ObjectStore;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** Data roots written through ShardLog for offload tests, and checks that every written offset reads back. */
public final class TestRoots {

    public static final ShardLogConfig SMALL_SEGMENTS = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
            .withIndexSpacingBytes(1024).withFsyncPolicy(FsyncPolicy.none());

    private TestRoots() {
    }

    /**
     * Segments of 5 MiB, above the size from which a segment gets an index object beside it
     * ({@link dev.felix.offload.root.SegmentKeys#hasIndexObject}); 22,000 records of payloads below
     * 1 KiB fill two of them and part of a third.
     */
    public static final ShardLogConfig LARGE_SEGMENTS = ShardLogConfig.defaults().withSegmentSizeBytes(5 * 1024 * 1024)
            .withIndexSpacingBytes(1024).withFsyncPolicy(FsyncPolicy.none());

    /** Writes {@code shards} shards of {@code records} records each; answers what each shard holds. */
    public static Map<Path, List<Record>> write(Path root, int shards, int records, long seed) throws Exception {
        return write(root, "orders", shards, records, seed, SMALL_SEGMENTS, 400);
    }

    /**
     * As {@link #write(Path, int, int, long)}, for shards of stream {@code acme/default/<stream>}, in
     * segments of {@code config}, with payloads below {@code maxPayload} bytes.
     */
    public static Map<Path, List<Record>> write(Path root, String stream, int shards, int records, long seed,
            ShardLogConfig config, int maxPayload) throws Exception {
        Map<Path, List<Record>> written = new LinkedHashMap<>();
        for (int s = 0; s < shards; s++) {
            Path dir = root.resolve(new ShardKey("acme", "default", stream, s).directoryName());
            SplittableRandom random = new SplittableRandom(seed + s);
            List<Record> list = new ArrayList<>();
            try (ShardLog log = ShardLog.open(dir, config)) {
                for (int i = 0; i < records; i++) {
                    byte[] payload = new byte[random.nextInt(maxPayload)];
                    random.nextBytes(payload);
                    if (i % 50 == 7) {
                        long first = log.appendBatch(9, i, 1000L + i, List.of(payload, payload));
                        list.addAll(readBack(log, first, 2));
                        i++;
                    } else {
                        long offset = log.append(1000L + i, payload);
                        list.add(Record.plain(offset, 1000L + i, payload));
                    }
                }
            }
            written.put(dir, list);
        }
        return written;
    }

    /**
     * Writes a shard of {@code parts} runs of {@code recordsPerPart} records with an empty sealed
     * segment between each two runs, as a broker's roll of an empty active segment leaves one.
     */
    public static List<Record> writeWithEmptySegments(Path dir, int parts, int recordsPerPart, long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        List<Record> list = new ArrayList<>();
        for (int part = 0; part < parts; part++) {
            if (part > 0) {
                dev.felix.offload.log.SegmentInfo active;
                try (ShardLog log = ShardLog.open(dir, SMALL_SEGMENTS)) {
                    active = log.segments().get(log.segments().size() - 1);
                }
                for (long id = active.file().id() + 1; id <= active.file().id() + 2; id++) {
                    try (dev.felix.offload.log.SegmentWriter w = dev.felix.offload.log.SegmentWriter.create(
                            dev.felix.offload.log.SegmentFile.in(dir, id),
                            new dev.felix.offload.log.format.SegmentHeader(3, active.nextOffset(), 1000L), 1024)) {
                        w.sync();
                    }
                }
            }
            try (ShardLog log = ShardLog.open(dir, SMALL_SEGMENTS)) {
                for (int i = 0; i < recordsPerPart; i++) {
                    byte[] payload = new byte[random.nextInt(400)];
                    random.nextBytes(payload);
                    long ts = 1000L + list.size();
                    long offset = log.append(ts, payload);
                    list.add(Record.plain(offset, ts, payload));
                }
            }
        }
        return list;
    }

    private static List<Record> readBack(ShardLog log, long from, int n) throws Exception {
        return ((dev.felix.offload.log.ReadResult.Records) log.read(from, n, Long.MAX_VALUE)).records();
    }

    /** Reads every offset of every shard through a tiered reader and compares with what was written. */
    public static void assertEveryOffsetReadsBack(Map<Path, List<Record>> written, ObjectStore store) throws Exception {
        ChunkCache cache = new ChunkCache(store, 8192, 1 << 20);
        for (Map.Entry<Path, List<Record>> e : written.entrySet()) {
            TieredReader reader = new TieredReader(e.getKey(), store, cache);
            List<Record> expected = e.getValue();
            // Sequentially, in small reads that cross chunks, objects and the local base.
            List<Record> seen = new ArrayList<>();
            long next = 0;
            for (int guard = 0; guard < 100_000 && seen.size() < expected.size(); guard++) {
                TieredRead r = reader.read(next, 7, 3000);
                assertThat(r).as("read at %d of %s", next, e.getKey().getFileName()).isInstanceOf(TieredRead.Records.class);
                TieredRead.Records records = (TieredRead.Records) r;
                assertThat(records.records()).as("progress at %d", next).isNotEmpty();
                records.records().forEach(sr -> seen.add(sr.record()));
                next = records.nextOffset();
            }
            assertThat(seen).isEqualTo(expected);
            // And single records at scattered offsets.
            for (int i = 0; i < expected.size(); i += 37) {
                TieredRead.Records one = (TieredRead.Records) reader.read(i, 1, 1);
                assertThat(one.records()).singleElement().extracting(TieredRead.SourcedRecord::record)
                        .isEqualTo(expected.get(i));
            }
            assertThat(((TieredRead.Records) reader.read(expected.size(), 10, 1000)).records()).isEmpty();
        }
    }

    public static DataRoot root(Path dir) {
        return new DataRoot(dir);
    }
}
