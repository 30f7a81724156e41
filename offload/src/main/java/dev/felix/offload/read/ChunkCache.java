package dev.felix.offload.read;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

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
 * taken for a sequential one when it, or the next jump, lands in the chunk after the last.
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
 * holds after they were dropped (records served as views of them) are the caller's memory.
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

    /** One chunk of one object's bytes; the object's size bounds the last chunk. */
    record ChunkKey(ObjectIdentity object, long index) {
    }

    private final ObjectFetcher store;
    private final int chunkBytes;
    /** A chunk, or why it could not be fetched; a failure is never held, so the next read asks again. */
    private record Fetched(byte[] bytes, RuntimeException unexpected, StoreException failure) {
    }

    /**
     * How a reader has been moving through one object: the chunk it last touched, the last asked for
     * ahead, and whether its current read began with a jump (found its start through the index).
     */
    private static final class Stream {
        long last;
        long ahead;
        boolean jumped;

        Stream(long last, long ahead) {
            this.last = last;
            this.ahead = ahead;
        }
    }

    /**
     * Read-ahead of 8 chunks (32 MiB with the default chunk size), or as many as fit in half the
     * cache. Measured on S3Proxy, each ranged GET costs a fixed ~5-10 ms beyond its bytes (8 GETs of
     * 4 MiB took twice as long as one of 32 MiB), so a sequential reader is served by few large GETs.
     */
    public static final int DEFAULT_READ_AHEAD_CHUNKS = 8;
    /** At most this many chunks in one ranged GET: {@link #MAX_GET_BYTES}, and at most half the cache. */
    private final int maxChunksPerGet;
    /** Objects up to this size are fetched whole for their check ({@link #smallObjectBytes}). */
    private final long smallObjectBytes;

    /**
     * At most this many ranged GETs of one cache at once. Each run of chunks takes one thread for its
     * GET; without a bound, many readers missing at once made a thread each (110 seen under load), and
     * every one of them held a connection and up to a run of chunk arrays. Runs beyond it wait in the
     * queue; readers wait on their chunk's future either way.
     */
    public static final int MAX_CONCURRENT_FETCHES = 16;

    private final int readAheadChunks;
    private final Executor executor;
    /** The pool this cache made for itself, closed with it; null when the caller lent one. */
    private final java.util.concurrent.ExecutorService ownPool;
    private final com.github.benmanes.caffeine.cache.Cache<ObjectIdentity, Stream> streams =
            Caffeine.newBuilder().maximumSize(256).build();
    private final long maxBytes;
    /** Chunks held, oldest use first; with {@link #heldBytes} and {@link #loading}, guarded by {@link #lock}. */
    private final LinkedHashMap<ChunkKey, byte[]> held = new LinkedHashMap<>(64, 0.75f, true);
    private long heldBytes;
    /** Bytes of chunks reserved by GETs under way and not yet arrived; with {@link #heldBytes} at most {@link #maxBytes}. */
    private long inFlightBytes;
    /** The most bytes held and on their way at once. */
    private long peakBytes;
    /** Chunks on their way from the store: one GET each, shared by every reader that wants them meanwhile. */
    private final Map<ChunkKey, CompletableFuture<Fetched>> loading = new HashMap<>();
    private final Object lock = new Object();
    private final java.util.concurrent.atomic.LongAdder hits = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder misses = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder loaded = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder loadFailures = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder evictions = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder evictedBytes = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder bytesFetched = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder gets = new java.util.concurrent.atomic.LongAdder();

    public ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes) {
        this(store, chunkBytes, maxBytes, (int) Math.min(DEFAULT_READ_AHEAD_CHUNKS, Math.max(0, maxBytes / 2 / chunkBytes)));
    }

    /** {@code readAheadChunks} 0 turns read-ahead off. */
    public ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks) {
        this(store, chunkBytes, maxBytes, readAheadChunks, fetchPool(), true, chunkBytes);
    }

    ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks, Executor executor) {
        this(store, chunkBytes, maxBytes, readAheadChunks, executor, false, chunkBytes);
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
        return new ChunkCache(store, DEFAULT_CHUNK_BYTES, maxBytes, ahead, fetchPool(), true, small);
    }

    private ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, int readAheadChunks, Executor executor,
            boolean owned, long smallObjectBytes) {
        if (readAheadChunks < 0 || (long) readAheadChunks * chunkBytes > maxBytes / 2) {
            throw new IllegalArgumentException("read-ahead of " + readAheadChunks + " chunks must fit in half the cache");
        }
        this.readAheadChunks = readAheadChunks;
        if (chunkBytes < 4096) {
            throw new IllegalArgumentException("chunk size must be at least 4096 bytes, got " + chunkBytes);
        }
        if (maxBytes < chunkBytes) {
            throw new IllegalArgumentException("the cache must hold at least one chunk");
        }
        this.store = store;
        this.chunkBytes = chunkBytes;
        this.maxBytes = maxBytes;
        this.executor = executor;
        this.ownPool = owned ? (java.util.concurrent.ExecutorService) executor : null;
        this.maxChunksPerGet = (int) Math.max(1, Math.min(MAX_GET_BYTES / chunkBytes, maxBytes / 2 / chunkBytes));
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
    private final RemoteIndexes.Caches indexCaches = new RemoteIndexes.Caches();

    RemoteIndexes.Caches indexCaches() {
        return indexCaches;
    }

    /** Up to {@link #MAX_CONCURRENT_FETCHES} daemon threads, each ended after 30 s idle; more runs queue. */
    private static java.util.concurrent.ThreadPoolExecutor fetchPool() {
        java.util.concurrent.atomic.AtomicInteger made = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(
                MAX_CONCURRENT_FETCHES, MAX_CONCURRENT_FETCHES, 30, java.util.concurrent.TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "chunk-fetch-" + made.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** The most fetch threads this cache's own pool has had at once (0 when the pool was lent). */
    int largestFetchPool() {
        return ownPool instanceof java.util.concurrent.ThreadPoolExecutor p ? p.getLargestPoolSize() : 0;
    }

    /** Runs of chunks waiting for a fetch thread of this cache's own pool. */
    int queuedFetches() {
        return ownPool instanceof java.util.concurrent.ThreadPoolExecutor p ? p.getQueue().size() : 0;
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

    /** The bytes of chunk {@code k}: a whole chunk, or the object's tail. */
    private int lengthOf(ChunkKey k) {
        return (int) Math.min(chunkBytes, k.object().size() - k.index() * chunkBytes);
    }

    /**
     * Reserves {@code bytes} for chunks about to be fetched: drops the least recently used chunks held
     * until they fit in the budget with those already on their way, and waits while GETs under way
     * alone leave no room (each frees its chunks' reservation as they arrive).
     */
    private void reserve(long bytes) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                Iterator<Map.Entry<ChunkKey, byte[]>> oldest = held.entrySet().iterator();
                while (heldBytes + inFlightBytes + bytes > maxBytes && oldest.hasNext()) {
                    Map.Entry<ChunkKey, byte[]> e = oldest.next();
                    heldBytes -= e.getValue().length;
                    evictions.increment();
                    evictedBytes.add(e.getValue().length);
                    oldest.remove();
                }
                if (heldBytes + inFlightBytes + bytes <= maxBytes || inFlightBytes == 0) {
                    break; // a GET larger than the budget (none is) goes alone
                }
                lock.wait();
            }
            inFlightBytes += bytes;
            peakBytes = Math.max(peakBytes, heldBytes + inFlightBytes);
        }
    }

    private byte[] fetch(ChunkKey k) throws StoreException {
        long start = k.index() * chunkBytes;
        int length = lengthOf(k);
        gets.increment();
        byte[] bytes = store.readRange(k.object().key(), ByteRange.of(start, length));
        bytesFetched.add(bytes.length);
        return bytes;
    }

    /** Bytes fetched from the store so far. */
    public long bytesFetched() {
        return bytesFetched.sum();
    }

    /** Ranged GETs made so far. */
    public long gets() {
        return gets.sum();
    }

    /** Bytes reserved by GETs under way now. */
    public long inFlightBytes() {
        synchronized (lock) {
            return inFlightBytes;
        }
    }

    /** The most bytes held and on their way at once so far: never above {@link #maxBytes} but for one GET alone. */
    public long peakBytes() {
        synchronized (lock) {
            return peakBytes;
        }
    }

    public int chunkBytes() {
        return chunkBytes;
    }

    /**
     * {@code length} bytes of the object from {@code position}, which the caller has checked lie
     * within its size; assembled from the chunks they span.
     */
    public byte[] read(ObjectIdentity object, long position, int length) throws StoreException {
        if (position < 0 || length < 0 || position + length > object.size()) {
            throw new IllegalArgumentException("range " + position + "+" + length + " outside " + object.key() + " of "
                    + object.size() + " bytes");
        }
        byte[] out = new byte[length];
        int done = 0;
        while (done < length) {
            long at = position + done;
            long index = at / chunkBytes;
            touched(object, index);
            byte[] chunk = get(new ChunkKey(object, index));
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
        if (position < 0 || length < 0 || position + length > object.size()) {
            throw new IllegalArgumentException("range " + position + "+" + length + " outside " + object.key() + " of "
                    + object.size() + " bytes");
        }
        long index = position / chunkBytes;
        int from = (int) (position - index * chunkBytes);
        if (from + (long) length > chunkBytes) {
            return ByteBuffer.wrap(read(object, position, length));
        }
        return ByteBuffer.wrap(chunk(object, index), from, length).slice();
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
        return get(new ChunkKey(object, index));
    }

    private byte[] get(ChunkKey k) throws StoreException {
        CompletableFuture<Fetched> pending;
        boolean mine = false;
        synchronized (lock) {
            byte[] bytes = held.get(k);
            if (bytes != null) {
                hits.increment();
                return bytes;
            }
            misses.increment();
            pending = loading.get(k);
            if (pending == null) {
                pending = new CompletableFuture<>();
                loading.put(k, pending);
                mine = true;
            }
        }
        if (mine) {
            int length = lengthOf(k);
            try {
                reserve(length);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                arrived(k, pending, new Fetched(null, new IllegalStateException("interrupted while waiting to fetch "
                        + k.object().key(), e), null), 0);
                throw new IllegalStateException("interrupted while waiting to fetch " + k.object().key(), e);
            }
            Fetched f;
            try {
                f = new Fetched(fetch(k), null, null);
            } catch (StoreException e) {
                f = new Fetched(null, null, e);
            } catch (RuntimeException e) {
                f = new Fetched(null, e, null);
            }
            arrived(k, pending, f, length);
        }
        Fetched f;
        try {
            f = pending.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while fetching " + k.object().key(), e);
        } catch (ExecutionException | CompletionException e) {
            throw new IllegalStateException("fetching " + k.object().key() + " failed", e.getCause());
        }
        if (f.bytes() == null) {
            if (f.failure() != null) {
                throw f.failure();
            }
            throw f.unexpected();
        }
        return f.bytes();
    }

    /**
     * A chunk's GET has ended: frees its reservation of {@code reserved} bytes, holds its bytes
     * (evicting the least recently used beyond the budget), then wakes its readers.
     */
    private void arrived(ChunkKey k, CompletableFuture<Fetched> pending, Fetched f, long reserved) {
        synchronized (lock) {
            if (loading.get(k) == pending) {
                loading.remove(k);
            }
            inFlightBytes -= reserved;
            if (reserved > 0) {
                lock.notifyAll(); // room for a GET waiting to start
            }
            if (f.bytes() != null) {
                loaded.increment();
                byte[] previous = held.put(k, f.bytes());
                heldBytes += f.bytes().length - (previous == null ? 0 : previous.length);
                Iterator<Map.Entry<ChunkKey, byte[]>> oldest = held.entrySet().iterator();
                while (heldBytes + inFlightBytes > maxBytes && oldest.hasNext()) {
                    Map.Entry<ChunkKey, byte[]> e = oldest.next();
                    if (e.getKey().equals(k)) {
                        continue; // the chunk just asked for stays, even in a budget of one chunk
                    }
                    heldBytes -= e.getValue().length;
                    evictions.increment();
                    evictedBytes.add(e.getValue().length);
                    oldest.remove();
                }
                peakBytes = Math.max(peakBytes, heldBytes + inFlightBytes);
            } else {
                loadFailures.increment();
            }
        }
        pending.complete(f);
    }

    /** Notes a reader touching chunk {@code index}, and keeps the window ahead of a sequential one. */
    private void touched(ObjectIdentity object, long index) {
        if (readAheadChunks == 0) {
            return;
        }
        long from;
        long to;
        Stream s = streams.get(object, o -> new Stream(index, index));
        synchronized (s) {
            if (index == s.last) {
                return;
            }
            if (s.jumped) {
                // A read that jumped here steps on to the next chunk when its record crosses into it,
                // and a random reader's next jump may land in the chunk after its last one: neither
                // says the reader is sequential. It proves that by continuing where it stopped.
                s.last = index;
                s.ahead = index;
                return;
            }
            if (index != s.last + 1) {
                s.last = index; // a jump: a random reader, or one starting over
                s.ahead = index;
                return;
            }
            s.last = index;
            if (s.ahead - index > readAheadChunks / 2) {
                return; // enough already asked for
            }
            from = Math.max(s.ahead, index) + 1;
            to = Math.min(index + readAheadChunks, lastChunk(object));
            s.ahead = Math.max(s.ahead, to);
        }
        fetchAhead(object, from, to);
    }

    /**
     * Notes that a read starts at {@code position} of the object by a jump (a position found in the
     * index, not where an earlier read stopped): until {@link #continuing} or {@link #expect}, the
     * chunks it touches are fetched alone, with nothing read ahead, however they follow each other.
     */
    public void jumpedTo(ObjectIdentity object, long position) {
        if (readAheadChunks == 0 || position < 0 || position >= object.size()) {
            return;
        }
        long index = position / chunkBytes;
        Stream s = streams.get(object, o -> new Stream(index, index));
        synchronized (s) {
            s.last = index;
            s.ahead = index; // chunks still in flight from an earlier window stay cached
            s.jumped = true;
        }
    }

    /**
     * Notes that a read of the object starts where the last one stopped: the reader is moving
     * through it in order, so stepping into the next chunk keeps a window ahead again.
     */
    public void continuing(ObjectIdentity object) {
        Stream s = streams.getIfPresent(object);
        if (s == null) {
            return;
        }
        synchronized (s) {
            s.jumped = false;
        }
    }

    /**
     * For a sequential reader about to finish one object: starts the window in {@code next} (its
     * first chunks, in one GET), so the reader finds them there when it moves on.
     */
    public void continueInto(ObjectIdentity next) {
        if (readAheadChunks == 0 || next.size() == 0) {
            return;
        }
        Stream s = streams.get(next, o -> new Stream(-1, -1));
        long to;
        synchronized (s) {
            if (s.last != -1 || s.ahead >= 0) {
                return; // already under way
            }
            to = Math.min(readAheadChunks - 1, lastChunk(next));
            s.ahead = to;
        }
        fetchAhead(next, 0, to);
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
        if (readAheadChunks == 0 || bytes <= chunkBytes || position < 0 || position >= object.size()) {
            return;
        }
        long index = position / chunkBytes;
        long wanted = (position - index * chunkBytes + bytes + chunkBytes - 1) / chunkBytes;
        long to = Math.min(index + Math.min(readAheadChunks, wanted) - 1, lastChunk(object));
        Stream s = streams.get(object, o -> new Stream(index, index - 1));
        synchronized (s) {
            s.last = index;
            s.ahead = s.ahead >= index ? Math.max(s.ahead, to) : to;
        }
        fetchAhead(object, index, to); // chunks already cached or in flight are skipped
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
        fetchAhead(object, position / chunkBytes, (position + length - 1) / chunkBytes);
    }

    /** Whether a reader has been moving through {@code object} chunk after chunk. */
    public boolean sequential(ObjectIdentity object) {
        Stream s = streams.getIfPresent(object);
        if (s == null) {
            return false;
        }
        synchronized (s) {
            return !s.jumped && s.ahead > s.last;
        }
    }

    private long lastChunk(ObjectIdentity object) {
        return (object.size() - 1) / chunkBytes;
    }

    /**
     * Asks for chunks {@code from..to} of the object ahead of the reader, without waiting: those not
     * already cached or in flight are fetched in runs of adjacent chunks, one ranged GET of at most
     * {@link #maxChunksPerGet} chunks each. Every chunk is its own entry, complete as soon as its
     * bytes have arrived, so the reader works through the first chunks of a run while the rest are
     * still on the wire.
     */
    private void fetchAhead(ObjectIdentity object, long from, long to) {
        java.util.List<ChunkKey> run = new java.util.ArrayList<>();
        java.util.List<CompletableFuture<Fetched>> pending = new java.util.ArrayList<>();
        for (long i = from; i <= to; i++) {
            ChunkKey k = new ChunkKey(object, i);
            CompletableFuture<Fetched> mine = new CompletableFuture<>();
            boolean known;
            synchronized (lock) {
                // containsKey leaves a held chunk's place in the eviction order alone: it is not a use
                known = held.containsKey(k) || loading.putIfAbsent(k, mine) != null;
            }
            if (known) {
                startRun(run, pending); // held or in flight already: a run ends here
                continue;
            }
            run.add(k);
            pending.add(mine);
            if (run.size() == maxChunksPerGet) {
                startRun(run, pending);
            }
        }
        startRun(run, pending);
    }

    /** One ranged GET for the adjacent chunks of {@code run}, completing each one's entry as it arrives. */
    private void startRun(java.util.List<ChunkKey> run, java.util.List<CompletableFuture<Fetched>> pending) {
        if (run.isEmpty()) {
            return;
        }
        java.util.List<ChunkKey> keys = java.util.List.copyOf(run);
        java.util.List<CompletableFuture<Fetched>> futures = java.util.List.copyOf(pending);
        run.clear();
        pending.clear();
        Runnable fetch = () -> {
            ObjectIdentity object = keys.get(0).object();
            long start = keys.get(0).index() * chunkBytes;
            long end = Math.min((keys.get(keys.size() - 1).index() + 1) * chunkBytes, object.size());
            try {
                reserve(end - start); // before the arrays exist: bytes on their way count in the budget
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failRest(keys, futures, new Fetched(null, new IllegalStateException("interrupted while waiting to "
                        + "fetch " + object.key(), e), null), false);
                return;
            }
            java.util.List<byte[]> arrays = new java.util.ArrayList<>(keys.size());
            for (ChunkKey k : keys) {
                long at = k.index() * chunkBytes;
                arrays.add(new byte[(int) (Math.min(at + chunkBytes, end) - at)]);
            }
            try {
                gets.increment();
                // Each chunk's own array, filled straight from the one response: no array of the run to cut up.
                store.readRangeInto(object.key(), ByteRange.of(start, (int) (end - start)), arrays, n -> {
                    bytesFetched.add(arrays.get(n).length);
                    arrived(keys.get(n), futures.get(n), new Fetched(arrays.get(n), null, null), arrays.get(n).length);
                });
            } catch (StoreException e) {
                failRest(keys, futures, new Fetched(null, null, e), true);
            } catch (RuntimeException e) {
                failRest(keys, futures, new Fetched(null, e, null), true);
            }
        };
        try {
            executor.execute(fetch);
        } catch (RuntimeException refused) {
            failRest(keys, futures, new Fetched(null, refused, null), false);
        }
    }

    /**
     * Ends, with {@code failure}, the chunks of a run whose bytes had not arrived when it failed,
     * freeing their reservation when the run had made one.
     */
    private void failRest(java.util.List<ChunkKey> keys, java.util.List<CompletableFuture<Fetched>> futures, Fetched failure,
            boolean reserved) {
        for (int n = 0; n < keys.size(); n++) {
            if (!futures.get(n).isDone()) {
                arrived(keys.get(n), futures.get(n), failure, reserved ? lengthOf(keys.get(n)) : 0);
            }
        }
    }

    /** Drops the chunks covering {@code [position, position + length)}, so they are fetched again. */
    public void invalidate(ObjectIdentity object, long position, int length) {
        long first = position / chunkBytes;
        long last = (position + Math.max(length, 1) - 1) / chunkBytes;
        synchronized (lock) {
            for (long i = first; i <= last; i++) {
                byte[] dropped = held.remove(new ChunkKey(object, i));
                if (dropped != null) {
                    heldBytes -= dropped.length;
                }
            }
        }
        streams.invalidate(object);
    }

    /** Bytes of chunks held now. */
    public long heldBytes() {
        synchronized (lock) {
            return heldBytes;
        }
    }

    /**
     * Lookups that found their chunk held (hits) or not (misses: fetched, or already on its way),
     * chunks that arrived and that failed, and chunks evicted with their bytes. No load times.
     */
    public CacheStats stats() {
        return CacheStats.of(hits.sum(), misses.sum(), loaded.sum(), loadFailures.sum(), 0, evictions.sum(),
                evictedBytes.sum());
    }
}
