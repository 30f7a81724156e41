package dev.felix.offload.read;

import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.felix.offload.read.HeldChunks.ChunkKey;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Aligned chunks of objects, fetched with ranged GETs and kept in memory up to a byte budget. Chunk
 * {@code i} of an object covers bytes {@code [i * chunkSize, min((i + 1) * chunkSize, size))}.
 * Concurrent requests for one chunk share one GET. Hits and misses are counted.
 *
 * <p><b>Read-ahead, for sequential readers only.</b> A reader that steps from chunk {@code i} into
 * {@code i + 1} of an object is taken for a sequential one: the cache keeps up to
 * {@code readAheadChunks} chunks ahead of it in flight, asking for the missing ones together once
 * half the window is used, so adjacent chunks come in one ranged GET. {@link #continueInto} carries
 * the window into the next object before the reader gets there. A random reader (one that jumps)
 * only ever fetches the chunks it touches: a read that says it {@link #jumpedTo} a position is not
 * taken for a sequential one when it, or the next jump, lands in the chunk after the last. What the
 * cache knows of its readers and the window it keeps ahead of them are {@link ReadAhead}'s.
 *
 * <p><b>Eviction is least recently used, by bytes.</b> Not Caffeine's frequency-based admission: it
 * turned away chunks fetched ahead (never yet read, so never counted) in favour of chunks a scan had
 * already finished with, so a sequential reader through more than the cache holds fetched 1.2 to
 * 1.7 times the object's bytes. A scan's chunks are used in a burst and then not again; the oldest
 * goes first, and a window ahead, at most half the cache, is never the oldest.
 *
 * <p><b>Bytes on their way count.</b> {@code maxBytes} bounds the chunks held and those being
 * fetched together: a GET reserves the bytes of its chunks before it allocates them, dropping the
 * least recently used chunks to make room, and waits while GETs already under way fill the budget
 * (each GET is at most half of it, so one always fits once they end). The chunks a caller still
 * holds after they were dropped (records served as views of them) are the caller's memory. The
 * chunks held and on their way, and that budget, are {@link HeldChunks}'s; the GETs are {@link ChunkGets}'s.
 *
 * <p><b>Chunk size and requests.</b> {@link #forReads} makes the cache readers use: chunks of
 * {@link #DEFAULT_CHUNK_BYTES} (128 KiB), so a random read that misses fetches the one or two
 * chunks its records lie in, not 4 MiB around them; a sequential reader still reads in large GETs,
 * since its window ahead ({@link #DEFAULT_READ_AHEAD_BYTES}) is asked for in runs of up to
 * {@link #MAX_GET_BYTES}.
 *
 * <p>Chunks are keyed by the object's {@link ObjectIdentity} (key, size and CRC32), not its key:
 * bytes cached for one history of a shard are never served for another offloaded under the same
 * keys.
 */
public final class ChunkCache implements AutoCloseable {

    /**
     * 128 KiB chunks for {@link #forReads}: what a random read that misses fetches (one chunk, or two
     * when its records cross a boundary). Measured on S3Proxy a ranged GET costs a fixed 5-10 ms
     * beyond its bytes, so a smaller chunk saves little time but many bytes: with 4 MiB chunks a
     * random 64 KiB answer fetched 48 times the bytes it served.
     */
    public static final int DEFAULT_CHUNK_BYTES = 128 * 1024;
    /** A sequential reader's window ahead in a cache made by {@link #forReads}: 32 MiB, at most half the cache. */
    public static final long DEFAULT_READ_AHEAD_BYTES = 32L * 1024 * 1024;
    /** The most one ranged GET asks for (and at most half the cache): 32 MiB. */
    public static final long MAX_GET_BYTES = 32L * 1024 * 1024;
    /**
     * Objects up to this size (4 MiB, and at most half the cache) are small for a cache made by
     * {@link #forReads}: a reader checks one against its entry by the CRC-32 of all its bytes, which
     * it fetches in one GET ({@link #smallObjectBytes}).
     */
    public static final int DEFAULT_SMALL_OBJECT_BYTES = 4 * 1024 * 1024;
    /** 256 MiB of chunks. */
    public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;
    /**
     * Read-ahead of 8 chunks (32 MiB with the default chunk size), or as many as fit in half the
     * cache. Measured on S3Proxy, each ranged GET costs a fixed ~5-10 ms beyond its bytes (8 GETs of
     * 4 MiB took twice as long as one of 32 MiB), so a sequential reader is served by few large GETs.
     */
    public static final int DEFAULT_READ_AHEAD_CHUNKS = 8;
    /**
     * At most this many ranged GETs of one cache at once. Each run of chunks takes one thread for its
     * GET; without a bound, many readers missing at once made a thread each (110 seen under load), and
     * every one of them held a connection and up to a run of chunk arrays. Runs beyond it wait in the
     * queue; readers wait on their chunk's future either way.
     */
    public static final int MAX_CONCURRENT_FETCHES = 16;

    private final int chunkBytes;
    /** Objects up to this size are fetched whole for their check ({@link #smallObjectBytes}). */
    private final long smallObjectBytes;

    /** The pool this cache made for itself, closed with it; null when the caller lent one. */
    private final ThreadPoolExecutor ownPool;
    private final long maxBytes;
    private final ReadAhead readAhead;
    private final HeldChunks held;
    private final ChunkGets fetches;
    /** What the readers of this cache keep of remote indexes. */
    private final RemoteIndexes.Caches indexCaches = new RemoteIndexes.Caches();

    public ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes) {
        this(store, chunkBytes, maxBytes, (int) Math.min(DEFAULT_READ_AHEAD_CHUNKS, Math.max(0, maxBytes / 2 / chunkBytes)));
    }

    /** {@code readAheadChunks} 0 turns read-ahead off. */
    public ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks) {
        this(store, chunkBytes, maxBytes, readAheadChunks, null, chunkBytes);
    }

    ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks, Executor executor) {
        this(store, chunkBytes, maxBytes, readAheadChunks, Objects.requireNonNull(executor, "executor"), chunkBytes);
    }

    /**
     * The cache for tiered reads (the daemon's {@code /read}, {@code felix-offload read}):
     * {@link #DEFAULT_CHUNK_BYTES} chunks, a window of {@link #DEFAULT_READ_AHEAD_BYTES} ahead of a
     * sequential reader (at most half of {@code maxBytes}), objects up to
     * {@link #DEFAULT_SMALL_OBJECT_BYTES} (at most half of it) small.
     */
    public static ChunkCache forReads(ObjectFetcher store, long maxBytes) {
        int ahead = (int) Math.min(DEFAULT_READ_AHEAD_BYTES / DEFAULT_CHUNK_BYTES, Math.max(0, maxBytes / 2 / DEFAULT_CHUNK_BYTES));
        long small = Math.max(DEFAULT_CHUNK_BYTES, Math.min(DEFAULT_SMALL_OBJECT_BYTES, maxBytes / 2));
        return new ChunkCache(store, DEFAULT_CHUNK_BYTES, maxBytes, ahead, null, small);
    }

    /** @param lent the executor of the cache's GETs, or null for a pool of its own */
    private ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks, Executor lent,
            long smallObjectBytes) {
        if (readAheadChunks < 0 || (long) readAheadChunks * chunkBytes > maxBytes / 2) {
            throw new IllegalArgumentException("read-ahead of " + readAheadChunks + " chunks must fit in half the cache");
        }
        if (chunkBytes < 4096) {
            throw new IllegalArgumentException("chunk size must be at least 4096 bytes, got " + chunkBytes);
        }
        if (maxBytes < chunkBytes) {
            throw new IllegalArgumentException("the cache must hold at least one chunk");
        }
        this.chunkBytes = chunkBytes;
        this.maxBytes = maxBytes;
        this.ownPool = lent == null ? fetchPool() : null;
        Executor executor = lent == null ? ownPool : lent;
        this.readAhead = new ReadAhead(chunkBytes, readAheadChunks);
        this.held = new HeldChunks(maxBytes);
        int maxChunksPerGet = (int) Math.max(1, Math.min(MAX_GET_BYTES / chunkBytes, maxBytes / 2 / chunkBytes));
        this.fetches = new ChunkGets(store, chunkBytes, maxChunksPerGet, executor, held);
        this.smallObjectBytes = Math.max(chunkBytes, smallObjectBytes);
    }

    /**
     * Objects up to this size are small: a reader checks one against its entry by the CRC-32 of all
     * its bytes, fetched together ({@link #prefetch}); a larger one by a HEAD. At least a chunk.
     */
    public long smallObjectBytes() {
        return smallObjectBytes;
    }

    /** The budget of chunks held and on their way. */
    public long maxBytes() {
        return maxBytes;
    }

    /** What the readers of this cache keep of remote indexes, shared by all of them within one bound. */
    RemoteIndexes.Caches indexCaches() {
        return indexCaches;
    }

    /** Up to {@link #MAX_CONCURRENT_FETCHES} daemon threads, each ended after 30 s idle; more runs queue. */
    private static ThreadPoolExecutor fetchPool() {
        AtomicInteger made = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(MAX_CONCURRENT_FETCHES, MAX_CONCURRENT_FETCHES, 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "chunk-fetch-" + made.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** The most fetch threads this cache's own pool has had at once (0 when the pool was lent). */
    int largestFetchPool() {
        return ownPool == null ? 0 : ownPool.getLargestPoolSize();
    }

    /** Runs of chunks waiting for a fetch thread of this cache's own pool. */
    int queuedFetches() {
        return ownPool == null ? 0 : ownPool.getQueue().size();
    }

    /**
     * Stops this cache's own fetch threads once the GETs already asked for have ended (their readers
     * get their chunks); a run asked for after this fails its readers' chunks at once.
     */
    @Override
    public void close() {
        if (ownPool != null) {
            ownPool.shutdown();
        }
    }

    /** Bytes fetched from the store so far. */
    public long bytesFetched() {
        return fetches.bytesFetched();
    }

    /** Ranged GETs made so far. */
    public long gets() {
        return fetches.gets();
    }

    /** Bytes reserved by GETs under way now. */
    public long inFlightBytes() {
        return held.inFlightBytes();
    }

    /** The most bytes held and on their way at once so far: never above {@link #maxBytes} but for one GET alone. */
    public long peakBytes() {
        return held.peakBytes();
    }

    public int chunkBytes() {
        return chunkBytes;
    }

    /**
     * {@code length} bytes of the object from {@code position}, which the caller has checked lie
     * within its size; assembled from the chunks they span.
     */
    public byte[] read(ObjectIdentity object, long position, int length) throws StoreException {
        requireWithin(object, position, length);
        byte[] out = new byte[length];
        int done = 0;
        while (done < length) {
            long at = position + done;
            long index = at / chunkBytes;
            touched(object, index);
            byte[] chunk = fetches.get(new ChunkKey(object, index));
            int from = (int) (at - index * chunkBytes);
            int n = Math.min(chunk.length - from, length - done);
            System.arraycopy(chunk, from, out, done, n);
            done += n;
        }
        return out;
    }

    /**
     * {@code length} bytes of the object from {@code position}, as {@link #read} answers them, but as
     * a view of the cached chunk when they lie within one (the common case: a record inside a chunk),
     * so nothing is copied; a copy only when they span chunks. The view covers exactly the range. The
     * chunk is shared with every other reader of it: callers only read through the view.
     */
    public ByteBuffer view(ObjectIdentity object, long position, int length) throws StoreException {
        requireWithin(object, position, length);
        long index = position / chunkBytes;
        int from = (int) (position - index * chunkBytes);
        if (from + (long) length > chunkBytes) {
            return ByteBuffer.wrap(read(object, position, length));
        }
        return ByteBuffer.wrap(chunk(object, index), from, length).slice();
    }

    private static void requireWithin(ObjectIdentity object, long position, int length) {
        if (position < 0 || length < 0 || position + length > object.size()) {
            throw new IllegalArgumentException("range " + position + "+" + length + " outside " + object.key() + " of "
                    + object.size() + " bytes");
        }
    }

    /**
     * Chunk {@code index} of the object, noted as touched by a reader (which keeps a sequential
     * reader's window ahead), from the cache or fetched; the array is shared and must not be changed.
     */
    byte[] chunk(ObjectIdentity object, long index) throws StoreException {
        if (index < 0 || index > lastChunk(object)) {
            throw new IllegalArgumentException("chunk " + index + " outside " + object.key() + " of " + object.size()
                    + " bytes");
        }
        touched(object, index);
        return fetches.get(new ChunkKey(object, index));
    }

    /** Notes a reader touching chunk {@code index}, and keeps the window ahead of a sequential one. */
    private void touched(ObjectIdentity object, long index) {
        fetchAhead(readAhead.touched(object, index));
    }

    /**
     * Notes that a read starts at {@code position} of the object by a jump (a position found in the
     * index, not where an earlier read stopped): until {@link #continuing} or {@link #expect}, the
     * chunks it touches are fetched alone, with nothing read ahead, however they follow each other.
     */
    public void jumpedTo(ObjectIdentity object, long position) {
        readAhead.jumpedTo(object, position);
    }

    /**
     * Notes that a read of the object starts where the last one stopped: the reader is moving
     * through it in order, so stepping into the next chunk keeps a window ahead again.
     */
    public void continuing(ObjectIdentity object) {
        readAhead.continuing(object);
    }

    /**
     * For a sequential reader about to finish one object: starts the window in {@code next} (its
     * first chunks, in one GET), so the reader finds them there when it moves on.
     */
    public void continueInto(ObjectIdentity next) {
        fetchAhead(readAhead.continueInto(next));
    }

    /**
     * For a reader that has said it wants more than a chunk from {@code position} (a read with a
     * large budget): asks for the chunks from the one holding {@code position} that the budget
     * covers (at most the window ahead) in one ranged GET, instead of waiting to see the reader
     * step into a second chunk. A read that wants no more than a chunk asks for nothing ahead. A
     * read that {@link #jumpedTo} its start stays a random one: it gets the chunks its budget
     * covers, and no window beyond them.
     */
    public void expect(ObjectIdentity object, long position, long bytes) {
        fetchAhead(readAhead.expect(object, position, bytes)); // chunks already cached or in flight are skipped
    }

    /**
     * Asks for the chunks covering {@code [position, position + length)} that are neither held nor
     * on their way, in runs of adjacent chunks (one ranged GET each), without waiting and without
     * changing what the cache knows of the reader: for a caller about to read all of them (a small
     * object checked whole). Nothing when the cache's own fetch threads are closed: the reads then
     * fetch chunk by chunk.
     */
    public void prefetch(ObjectIdentity object, long position, long length) {
        if (position < 0 || length <= 0 || position + length > object.size()
                || (ownPool != null && ownPool.isShutdown())) {
            return;
        }
        fetches.ahead(object, position / chunkBytes, (position + length - 1) / chunkBytes);
    }

    /** Whether a reader has been moving through {@code object} chunk after chunk. */
    public boolean sequential(ObjectIdentity object) {
        return readAhead.sequential(object);
    }

    private long lastChunk(ObjectIdentity object) {
        return (object.size() - 1) / chunkBytes;
    }

    /** Asks for the run of chunks the window ahead wants, if any. */
    private void fetchAhead(ReadAhead.Run run) {
        if (run != null) {
            fetches.ahead(run.object(), run.from(), run.to());
        }
    }

    /** Drops the chunks covering {@code [position, position + length)}, so they are fetched again. */
    public void invalidate(ObjectIdentity object, long position, int length) {
        long first = position / chunkBytes;
        long last = (position + Math.max(length, 1) - 1) / chunkBytes;
        held.drop(object, first, last);
        readAhead.forget(object);
    }

    /** Bytes of chunks held now. */
    public long heldBytes() {
        return held.heldBytes();
    }

    /**
     * Lookups that found their chunk held (hits) or not (misses: fetched, or already on its way),
     * chunks that arrived and that failed, and chunks evicted with their bytes. No load times.
     */
    public CacheStats stats() {
        return held.stats();
    }
}
