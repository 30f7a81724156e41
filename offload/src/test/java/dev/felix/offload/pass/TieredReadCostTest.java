package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
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
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.s3.AwsSdkWire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What reads through the readers' cache ({@link ChunkCache#forReads}) cost: a random read that misses
 * fetches about what it serves, not a 4 MiB chunk around it; a sequential reader still reads each
 * object in a few large GETs; and many readers at once never hold more chunks, held and on their
 * way, than the cache's budget.
 */
class TieredReadCostTest {

    /** Segments of 8 MiB: larger than a small object, so a random read does not fetch one whole for its check. */
    private static final ShardLogConfig EIGHT_MIB_SEGMENTS = ShardLogConfig.defaults()
            .withSegmentSizeBytes(8L * 1024 * 1024).withFsyncPolicy(FsyncPolicy.none());

    @TempDir
    Path tmp;

    private Path shard;
    private List<Record> written;
    private Manifest manifest;

    /** Writes about 26 MiB in records of 1-3 KiB and offloads all but the newest segment to {@code store}. */
    private void offload(ObjectStore store) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        shard = root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
        written = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(37);
        try (ShardLog log = ShardLog.open(shard, EIGHT_MIB_SEGMENTS)) {
            for (int i = 0; i < 13_000; i++) {
                byte[] payload = new byte[1000 + random.nextInt(2000)];
                random.nextBytes(payload);
                long offset = log.append(1000L + i, payload);
                written.add(Record.plain(offset, 1000L + i, payload));
            }
        }
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1))
                .withUnlinkSettle(Duration.ofMillis(300)).withRetries(3, Duration.ofMillis(5));
        new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).as("objects to read from").isGreaterThanOrEqualTo(2);
        assertThat(manifest.entries()).allMatch(e -> e.sizeBytes() > ChunkCache.DEFAULT_SMALL_OBJECT_BYTES);
    }

    private long remoteEnd() {
        return manifest.newestEntry().orElseThrow().lastOffset() + 1;
    }

    /** Counts requests and the bytes they fetch, by key. */
    static final class Counting implements ObjectFetcher {
        final ObjectFetcher store;
        final Map<String, LongAdder> bytes = new ConcurrentHashMap<>();
        final Map<String, LongAdder> gets = new ConcurrentHashMap<>();
        final LongAdder heads = new LongAdder();

        Counting(ObjectFetcher store) {
            this.store = store;
        }

        private void got(String key, long n) {
            gets.computeIfAbsent(key, k -> new LongAdder()).increment();
            bytes.computeIfAbsent(key, k -> new LongAdder()).add(n);
        }

        long bytesOf(String key) {
            LongAdder n = bytes.get(key);
            return n == null ? 0 : n.sum();
        }

        long getsOf(String key) {
            LongAdder n = gets.get(key);
            return n == null ? 0 : n.sum();
        }

        long totalBytes() {
            return bytes.values().stream().mapToLong(LongAdder::sum).sum();
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            heads.increment();
            return store.head(key);
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            byte[] b = store.readRange(key, range);
            got(key, b.length);
            return b;
        }

        @Override
        public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
                throws StoreException {
            got(key, range.length());
            store.readRangeInto(key, range, targets, filled);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            byte[] b = store.readAll(key, maxSize, expectedCrc32);
            got(key, b.length);
            return b;
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
            DownloadResult r = store.download(key, target, expectedCrc32);
            try {
                got(key, Files.size(target));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return r;
        }
    }

    private static ObjectStore s3proxy(S3Server server, String bucket) throws Exception {
        return AwsSdkWire.store(server.settings(server.createBucket(bucket)).prefix("tiered").build());
    }

    /**
     * Answers of 64 KiB from random offsets of objects no read has touched, each through a fresh
     * cache and reader (so nothing is cached), on S3Proxy: each fetches at most the two 128 KiB
     * chunks its records lie in and the segment's header from the object, and its index, never a
     * 4 MiB chunk (which it did before: 48 times the bytes served).
     */
    @Test
    void aRandomReadOfAnUncachedObjectFetchesAboutWhatItServes() throws Exception {
        S3Server server = S3Servers.s3proxy();
        try (ObjectStore store = s3proxy(server, "random-cost")) {
            offload(store);
            SplittableRandom random = new SplittableRandom(5);
            long servedTotal = 0;
            long fetchedTotal = 0;
            for (int i = 0; i < 12; i++) {
                long offset = 1 + random.nextLong(remoteEnd() - 1);
                ManifestEntry entry = manifest.find(offset).entry();
                if (offset == entry.baseOffset()) {
                    continue;
                }
                Counting counting = new Counting(store);
                try (ChunkCache cache = ChunkCache.forReads(counting, ChunkCache.DEFAULT_MAX_BYTES)) {
                    TieredReader reader = new TieredReader(shard, counting, cache);
                    TieredRead.Records r = (TieredRead.Records) reader.read(offset, 1000, 64 * 1024);
                    assertThat(r.records()).isNotEmpty();
                    assertThat(r.records().get(0).remote()).as("read from the store").isTrue();
                    for (TieredRead.SourcedRecord sr : r.records()) {
                        assertThat(sr.record()).isEqualTo(written.get((int) sr.record().offset()));
                    }
                    long served = reader.remoteRecordBytes();
                    long segmentBytes = counting.bytesOf(entry.objectKey());
                    assertThat(segmentBytes).as("bytes of %s fetched for %d bytes served from offset %d", entry.objectKey(),
                            served, offset).isLessThanOrEqualTo(2L * ChunkCache.DEFAULT_CHUNK_BYTES + SegmentHeader.LENGTH);
                    // The index of an 8 MiB segment at one entry a 4 KiB is 32 KiB, fetched whole.
                    assertThat(counting.totalBytes()).as("all bytes fetched for a 64 KiB answer")
                            .isLessThanOrEqualTo(320L * 1024);
                    servedTotal += served;
                    fetchedTotal += counting.totalBytes();
                }
            }
            assertThat(servedTotal).isPositive();
            assertThat(fetchedTotal).as("bytes fetched against %d served", servedTotal).isLessThan(6 * servedTotal);
        }
    }

    /**
     * A reader that goes through the shard in order, 1 MiB an answer, on S3Proxy: every byte of every
     * object fetched once, in a few GETs an object (its window ahead of 32 MiB), no index.
     */
    @Test
    void aSequentialReaderStillReadsEachObjectOnceInFewLargeGets() throws Exception {
        S3Server server = S3Servers.s3proxy();
        try (ObjectStore store = s3proxy(server, "sequential-cost")) {
            offload(store);
            Counting counting = new Counting(store);
            try (ChunkCache cache = ChunkCache.forReads(counting, ChunkCache.DEFAULT_MAX_BYTES)) {
                TieredReader reader = new TieredReader(shard, counting, cache);
                for (long next = 0; next < remoteEnd(); ) {
                    TieredRead.Records r = (TieredRead.Records) reader.read(next, 100_000, 1024 * 1024);
                    for (TieredRead.SourcedRecord sr : r.records()) {
                        assertThat(sr.record()).isEqualTo(written.get((int) sr.record().offset()));
                    }
                    next = r.nextOffset();
                }
                for (ManifestEntry e : manifest.entries()) {
                    assertThat(counting.bytesOf(e.objectKey())).as("bytes of %s fetched", e.objectKey())
                            .isEqualTo(e.sizeBytes());
                    assertThat(counting.getsOf(e.objectKey())).as("GETs of %s (%d bytes)", e.objectKey(), e.sizeBytes())
                            .isLessThanOrEqualTo(3);
                }
                assertThat(counting.gets.keySet()).as("only segment objects fetched: no index")
                        .allMatch(k -> manifest.entries().stream().anyMatch(e -> e.objectKey().equals(k)));
            }
        }
    }

    /**
     * 64 readers at once through one reader and a 2 MiB cache (16 chunks): random readers with small
     * and large budgets and sequential ones, whose windows ahead compete for the cache. The chunks
     * held and those on their way never exceed the budget together, and every record is the one written.
     */
    @Test
    void sixtyFourReadersAtOnceNeverHoldMoreThanTheCache() throws Exception {
        FilesystemStore fs = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        offload(fs);
        long budget = 2L * 1024 * 1024;
        try (ChunkCache cache = ChunkCache.forReads(fs, budget)) {
            TieredReader reader = new TieredReader(shard, fs, cache);
            int threads = 64;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CyclicBarrier start = new CyclicBarrier(threads);
            try {
                List<Future<Long>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    done.add(pool.submit(() -> {
                        SplittableRandom random = new SplittableRandom(id);
                        start.await(60, TimeUnit.SECONDS);
                        long records = 0;
                        long next = random.nextLong(remoteEnd());
                        for (int i = 0; i < 40; i++) {
                            boolean sequential = id % 4 == 0;
                            long maxBytes = sequential || id % 4 == 1 ? 1024 * 1024 : 64 * 1024;
                            long from = sequential ? next : random.nextLong(remoteEnd());
                            if (from >= remoteEnd()) {
                                from = 0;
                            }
                            TieredRead.Records r = (TieredRead.Records) reader.read(from, 100_000, maxBytes);
                            for (TieredRead.SourcedRecord sr : r.records()) {
                                assertThat(sr.record()).isEqualTo(written.get((int) sr.record().offset()));
                                records++;
                            }
                            next = r.nextOffset();
                        }
                        return records;
                    }));
                }
                for (Future<Long> f : done) {
                    assertThat(f.get(300, TimeUnit.SECONDS)).isPositive();
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(cache.gets()).as("GETs made").isGreaterThan(threads);
            assertThat(cache.stats().evictionCount()).as("chunks dropped for lack of room").isPositive();
            assertThat(cache.peakBytes()).as("the most chunk bytes held and on their way at once")
                    .isLessThanOrEqualTo(budget);
            assertThat(cache.inFlightBytes()).as("nothing left reserved").isZero();
            assertThat(cache.heldBytes()).isLessThanOrEqualTo(budget);
        }
    }
}
