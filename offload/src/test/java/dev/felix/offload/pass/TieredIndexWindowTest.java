package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.function.IntConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A random read of a segment whose index is large fetches the run of index entries it needs, not
 * the whole index; an index whose runs are damaged or out of step with the segment still leads to
 * the right records.
 */
class TieredIndexWindowTest {

    /** Entries per fetched run in these tests: small, so that small segments have "large" indexes. */
    private static final int RUN = 8;

    @TempDir
    Path tmp;

    private Path shard;
    private final List<Record> written = new ArrayList<>();
    private FilesystemStore fs;
    private Path storeDir;
    private Manifest manifest;

    /** What was asked of the store: the call, the key and the bytes asked for (-1 for a whole object). */
    record Call(String what, String key, long bytes) {
    }

    static final class Recording implements ObjectFetcher {
        final ObjectFetcher store;
        final List<Call> calls = Collections.synchronizedList(new ArrayList<>());

        Recording(ObjectFetcher store) {
            this.store = store;
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            calls.add(new Call("head", key, 0));
            return store.head(key);
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            calls.add(new Call("range", key, range.length()));
            return store.readRange(key, range);
        }

        @Override
        public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
                throws StoreException {
            calls.add(new Call("range", key, range.length()));
            store.readRangeInto(key, range, targets, filled);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            calls.add(new Call("all", key, -1));
            return store.readAll(key, maxSize, expectedCrc32);
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
            calls.add(new Call("download", key, -1));
            return store.download(key, target, expectedCrc32);
        }

        List<Call> ofIndexes() {
            synchronized (calls) {
                return calls.stream().filter(c -> c.key().endsWith(".index")).toList();
            }
        }
    }

