package dev.felix.offload.tier;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.CacheLoader;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Aligned chunks of objects, fetched with ranged GETs and kept in memory up to a byte budget. Chunk
 * {@code i} of an object covers bytes {@code [i * chunkSize, min((i + 1) * chunkSize, size))}.
 * Concurrent requests for one chunk share one GET; {@link #prefetch} starts a GET without waiting,
 * for a sequential reader's next chunk. Hits and misses are counted.
 *
 * <p>Chunks are keyed by the object's {@link ObjectIdentity} (key, size and CRC32), not its key:
 * bytes cached for one history of a shard are never served for another offloaded under the same
 * keys.
 */
public final class ChunkCache {

    /** 4 MiB chunks. */
    public static final int DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
    /** 256 MiB of chunks. */
    public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;

    /** One chunk of one object's bytes; the object's size bounds the last chunk. */
    record ChunkKey(ObjectIdentity object, long index) {
    }

    private final ObjectFetcher store;
    private final int chunkBytes;
    /**
     * A chunk, or why it could not be fetched. A failed load is a value rather than an exceptionally
     * completed future because Caffeine logs every failed asynchronous load with its stack trace,
     * which would reach the operator's terminal; a failure is dropped from the cache when it is seen.
     */
    private record Fetched(byte[] bytes, RuntimeException unexpected, StoreException failure) {
    }

    private final AsyncLoadingCache<ChunkKey, Fetched> cache;
    private final java.util.concurrent.atomic.LongAdder bytesFetched = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder gets = new java.util.concurrent.atomic.LongAdder();

    public ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes) {
        this(store, chunkBytes, maxBytes, Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "chunk-fetch");
            t.setDaemon(true);
            return t;
        }));
    }

    ChunkCache(ObjectFetcher store, int chunkBytes, long maxBytes, Executor executor) {
        if (chunkBytes < 4096) {
            throw new IllegalArgumentException("chunk size must be at least 4096 bytes, got " + chunkBytes);
        }
        if (maxBytes < chunkBytes) {
            throw new IllegalArgumentException("the cache must hold at least one chunk");
        }
        this.store = store;
        this.chunkBytes = chunkBytes;
        CacheLoader<ChunkKey, Fetched> loader = k -> {
            try {
                return new Fetched(fetch(k), null, null);
            } catch (StoreException e) {
                return new Fetched(null, null, e);
            } catch (RuntimeException e) {
                return new Fetched(null, e, null);
            }
        };
        this.cache = Caffeine.newBuilder()
                .maximumWeight(maxBytes)
                .weigher((ChunkKey k, Fetched v) -> v.bytes() == null ? 0 : v.bytes().length)
                .recordStats()
                .executor(executor)
                .buildAsync(loader);
    }

    private byte[] fetch(ChunkKey k) throws StoreException {
        long start = k.index() * chunkBytes;
        int length = (int) Math.min(chunkBytes, k.object().size() - start);
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
            byte[] chunk = get(new ChunkKey(object, index));
            int from = (int) (at - index * chunkBytes);
            int n = Math.min(chunk.length - from, length - done);
            System.arraycopy(chunk, from, out, done, n);
            done += n;
        }
        return out;
    }

    private byte[] get(ChunkKey k) throws StoreException {
        try {
            Fetched f = cache.get(k).get();
            if (f.bytes() == null) {
                cache.synchronous().invalidate(k); // the next read asks the store again
                if (f.failure() != null) {
                    throw f.failure();
                }
                throw f.unexpected();
            }
            return f.bytes();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while fetching " + k.object().key(), e);
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause();
            while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
                cause = cause.getCause();
            }
            if (cause instanceof StoreException se) {
                throw se;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("fetching " + k.object().key() + " failed", cause);
        }
    }

    /** Starts fetching the chunk holding {@code position}, if it is in the object and not cached. */
    public void prefetch(ObjectIdentity object, long position) {
        if (position >= 0 && position < object.size()) {
            cache.get(new ChunkKey(object, position / chunkBytes));
        }
    }

    /** Drops the chunks covering {@code [position, position + length)}, so they are fetched again. */
    public void invalidate(ObjectIdentity object, long position, int length) {
        long first = position / chunkBytes;
        long last = (position + Math.max(length, 1) - 1) / chunkBytes;
        for (long i = first; i <= last; i++) {
            cache.synchronous().invalidate(new ChunkKey(object, i));
        }
    }

    public CacheStats stats() {
        return cache.synchronous().stats();
    }
}
