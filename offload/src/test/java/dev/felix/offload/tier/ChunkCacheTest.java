package dev.felix.offload.tier;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class ChunkCacheTest {

    /** An in-memory object whose ranged GETs are counted and can be held back. */
    static final class CountingFetcher implements ObjectFetcher {
        final byte[] object;
        final AtomicInteger gets = new AtomicInteger();
        volatile CountDownLatch gate = new CountDownLatch(0);

        CountingFetcher(int size) {
            object = new byte[size];
            for (int i = 0; i < size; i++) {
                object[i] = (byte) (i * 31 + 7);
            }
        }

        @Override
        public byte[] readRange(String key, ByteRange range) {
            gets.incrementAndGet();
            try {
                gate.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Arrays.copyOfRange(object, (int) range.offset(), (int) range.end());
        }

        @Override
        public ObjectHead head(String key) {
            throw new UnsupportedOperationException("the cache only makes ranged GETs");
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) {
            throw new UnsupportedOperationException("the cache only makes ranged GETs");
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) {
            throw new UnsupportedOperationException("the cache only makes ranged GETs");
        }
    }

    @Test
    void readsAnyRangeAcrossChunksExactly() throws StoreException {
        CountingFetcher f = new CountingFetcher(50_000);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20);
        for (int[] r : new int[][] {{0, 1}, {4095, 2}, {100, 20_000}, {49_999, 1}, {0, 50_000}, {40_960, 9040}}) {
            assertThat(cache.read(new ObjectIdentity("k", 50_000, 1), r[0], r[1])).isEqualTo(Arrays.copyOfRange(f.object, r[0], r[0] + r[1]));
        }
        assertThat(f.gets.get()).as("each chunk fetched once").isEqualTo(13);
        assertThat(cache.stats().hitCount()).isPositive();
        assertThat(cache.bytesFetched()).isEqualTo(50_000);
    }

    @Test
    void concurrentReadersOfOneChunkShareOneGet() throws Exception {
        CountingFetcher f = new CountingFetcher(10_000);
        f.gate = new CountDownLatch(1);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<byte[]>> reads = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int at = i * 100;
                reads.add(pool.submit(() -> cache.read(new ObjectIdentity("k", 10_000, 1), at, 50)));
            }
            f.gate.countDown();
            for (int i = 0; i < 8; i++) {
                assertThat(reads.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(Arrays.copyOfRange(f.object, i * 100, i * 100 + 50));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(f.gets.get()).isEqualTo(1);
    }

    /** Another history under the same key and size (a reset shard offloaded again) is never served old bytes. */
    @Test
    void theSameKeyAndSizeWithAnotherCrc32IsOtherBytes() throws StoreException {
        CountingFetcher f = new CountingFetcher(10_000);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20);
        byte[] before = cache.read(new ObjectIdentity("k", 10_000, 0x1111), 100, 10);
        f.object[105] ^= 0x7f; // the object at "k" is replaced by bytes of the same size
        assertThat(cache.read(new ObjectIdentity("k", 10_000, 0x1111), 100, 10)).as("same identity: cached").isEqualTo(before);
        byte[] after = cache.read(new ObjectIdentity("k", 10_000, 0x2222), 100, 10);
        assertThat(after).isEqualTo(Arrays.copyOfRange(f.object, 100, 110)).isNotEqualTo(before);
        assertThat(f.gets.get()).isEqualTo(2);
    }

    @Test
    void anInvalidatedChunkIsFetchedAgain() throws StoreException {
        CountingFetcher f = new CountingFetcher(10_000);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20);
        ObjectIdentity k = new ObjectIdentity("k", 10_000, 1);
        cache.read(k, 5000, 10);
        cache.invalidate(k, 5000, 10);
        cache.read(k, 5000, 10);
        assertThat(f.gets.get()).isEqualTo(2);
        assertThat(cache.gets()).isEqualTo(2);
    }
}