    /**
     * One shard of 4.25 MiB segments (large enough for an index object, {@link SegmentKeys#hasIndexObject})
     * with an index entry every KiB or so, offloaded.
     */
    private void offload() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        storeDir = Files.createDirectories(tmp.resolve("store"));
        fs = FilesystemStore.open(storeDir);
        shard = root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
        ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(4352 * 1024).withIndexSpacingBytes(1024)
                .withFsyncPolicy(FsyncPolicy.none());
        SplittableRandom random = new SplittableRandom(77);
        try (ShardLog log = ShardLog.open(shard, config)) {
            for (int i = 0; i < 64_000; i++) {
                byte[] payload = new byte[random.nextInt(800)];
                random.nextBytes(payload);
                long offset = log.append(1000L + i, payload);
                written.add(Record.plain(offset, 1000L + i, payload));
            }
        }
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        new OffloadPass(new DataRoot(root), fs, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).as("objects to read from").isGreaterThan(3);
    }

    private long indexBytes(ManifestEntry e) throws Exception {
        return Files.size(storeDir.resolve(SegmentKeys.indexKeyFor(e.objectKey())));
    }

    /** Reads each offset alone through a fresh reader, checking every record; answers the calls made. */
    private Recording readAlone(List<Long> offsets) throws Exception {
        Recording store = new Recording(fs);
        TieredReader reader = new TieredReader(shard.getFileName().toString(), shard, store,
                new ChunkCache(store, 4096, 1 << 20, 0), RUN);
        for (long offset : offsets) {
            TieredRead.Records r = (TieredRead.Records) reader.read(offset, 1, 1 << 20);
            assertThat(r.records()).as("read at %d", offset).hasSize(1);
            assertThat(r.records().get(0).remote()).isTrue();
            assertThat(r.records().get(0).record()).isEqualTo(written.get((int) offset));
        }
        return store;
    }

    /** Offsets spread over every remote object, {@code perObject} per object, from near its start to its end. */
    private List<Long> spread(int perObject) {
        List<Long> offsets = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            long span = e.lastOffset() - e.baseOffset() + 1;
            for (int k = 1; k <= perObject; k++) {
                offsets.add(e.baseOffset() + span * k / (perObject + 1));
            }
        }
        return offsets;
    }

    private long indexTotal() throws Exception {
        long total = 0;
        for (ManifestEntry e : manifest.entries()) {
            long bytes = indexBytes(e);
            assertThat((bytes - SegmentIndex.HEADER_LENGTH) / SegmentIndex.ENTRY_LENGTH)
                    .as("entries of %s's index", e.objectKey()).isGreaterThan(2L * RUN);
            total += bytes;
        }
        return total;
    }

    private static long count(List<Call> calls, String what, String key) {
        return calls.stream().filter(c -> c.what().equals(what) && (key == null || c.key().equals(key))).count();
    }

    @Test
    void aSingleReadOfALargeSegmentFetchesARunOfItsIndexNotAllOfIt() throws Exception {
        offload();
        long indexTotal = indexTotal();
        List<Long> offsets = spread(1);
        List<Call> index = readAlone(offsets).ofIndexes();
        assertThat(index).as("no index fetched whole").noneMatch(c -> c.what().equals("all"));
        assertThat(index).as("each run at most %d entries and the header", RUN)
                .allMatch(c -> c.bytes() <= SegmentIndex.HEADER_LENGTH + RUN * SegmentIndex.ENTRY_LENGTH);
        assertThat(count(index, "head", null)).as("one HEAD per index").isEqualTo(manifest.size());
        assertThat(count(index, "range", null)).as("runs fetched for %d reads", offsets.size())
                .isLessThanOrEqualTo(2L * offsets.size());
        long fetched = index.stream().mapToLong(Call::bytes).sum();
        assertThat(fetched).as("index bytes fetched, of %d in %d indexes", indexTotal, manifest.size())
                .isLessThan(indexTotal / 4);
    }

    @Test
    void aReaderBackForMoreOfASegmentFetchesItsIndexWholeOnceAndThenNothing() throws Exception {
        offload();
        indexTotal();
        List<Long> offsets = new ArrayList<>(spread(4));
        offsets.addAll(spread(4)); // and all of them again
        List<Call> index = readAlone(offsets).ofIndexes();
        for (ManifestEntry e : manifest.entries()) {
            String key = SegmentKeys.indexKeyFor(e.objectKey());
            assertThat(count(index, "head", key)).as("HEADs of %s", key).isEqualTo(1);
            assertThat(count(index, "range", key)).as("runs of %s, for its first read", key).isBetween(1L, 2L);
            assertThat(count(index, "all", key)).as("whole fetches of %s, from its second read on", key).isEqualTo(1);
        }
    }

    @Test
    void damagedOrMisleadingIndexRunsStillLeadToTheRightRecords() throws Exception {
        offload();
        List<ManifestEntry> entries = manifest.entries();
        // one index with its entries out of order in the middle
        Path disordered = storeDir.resolve(SegmentKeys.indexKeyFor(entries.get(1).objectKey()));
        byte[] bytes = Files.readAllBytes(disordered);
        ByteBuffer.wrap(bytes).putLong(SegmentIndex.HEADER_LENGTH + 20 * SegmentIndex.ENTRY_LENGTH, 0L);
        Files.write(disordered, bytes);
        // one whose entries point at the wrong bytes
        Path misleading = storeDir.resolve(SegmentKeys.indexKeyFor(entries.get(2).objectKey()));
        bytes = Files.readAllBytes(misleading);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        for (int at = SegmentIndex.HEADER_LENGTH; at + SegmentIndex.ENTRY_LENGTH <= bytes.length;
                at += SegmentIndex.ENTRY_LENGTH) {
            b.putLong(at + SegmentIndex.ENTRY_POSITION_OFFSET, b.getLong(at + SegmentIndex.ENTRY_POSITION_OFFSET) + 5);
        }
        Files.write(misleading, bytes);
        // one missing
        Files.delete(storeDir.resolve(SegmentKeys.indexKeyFor(entries.get(3).objectKey())));
        List<Long> offsets = new ArrayList<>();
        // about 30 reads an object; a read of a misleading or missing index scans from its segment's start
        for (long o = 1; o < manifest.newestEntry().orElseThrow().lastOffset(); o += 397) {
            offsets.add(o);
        }
        readAlone(offsets); // every record checked against what was written
    }
}
