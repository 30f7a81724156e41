package dev.felix.offload.pass;

import dev.felix.offload.root.SegmentKeys;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
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
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A remote read checks the object at an entry's key against the entry before it serves any record:
 * another history at the same key, whose records each pass their own checksums (a copy of the data
 * root offloading under the same node id, say), is refused with {@link CorruptionKind#OBJECT_MISMATCH},
 * never served. The check costs one HEAD per object, not one per read.
 */
class TieredReaderObjectCheckTest {

    private static final int RECORDS = 600;

    @TempDir
    Path tmp;

    /** A root of one shard whose records all have 300-byte payloads from {@code seed}: sizes never vary. */
    private Path writeRoot(String name, long seed, List<Record> written) throws Exception {
        Path root = Files.createDirectories(tmp.resolve(name));
        Path dir = root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
        SplittableRandom random = new SplittableRandom(seed);
        try (ShardLog log = ShardLog.open(dir, TestRoots.SMALL_SEGMENTS)) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] payload = new byte[300];
                random.nextBytes(payload);
                long offset = log.append(1000L + i, payload);
                written.add(Record.plain(offset, 1000L + i, payload));
            }
        }
        return dir;
    }

    private static Manifest offload(Path shardDir, FilesystemStore store) throws Exception {
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1));
        new OffloadPass(new DataRoot(shardDir.getParent()), store, settings, StepHook.none(),
                Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        return ManifestStore.read(shardDir);
    }

    /** Counts HEADs and GETs by key. */
    private static final class Counting implements ObjectFetcher {
        final ObjectFetcher store;
        final Map<String, LongAdder> heads = new ConcurrentHashMap<>();

        Counting(ObjectFetcher store) {
            this.store = store;
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            heads.computeIfAbsent(key, k -> new LongAdder()).increment();
            return store.head(key);
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            return store.readRange(key, range);
        }

        @Override
        public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
                throws StoreException {
            store.readRangeInto(key, range, targets, filled);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            return store.readAll(key, maxSize, expectedCrc32);
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
            return store.download(key, target, expectedCrc32);
        }
    }

    @Test
    void anotherHistoryAtAnEntrysKeyIsRefusedNotServed() throws Exception {
        List<Record> ours = new ArrayList<>();
        List<Record> theirs = new ArrayList<>();
        Path a = writeRoot("a", 1, ours);
        Path b = writeRoot("b", 2, theirs);
        try (FilesystemStore storeA = FilesystemStore.open(Files.createDirectories(tmp.resolve("store-a")));
             FilesystemStore storeB = FilesystemStore.open(Files.createDirectories(tmp.resolve("store-b")))) {
            Manifest manifest = offload(a, storeA);
            Manifest other = offload(b, storeB);
            ManifestEntry oldest = manifest.oldestEntry().orElseThrow();
            ManifestEntry otherOldest = other.oldestEntry().orElseThrow();
            assertThat(otherOldest.objectKey()).isEqualTo(oldest.objectKey());
            assertThat(otherOldest.sizeBytes()).as("same sizes, other bytes").isEqualTo(oldest.sizeBytes());
            assertThat(otherOldest.objectCrc32()).isNotEqualTo(oldest.objectCrc32());
            // b's object (and index) replace a's at the key, as a clone's sweep and upload would leave them
            List<String> keys = SegmentKeys.hasIndexObject(oldest.sizeBytes())
                    ? List.of(oldest.objectKey(), SegmentKeys.indexKeyFor(oldest.objectKey()))
                    : List.of(oldest.objectKey()); // a small segment has no index object
            for (String key : keys) {
                byte[] bytes = storeB.readAll(key, Integer.MAX_VALUE - 16, OptionalLong.empty());
                CRC32 crc = new CRC32();
                crc.update(bytes);
                storeA.delete(key);
                storeA.put(key, UploadBody.ofBytes(bytes), PutOptions.defaults().withCrc32(crc.getValue()));
            }

            // one chunk holds the whole object (its bytes are checked), and many (the store's CRC-32 is)
            for (int chunk : new int[] {1 << 20, 4096}) {
                TieredReader reader = new TieredReader(a, storeA, new ChunkCache(storeA, chunk, 1 << 22));
                for (long offset : new long[] {0, oldest.lastOffset()}) {
                    assertThatThrownBy(() -> reader.read(offset, 1, 1 << 20)).as("chunk %d, offset %d", chunk, offset)
                            .isInstanceOfSatisfying(CorruptionException.class, e -> {
                                assertThat(e.kind()).isEqualTo(CorruptionKind.OBJECT_MISMATCH);
                                assertThat(e.getMessage()).contains(oldest.objectKey())
                                        .contains(String.format("%08x", oldest.objectCrc32()))
                                        .contains(String.format("%08x", otherOldest.objectCrc32()));
                            });
                }
                // the next object is a's own and reads as written
                long next = oldest.lastOffset() + 1;
                TieredRead.Records r = (TieredRead.Records) reader.read(next, 1, 1 << 20);
                assertThat(r.records()).singleElement().extracting(TieredRead.SourcedRecord::record)
                        .isEqualTo(ours.get((int) next));
            }
        }
    }

    @Test
    void anObjectShorterThanItsEntryIsATruncationBeforeAnyOfItsRecordsIsServed() throws Exception {
        List<Record> ours = new ArrayList<>();
        Path a = writeRoot("a", 1, ours);
        try (FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            ManifestEntry oldest = offload(a, store).oldestEntry().orElseThrow();
            Path object = store.root().resolve(oldest.objectKey());
            byte[] bytes = Files.readAllBytes(object);
            Files.write(object, java.util.Arrays.copyOf(bytes, bytes.length - 10));
            for (int chunk : new int[] {1 << 20, 4096}) {
                TieredReader reader = new TieredReader(a, store, new ChunkCache(store, chunk, 1 << 22));
                assertThatThrownBy(() -> reader.read(0, 1, 1 << 20)).as("chunks of %d", chunk)
                        .isInstanceOfSatisfying(CorruptionException.class, e -> {
                            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
                            assertThat(e.getMessage()).contains(oldest.objectKey())
                                    .contains((bytes.length - 10) + " bytes stored, " + bytes.length
                                            + " recorded by its manifest entry");
                        });
            }
        }
    }

    @Test
    void theCheckCostsOneHeadPerObjectNotOnePerRead() throws Exception {
        List<Record> ours = new ArrayList<>();
        Path a = writeRoot("a", 1, ours);
        try (FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            Manifest manifest = offload(a, store);
            Counting counting = new Counting(store);
            TieredReader reader = new TieredReader(a, counting, new ChunkCache(counting, 4096, 1 << 22));
            long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;
            SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < 200; i++) {
                long offset = random.nextLong(localBase);
                TieredRead.Records r = (TieredRead.Records) reader.read(offset, 1, 1 << 20);
                assertThat(r.records().get(0).record()).isEqualTo(ours.get((int) offset));
            }
            for (ManifestEntry e : manifest.entries()) {
                assertThat(counting.heads.getOrDefault(e.objectKey(), new LongAdder()).sum()).as(e.objectKey())
                        .isLessThanOrEqualTo(1);
            }
            long heads = counting.heads.values().stream().mapToLong(LongAdder::sum).sum();
            assertThat(heads).as("HEADs for 200 reads of %d objects", manifest.size()).isLessThanOrEqualTo(manifest.size());

            // an object that fits in one chunk is checked by its bytes, with no HEAD at all
            Counting bare = new Counting(store);
            TieredReader whole = new TieredReader(a, bare, new ChunkCache(bare, 1 << 20, 1 << 22));
            for (int i = 0; i < 50; i++) {
                long offset = random.nextLong(localBase);
                assertThat(((TieredRead.Records) whole.read(offset, 1, 1 << 20)).records().get(0).record())
                        .isEqualTo(ours.get((int) offset));
            }
            assertThat(bare.heads).isEmpty();
        }
    }
}
