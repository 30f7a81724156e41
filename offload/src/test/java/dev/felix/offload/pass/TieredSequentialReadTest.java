package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reader going through the remote range in order, read after read, as a consumer does: the same
 * records as were written, every object's bytes fetched once, in few GETs, and no index or header
 * fetched on the side (a read starting at an object's base offset needs no index, one continuing
 * where the last stopped starts at that point, and the header comes out of the first chunk).
 */
class TieredSequentialReadTest {

    @TempDir
    Path tmp;

    /** Counts what is fetched, by key. */
    static final class Counting implements ObjectFetcher {
        final ObjectFetcher store;
        final Map<String, LongAdder> gets = new ConcurrentHashMap<>();
        final List<String> smallRanges = java.util.Collections.synchronizedList(new ArrayList<>());

        Counting(ObjectFetcher store) {
            this.store = store;
        }

        private void count(String key) {
            gets.computeIfAbsent(key, k -> new LongAdder()).increment();
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            return store.head(key);
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            count(key);
            if (range.length() <= 64) {
                smallRanges.add(key + "@" + range.offset());
            }
            return store.readRange(key, range);
        }

        @Override
        public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
                throws StoreException {
            count(key);
            store.readRangeInto(key, range, targets, filled);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            count(key);
            return store.readAll(key, maxSize, expectedCrc32);
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
            count(key);
            return store.download(key, target, expectedCrc32);
        }

        long getsOf(String key) {
            LongAdder n = gets.get(key);
            return n == null ? 0 : n.sum();
        }
    }

    @Test
    void remoteRecordsAreViewsOfTheirChunksAndLocalOnesOwnTheirPayloads() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        FilesystemStore fs = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        Map<Path, List<Record>> shards = TestRoots.write(root, 1, 300, 11);
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        new OffloadPass(new DataRoot(root), fs, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        Path shard = shards.keySet().iterator().next();
        List<Record> written = shards.get(shard);
        TieredReader reader = new TieredReader(shard, fs, new ChunkCache(fs, 4096, 1 << 20));
        List<TieredRead.SourcedRecord> seen = new ArrayList<>();
        long next = 0;
        while (next < written.size()) {
            TieredRead.Records r = (TieredRead.Records) reader.read(next, 50, 1 << 16);
            assertThat(r.records()).as("progress at %d", next).isNotEmpty();
            seen.addAll(r.records());
            next = r.nextOffset();
        }
        assertThat(seen).extracting(TieredRead.SourcedRecord::record).isEqualTo(written);
        assertThat(seen).as("both sides read").anyMatch(TieredRead.SourcedRecord::remote)
                .anyMatch(sr -> !sr.remote());
        for (TieredRead.SourcedRecord sr : seen) {
            Record r = sr.record();
            // what a raw /read response writes: a remote record's stored bytes, the same as encoding it
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            dev.felix.offload.log.format.RecordCodec.writeTo(r, out);
            assertThat(out.toByteArray()).as("bytes of record %d", r.offset())
                    .isEqualTo(dev.felix.offload.log.format.RecordCodec.encode(written.get((int) r.offset())));
            // local scans reuse their read buffer, so only the remote side may hand out views
            assertThat(r.encodedView().isPresent()).as("record %d (remote %s) is a view", r.offset(), sr.remote())
                    .isEqualTo(sr.remote());
        }
    }

    @Test
    void aSequentialReaderFetchesEachObjectOnceInFewGetsAndNoIndexOrHeader() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        FilesystemStore fs = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        Map<Path, List<Record>> shards = TestRoots.write(root, 1, 600, 11);
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        new OffloadPass(new DataRoot(root), fs, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        Path shard = shards.keySet().iterator().next();
        List<Record> written = shards.get(shard);
        Manifest manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).as("objects to read through").isGreaterThan(1);
        long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;

        Counting store = new Counting(fs);
        ChunkCache chunks = new ChunkCache(store, 4096, 1 << 20);
        TieredReader reader = new TieredReader(shard, store, chunks);
        List<Record> seen = new ArrayList<>();
        long next = 0;
        int reads = 0;
        while (next < localBase) {
            // small reads: many per object, each continuing where the last stopped
            TieredRead.Records r = (TieredRead.Records) reader.read(next, 7, 3000);
            assertThat(r.records()).as("progress at %d", next).isNotEmpty();
            r.records().forEach(sr -> seen.add(sr.record()));
            next = r.nextOffset();
            reads++;
        }
        assertThat(seen.size()).isGreaterThanOrEqualTo((int) localBase); // the last read may go on into the local log
        assertThat(seen).isEqualTo(written.subList(0, seen.size()));

        long objectBytes = 0;
        for (ManifestEntry e : manifest.entries()) {
            objectBytes += e.sizeBytes();
            long chunkCount = (e.sizeBytes() + 4095) / 4096;
            assertThat(store.getsOf(e.objectKey())).as("GETs of %s (%d chunks)", e.objectKey(), chunkCount)
                    .isLessThanOrEqualTo(2 + chunkCount / 4); // a cold start: two chunks on demand, then runs
        }
        assertThat(reads).as("reads per object").isGreaterThan(2 * manifest.size());
        assertThat(store.gets.keySet()).as("only segment objects fetched: no index")
                .allMatch(k -> manifest.entries().stream().anyMatch(e -> e.objectKey().equals(k)));
        assertThat(store.smallRanges).as("no header fetched on its own").isEmpty();
        assertThat(chunks.bytesFetched()).as("every byte once").isEqualTo(objectBytes);
    }
}
