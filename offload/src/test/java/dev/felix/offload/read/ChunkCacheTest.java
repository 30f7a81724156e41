package dev.felix.offload.read;

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
    static class CountingFetcher implements ObjectFetcher {
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
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 0); // without read-ahead: one GET a chunk
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

    @Test
    void aSequentialReaderGetsItsNextChunksAheadInOneGet() throws Exception {
        CountingFetcher f = new CountingFetcher(100 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity k = new ObjectIdentity("k", 100 * 4096, 1);
        for (int pos = 0; pos < 100 * 4096; pos += 1000) {
            int n = Math.min(1000, 100 * 4096 - pos);
            assertThat(cache.read(k, pos, n)).isEqualTo(Arrays.copyOfRange(f.object, pos, pos + n));
        }
        assertThat(cache.bytesFetched()).as("every byte fetched once").isEqualTo(100 * 4096);
        // chunks 0 and 1 on demand, then two or three chunks a GET: far fewer than one GET a chunk
        assertThat(f.gets.get()).isLessThanOrEqualTo(2 + 98 / 2);
    }

    @Test
    void aSequentialReaderThroughMoreThanTheCacheHoldsFetchesEveryByteOnce() throws Exception {
        CountingFetcher f = new CountingFetcher(200 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 32 * 4096, 8); // the object is six times the cache
        ObjectIdentity k = new ObjectIdentity("k", 200 * 4096, 1);
        for (int pos = 0; pos < 200 * 4096; pos += 1000) {
            int n = Math.min(1000, 200 * 4096 - pos);
            assertThat(cache.read(k, pos, n)).isEqualTo(Arrays.copyOfRange(f.object, pos, pos + n));
        }
        assertThat(cache.bytesFetched()).as("chunks read ahead are there when the reader comes").isEqualTo(200 * 4096);
    }

    @Test
    void theCacheHoldsItsBudgetAndDropsTheChunkLeastRecentlyUsed() throws Exception {
        CountingFetcher f = new CountingFetcher(10 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 4 * 4096, 0);
        ObjectIdentity k = new ObjectIdentity("k", 10 * 4096, 1);
        for (int c = 0; c < 4; c++) {
            cache.read(k, c * 4096L, 10);
        }
        cache.read(k, 0, 10); // chunk 0 used again: chunk 1 is now the least recently used
        assertThat(f.gets.get()).isEqualTo(4);
        cache.read(k, 4 * 4096L, 10);
        assertThat(cache.heldBytes()).isEqualTo(4 * 4096L);
        assertThat(cache.stats().evictionCount()).isEqualTo(1);
        cache.read(k, 0, 10);
        cache.read(k, 2 * 4096L, 10);
        cache.read(k, 3 * 4096L, 10);
        assertThat(f.gets.get()).as("chunks 0, 2 and 3 still held").isEqualTo(5);
        cache.read(k, 4096L, 10);
        assertThat(f.gets.get()).as("chunk 1 was the one dropped").isEqualTo(6);
    }

    @Test
    void aFailedFetchIsNotHeldAndTheNextReadAsksAgain() throws Exception {
        AtomicInteger failuresLeft = new AtomicInteger(1);
        CountingFetcher f = new CountingFetcher(4 * 4096) {
            @Override
            public byte[] readRange(String key, ByteRange range) {
                if (failuresLeft.getAndDecrement() > 0) {
                    gets.incrementAndGet();
                    throw new IllegalStateException("boom");
                }
                return super.readRange(key, range);
            }
        };
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 0);
        ObjectIdentity k = new ObjectIdentity("k", 4 * 4096, 1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> cache.read(k, 100, 10))
                .isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(cache.heldBytes()).isZero();
        assertThat(cache.read(k, 100, 10)).isEqualTo(Arrays.copyOfRange(f.object, 100, 110));
        assertThat(f.gets.get()).isEqualTo(2);
        assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
    }

    @Test
    void aRandomReaderFetchesOnlyTheChunksItTouches() throws Exception {
        CountingFetcher f = new CountingFetcher(100 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity k = new ObjectIdentity("k", 100 * 4096, 1);
        int[] chunksRead = {50, 3, 77, 12, 90, 40, 61};
        for (int c : chunksRead) {
            cache.read(k, c * 4096L + 10, 100);
        }
        Thread.sleep(200); // any read-ahead would have been started by now
        assertThat(f.gets.get()).isEqualTo(chunksRead.length);
        assertThat(cache.bytesFetched()).isEqualTo(chunksRead.length * 4096L);
    }

    @Test
    void readsThatJumpIntoNeighbouringChunksFetchOnlyThoseChunks() throws Exception {
        CountingFetcher f = new CountingFetcher(100 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity k = new ObjectIdentity("k", 100 * 4096, 1);
        // independent reads whose starts, found in an index, happen to fall in adjacent chunks
        int[] chunksRead = {10, 11, 12, 13, 40, 41};
        for (int c : chunksRead) {
            cache.jumpedTo(k, c * 4096L + 10);
            cache.read(k, c * 4096L + 10, 100);
            assertThat(cache.sequential(k)).as("after a jump to chunk %d", c).isFalse();
        }
        // and one whose record runs over into the next chunk
        cache.jumpedTo(k, 70 * 4096L + 4000);
        cache.read(k, 70 * 4096L + 4000, 200);
        Thread.sleep(200); // any read-ahead would have been started by now
        assertThat(f.gets.get()).isEqualTo(chunksRead.length + 2);
        assertThat(cache.bytesFetched()).isEqualTo((chunksRead.length + 2) * 4096L);
    }

    @Test
    void aReaderThatContinuesAfterAJumpIsReadAheadAgain() throws Exception {
        CountingFetcher f = new CountingFetcher(100 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity k = new ObjectIdentity("k", 100 * 4096, 1);
        cache.jumpedTo(k, 20 * 4096L + 4000);
        cache.read(k, 20 * 4096L + 4000, 100); // chunks 20 and 21, nothing ahead
        cache.continuing(k); // the next read starts where this one stopped
        cache.read(k, 20 * 4096L + 4100, 4096); // into chunk 22
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cache.bytesFetched() < 5 * 4096L && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(cache.sequential(k)).isTrue();
        assertThat(cache.bytesFetched()).as("chunks 20 to 22, and 23 to 24 ahead").isGreaterThanOrEqualTo(5 * 4096L);
    }

    @Test
    void aReaderHandedOnToTheNextObjectFindsItsFirstChunksFetched() throws Exception {
        CountingFetcher f = new CountingFetcher(8 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity next = new ObjectIdentity("next", 8 * 4096, 2);
        cache.continueInto(next);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cache.bytesFetched() < 4 * 4096 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(f.gets.get()).as("four chunks in one GET").isEqualTo(1);
        assertThat(cache.read(next, 0, 4 * 4096)).isEqualTo(Arrays.copyOfRange(f.object, 0, 4 * 4096));
        assertThat(cache.sequential(next)).isTrue();
    }

    @Test
    void aViewInsideOneChunkSharesItsBytesAndCoversExactlyTheRange() throws StoreException {
        CountingFetcher f = new CountingFetcher(3 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 0);
        ObjectIdentity k = new ObjectIdentity("k", 3 * 4096, 1);
        java.nio.ByteBuffer a = cache.view(k, 4096 + 100, 50);
        java.nio.ByteBuffer b = cache.view(k, 4096 + 3000, 1096);
        assertThat(a.remaining()).isEqualTo(50);
        assertThat(a.capacity()).as("nothing of the chunk beyond the range is reachable").isEqualTo(50);
        byte[] got = new byte[50];
        a.duplicate().get(got);
        assertThat(got).isEqualTo(Arrays.copyOfRange(f.object, 4196, 4246));
        assertThat(a.array()).as("a view of the cached chunk, not a copy").isSameAs(b.array());
        assertThat(f.gets.get()).isEqualTo(1);
        // across a chunk boundary: the bytes assembled, still exactly the range
        java.nio.ByteBuffer spanning = cache.view(k, 4096 - 10, 20);
        byte[] across = new byte[spanning.remaining()];
        spanning.get(across);
        assertThat(across).isEqualTo(Arrays.copyOfRange(f.object, 4086, 4106));
    }

    @Test
    void aChunkOfAReadAheadGetIsServedBeforeTheRestOfItsResponseArrives() throws Exception {
        CountDownLatch rest = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        CountingFetcher f = new CountingFetcher(10 * 4096) {
            @Override
            public void readRangeInto(String key, ByteRange range, List<byte[]> targets,
                    java.util.function.IntConsumer filled) {
                runs.incrementAndGet();
                int at = (int) range.offset();
                for (int i = 0; i < targets.size(); i++) {
                    if (i == 1) {
                        try {
                            rest.await(30, TimeUnit.SECONDS); // the rest of the body is still on the wire
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    System.arraycopy(object, at, targets.get(i), 0, targets.get(i).length);
                    at += targets.get(i).length;
                    filled.accept(i);
                }
            }
        };
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20, 4);
        ObjectIdentity k = new ObjectIdentity("k", 10 * 4096, 1);
        ExecutorService reader = Executors.newSingleThreadExecutor();
        try {
            cache.read(k, 0, 10);
            cache.read(k, 4096, 10); // sequential: chunks 2..5 asked for in one GET
            Future<byte[]> third = reader.submit(() -> cache.read(k, 2 * 4096, 4096));
            assertThat(third.get(10, TimeUnit.SECONDS)).as("chunk 2 while 3..5 are held back")
                    .isEqualTo(Arrays.copyOfRange(f.object, 2 * 4096, 3 * 4096));
            assertThat(runs.get()).isEqualTo(1);
            rest.countDown();
            assertThat(reader.submit(() -> cache.read(k, 3 * 4096, 3 * 4096)).get(10, TimeUnit.SECONDS))
                    .isEqualTo(Arrays.copyOfRange(f.object, 3 * 4096, 6 * 4096));
            assertThat(f.gets.get()).as("chunks 0 and 1 on demand only").isEqualTo(2);
        } finally {
            rest.countDown();
            reader.shutdownNow();
        }
    }

    /**
     * Read-ahead for many sequential readers at once shares a bounded pool: the runs beyond it queue
     * instead of each taking a thread (the demand fetch itself runs on the reader's own thread).
     */
    @Test
    void readAheadOfManyReadersWaitsForAFetchThreadInsteadOfMakingOne() throws Exception {
        int readers = ChunkCache.MAX_CONCURRENT_FETCHES + 24;
        int chunk = 4096;
        CountDownLatch aheadGate = new CountDownLatch(1);
        AtomicInteger aheadUnderWay = new AtomicInteger();
        CountingFetcher f = new CountingFetcher(10 * chunk) {
            @Override
            public byte[] readRange(String key, ByteRange range) {
                if (range.offset() >= 2L * chunk) { // beyond the two chunks read on demand: read-ahead
                    aheadUnderWay.incrementAndGet();
                    try {
                        aheadGate.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.readRange(key, range);
            }
        };
        ChunkCache cache = new ChunkCache(f, chunk, 1 << 20);
        try {
            for (int i = 0; i < readers; i++) {
                ObjectIdentity object = new ObjectIdentity("k" + i, 10 * chunk, i);
                assertThat(cache.read(object, 0, 10)).isEqualTo(Arrays.copyOfRange(f.object, 0, 10));
                // Stepping into the next chunk makes this a sequential reader: its read-ahead goes to the pool.
                assertThat(cache.read(object, chunk, 10)).isEqualTo(Arrays.copyOfRange(f.object, chunk, chunk + 10));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (aheadUnderWay.get() < ChunkCache.MAX_CONCURRENT_FETCHES && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(aheadUnderWay.get()).as("read-ahead GETs under way at once").isEqualTo(ChunkCache.MAX_CONCURRENT_FETCHES);
            assertThat(cache.queuedFetches()).as("read-ahead GETs waiting for a fetch thread")
                    .isEqualTo(readers - ChunkCache.MAX_CONCURRENT_FETCHES);
            aheadGate.countDown();
            for (int i = 0; i < readers; i++) {
                ObjectIdentity object = new ObjectIdentity("k" + i, 10 * chunk, i);
                assertThat(cache.read(object, 5L * chunk, 10)).isEqualTo(Arrays.copyOfRange(f.object, 5 * chunk, 5 * chunk + 10));
            }
            assertThat(cache.largestFetchPool()).isEqualTo(ChunkCache.MAX_CONCURRENT_FETCHES);
        } finally {
            aheadGate.countDown();
            cache.close();
        }
    }

    /**
     * Chunks on their way count in the budget with those held: with room for two chunks and two GETs
     * held back on the wire, a third reader's GET waits until one of them has arrived, and the bytes
     * held and on their way never exceed the budget.
     */
    @Test
    void getsUnderWayCountInTheBudgetAndAFurtherOneWaitsForRoom() throws Exception {
        CountingFetcher f = new CountingFetcher(10 * 4096);
        f.gate = new CountDownLatch(1);
        ChunkCache cache = new ChunkCache(f, 4096, 2 * 4096, 0);
        ObjectIdentity k = new ObjectIdentity("k", 10 * 4096, 1);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<byte[]>> reads = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                long at = c * 4096L + 5;
                reads.add(pool.submit(() -> cache.read(k, at, 10)));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (f.gets.get() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(f.gets.get()).as("GETs under way while the first two are held back").isEqualTo(2);
            assertThat(cache.inFlightBytes()).isEqualTo(2 * 4096L);
            f.gate.countDown();
            for (int c = 0; c < 3; c++) {
                assertThat(reads.get(c).get(30, TimeUnit.SECONDS))
                        .isEqualTo(Arrays.copyOfRange(f.object, c * 4096 + 5, c * 4096 + 15));
            }
        } finally {
            f.gate.countDown();
            pool.shutdownNow();
        }
        assertThat(f.gets.get()).isEqualTo(3);
        assertThat(cache.peakBytes()).as("held and on their way at once").isLessThanOrEqualTo(2 * 4096L);
        assertThat(cache.inFlightBytes()).isZero();
        assertThat(cache.heldBytes()).isLessThanOrEqualTo(2 * 4096L);
    }

    /** A closed cache starts no fetch thread: readers still get their bytes, fetched on their own threads. */
    @Test
    void aClosedCacheReadsWithoutReadAhead() throws Exception {
        CountingFetcher f = new CountingFetcher(10 * 4096);
        ChunkCache cache = new ChunkCache(f, 4096, 1 << 20);
        cache.close();
        ObjectIdentity object = new ObjectIdentity("k", 10 * 4096, 1);
        for (int i = 0; i < 10; i++) {
            assertThat(cache.read(object, i * 4096L, 100)).isEqualTo(Arrays.copyOfRange(f.object, i * 4096, i * 4096 + 100));
        }
        assertThat(cache.largestFetchPool()).as("fetch threads made after close").isZero();
    }
}
