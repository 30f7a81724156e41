package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ReadResult;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import dev.felix.offload.root.SegmentKeys;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** Data roots written through ShardLog, offloaded through OffloadPass, and checks over them. */
final class TestData {

    static final ShardLogConfig SMALL_SEGMENTS = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
            .withIndexSpacingBytes(1024).withFsyncPolicy(FsyncPolicy.none());
    static final String NODE = "node-a";
    static final Map<String, String> ENV = Map.of(NodeId.ENV, NODE);
    /** Record i of a shard is stamped FIRST_RECORD + i * step. */
    static final Instant FIRST_RECORD = Instant.parse("2030-01-01T00:00:00Z");

    private TestData() {
    }

    static Path shardOf(Path root, String stream, int shard) {
        return root.resolve(new ShardKey("acme", "default", stream, shard).directoryName());
    }

    /** Writes {@code records} records (payloads of 0..399 bytes) to a shard, record i stamped FIRST_RECORD + i * step. */
    static List<Record> write(Path shardDir, int records, Duration step, long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        List<Record> written = new ArrayList<>();
        long first = micros(FIRST_RECORD);
        long stepMicros = step.toNanos() / 1000;
        try (ShardLog log = ShardLog.open(shardDir, SMALL_SEGMENTS)) {
            for (int i = 0; i < records; i++) {
                byte[] payload = new byte[random.nextInt(400)];
                random.nextBytes(payload);
                long ts = first + i * stepMicros;
                long offset = log.append(ts, payload);
                written.add(Record.plain(offset, ts, payload));
            }
        }
        return written;
    }

    /** The ownership rule for keys of {@link #NODE} without a key prefix. */
    static dev.felix.offload.root.KeyOwnership ownership() {
        return new dev.felix.offload.root.KeyOwnership(new dev.felix.offload.root.SegmentKeys("", NODE));
    }

    /** What the live manifests of the root holding {@code shardDir} name. */
    static dev.felix.offload.root.LiveKeys live(Path shardDir) throws java.io.IOException {
        return dev.felix.offload.root.LiveKeys.read(new dev.felix.offload.log.DataRoot(shardDir.getParent()));
    }

    static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    /** Offloads every sealed segment of the root, keeping everything local. */
    static PassReport offload(Path root, ObjectStore store) throws Exception {
        return offload(root, store, dir -> OptionalLong.empty());
    }

    static PassReport offload(Path root, ObjectStore store, Function<Path, OptionalLong> commitOffsets) throws Exception {
        PassReport report = new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults(), StepHook.none(), ENV,
                commitOffsets).run(ProgressListener.none());
        return report;
    }

    static long localBytes(Path shardDir) throws Exception {
        long total = 0;
        for (SegmentFile f : SegmentFile.list(shardDir)) {
            total += Files.size(f.log());
        }
        return total;
    }

    static TreeSet<String> keys(ObjectStore store, String prefix) throws Exception {
        TreeSet<String> out = new TreeSet<>();
        ObjectListing listing = store.list(prefix);
        for (int guard = 0; guard < 1_000_000 && listing.hasNext(); guard++) {
            out.add(listing.next().key());
        }
        return out;
    }

    /** Every entry of the shard's manifest names an object the store holds, with the entry's size. */
    static void assertEveryEntryHasItsObject(Path shardDir, ObjectStore store) throws Exception {
        for (ManifestEntry e : ManifestStore.read(shardDir).entries()) {
            assertThat(store.head(e.objectKey()).size()).as("object of %s", e).isEqualTo(e.sizeBytes());
        }
    }

    /**
     * Reads the shard through a tiered reader: every offset from {@code from} on returns the written
     * record, and an offset below it is trimmed.
     */
    static void assertReadsExactlyFrom(Path shardDir, List<Record> written, long from, ObjectStore store)
            throws Exception {
        TieredReader reader = new TieredReader(shardDir, store, new ChunkCache(store, 8192, 1 << 20));
        List<Record> seen = new ArrayList<>();
        long next = from;
        for (int guard = 0; guard < 100_000 && next < written.size(); guard++) {
            TieredRead r = reader.read(next, 13, 5000);
            assertThat(r).as("read at %d", next).isInstanceOf(TieredRead.Records.class);
            TieredRead.Records records = (TieredRead.Records) r;
            assertThat(records.records()).as("progress at %d", next).isNotEmpty();
            records.records().forEach(sr -> seen.add(sr.record()));
            next = records.nextOffset();
        }
        assertThat(seen).isEqualTo(written.subList((int) from, written.size()));
        if (from > 0) {
            assertThat(reader.read(from - 1, 1, 1000)).isInstanceOf(TieredRead.Trimmed.class);
            assertThat(reader.read(0, 1, 1000)).isInstanceOf(TieredRead.Trimmed.class);
        }
    }

    /** The shard opens as a log and reads every local record it still holds. */
    static void assertLocalLogOpens(Path shardDir, List<Record> written) throws Exception {
        try (ShardLog log = ShardLog.open(shardDir, SMALL_SEGMENTS)) {
            assertThat(log.nextOffset()).isEqualTo(written.size());
            long first = log.firstOffset();
            List<Record> seen = new ArrayList<>();
            long next = first;
            for (int guard = 0; guard < 100_000 && next < written.size(); guard++) {
                ReadResult.Records r = (ReadResult.Records) log.read(next, 50, Long.MAX_VALUE);
                assertThat(r.records()).as("progress at %d", next).isNotEmpty();
                seen.addAll(r.records());
                next = r.nextOffset();
            }
            assertThat(seen).isEqualTo(written.subList((int) first, written.size()));
        }
    }

    /**
     * The objects an entry's upload left in the store: its segment, and its index where the segment
     * is large enough for one ({@link SegmentKeys#hasIndexObject}).
     */
    static List<String> storedKeysOf(dev.felix.offload.manifest.ManifestEntry e) {
        return SegmentKeys.hasIndexObject(e.sizeBytes()) ? List.of(e.objectKey(), SegmentKeys.indexKeyFor(e.objectKey()))
                : List.of(e.objectKey());
    }
}
