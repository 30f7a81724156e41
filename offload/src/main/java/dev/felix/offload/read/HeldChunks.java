package dev.felix.offload.read;

import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.felix.offload.store.StoreException;

import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

/**
 * The chunks a cache holds and those on their way from the store, within one byte budget: a GET
 * reserves the bytes of its chunks before it allocates them, dropping the least recently used chunks
 * held to make room, and waits while GETs already under way fill the budget. A chunk on its way is
 * one entry every reader of it waits on, so concurrent requests for a chunk share one GET. Eviction
 * is least recently used, by bytes. Safe for many threads: one lock guards it all.
 */
final class HeldChunks {

    /** One chunk of one object's bytes; the object's size bounds the last chunk. */
    record ChunkKey(ObjectIdentity object, long index) {
    }

    /** A chunk, or why it could not be fetched; a failure is never held, so the next read asks again. */
    record Fetched(byte[] bytes, RuntimeException unexpected, StoreException failure) {
    }

    /**
     * What a lookup found: the chunk's bytes when held, else the entry of its GET, which the caller
     * must make when {@code mine} (it was on its way to nobody before).
     */
    record Lookup(byte[] bytes, CompletableFuture<Fetched> pending, boolean mine) {
    }

    private final long maxBytes;
    private final Object lock = new Object();
    /** Chunks held, oldest use first; with {@link #heldBytes} and {@link #loading}, guarded by {@link #lock}. */
    private final LinkedHashMap<ChunkKey, byte[]> held = new LinkedHashMap<>(64, 0.75f, true);
    private long heldBytes;
    /** Bytes of chunks reserved by GETs under way and not yet arrived; with {@link #heldBytes} at most {@link #maxBytes}. */
    private long inFlightBytes;
    /** The most bytes held and on their way at once. */
    private long peakBytes;
    /** Chunks on their way from the store: one GET each, shared by every reader that wants them meanwhile. */
    private final Map<ChunkKey, CompletableFuture<Fetched>> loading = new HashMap<>();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder loaded = new LongAdder();
    private final LongAdder loadFailures = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder evictedBytes = new LongAdder();

    HeldChunks(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** The chunk when held (a hit, and now its latest use), else its GET's entry, made here when there was none. */
    Lookup lookup(ChunkKey k) {
        synchronized (lock) {
            byte[] bytes = held.get(k);
            if (bytes != null) {
                hits.increment();
                return new Lookup(bytes, null, false);
            }
            misses.increment();
            CompletableFuture<Fetched> pending = loading.get(k);
            if (pending != null) {
                return new Lookup(null, pending, false);
            }
            pending = new CompletableFuture<>();
            loading.put(k, pending);
            return new Lookup(null, pending, true);
        }
    }

    /**
     * Makes {@code entry} the chunk's GET entry unless the chunk is held or on its way already (then
     * false). Not a use of a held chunk: its place in the eviction order stays.
     */
    boolean claim(ChunkKey k, CompletableFuture<Fetched> entry) {
        synchronized (lock) {
            return !held.containsKey(k) && loading.putIfAbsent(k, entry) == null;
        }
    }

    /**
     * Reserves {@code bytes} for chunks about to be fetched: drops the least recently used chunks held
     * until they fit in the budget with those already on their way, and waits while GETs under way
     * alone leave no room (each frees its chunks' reservation as they arrive).
     */
    void reserve(long bytes) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                evictBeyond(bytes, null);
                if (heldBytes + inFlightBytes + bytes <= maxBytes || inFlightBytes == 0) {
                    break; // a GET larger than the budget (none is) goes alone
                }
                lock.wait();
            }
            inFlightBytes += bytes;
            peakBytes = Math.max(peakBytes, heldBytes + inFlightBytes);
        }
    }

    /**
     * A chunk's GET has ended: frees its reservation of {@code reserved} bytes, holds its bytes
     * (evicting the least recently used beyond the budget), then wakes its readers.
     */
    void arrived(ChunkKey k, CompletableFuture<Fetched> pending, Fetched f, long reserved) {
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
                evictBeyond(0, k); // the chunk just asked for stays, even in a budget of one chunk
                peakBytes = Math.max(peakBytes, heldBytes + inFlightBytes);
            } else {
                loadFailures.increment();
            }
        }
        pending.complete(f);
    }

    /**
     * Drops the least recently used chunks held, but {@code keep}, until {@code extra} more bytes fit in
     * the budget with those held and on their way, or none is left to drop. Under {@link #lock}.
     */
    private void evictBeyond(long extra, ChunkKey keep) {
        Iterator<Map.Entry<ChunkKey, byte[]>> oldest = held.entrySet().iterator();
        while (heldBytes + inFlightBytes + extra > maxBytes && oldest.hasNext()) {
            Map.Entry<ChunkKey, byte[]> e = oldest.next();
            if (e.getKey().equals(keep)) {
                continue;
            }
            heldBytes -= e.getValue().length;
            evictions.increment();
            evictedBytes.add(e.getValue().length);
            oldest.remove();
        }
    }

    /** Drops chunks {@code first..last} of the object, so they are fetched again. */
    void drop(ObjectIdentity object, long first, long last) {
        synchronized (lock) {
            for (long i = first; i <= last; i++) {
                byte[] dropped = held.remove(new ChunkKey(object, i));
                if (dropped != null) {
                    heldBytes -= dropped.length;
                }
            }
        }
    }

    long heldBytes() {
        synchronized (lock) {
            return heldBytes;
        }
    }

    long inFlightBytes() {
        synchronized (lock) {
            return inFlightBytes;
        }
    }

    long peakBytes() {
        synchronized (lock) {
            return peakBytes;
        }
    }

    /** Hits and misses, chunks that arrived and that failed, and chunks evicted with their bytes. No load times. */
    CacheStats stats() {
        return CacheStats.of(hits.sum(), misses.sum(), loaded.sum(), loadFailures.sum(), 0, evictions.sum(),
                evictedBytes.sum());
    }
}
