package dev.felix.offload.read;

import dev.felix.offload.read.HeldChunks.ChunkKey;
import dev.felix.offload.read.HeldChunks.Fetched;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;

/**
 * The ranged GETs that bring a cache's chunks from the store into its {@link HeldChunks}: the chunk a
 * reader waits for, fetched on the reader's thread, or runs of adjacent chunks asked for ahead, one
 * GET each on the cache's executor. Every GET reserves its bytes in the budget before it allocates
 * them, and every chunk is its own entry, complete as soon as its bytes have arrived. Safe for many
 * threads.
 */
final class ChunkGets {

    private final ObjectFetcher store;
    private final int chunkBytes;
    /** At most this many chunks in one ranged GET. */
    private final int maxChunksPerGet;
    private final Executor executor;
    private final HeldChunks held;
    private final LongAdder bytesFetched = new LongAdder();
    private final LongAdder gets = new LongAdder();

    ChunkGets(ObjectFetcher store, int chunkBytes, int maxChunksPerGet, Executor executor, HeldChunks held) {
        this.store = store;
        this.chunkBytes = chunkBytes;
        this.maxChunksPerGet = maxChunksPerGet;
        this.executor = executor;
        this.held = held;
    }

    /** Bytes fetched from the store so far. */
    long bytesFetched() {
        return bytesFetched.sum();
    }

    /** Ranged GETs made so far. */
    long gets() {
        return gets.sum();
    }

    /**
     * The chunk's bytes, held or fetched: a miss waits for the GET already on its way, or makes one of
     * its own chunk alone; the array is shared and must not be changed.
     */
    byte[] get(ChunkKey k) throws StoreException {
        HeldChunks.Lookup found = held.lookup(k);
        if (found.bytes() != null) {
            return found.bytes();
        }
        CompletableFuture<Fetched> pending = found.pending();
        if (found.mine()) {
            int length = lengthOf(k);
            try {
                held.reserve(length);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                held.arrived(k, pending, new Fetched(null, new IllegalStateException("interrupted while waiting to "
                        + "fetch " + k.object().key(), e), null), 0);
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
            held.arrived(k, pending, f, length);
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
     * Asks for chunks {@code from..to} of the object ahead of the reader, without waiting: those not
     * already cached or in flight are fetched in runs of adjacent chunks, one ranged GET of at most
     * {@code maxChunksPerGet} chunks each. Every chunk is its own entry, complete as soon as its
     * bytes have arrived, so the reader works through the first chunks of a run while the rest are
     * still on the wire.
     */
    void ahead(ObjectIdentity object, long from, long to) {
        List<ChunkKey> run = new ArrayList<>();
        List<CompletableFuture<Fetched>> pending = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            ChunkKey k = new ChunkKey(object, i);
            CompletableFuture<Fetched> mine = new CompletableFuture<>();
            if (!held.claim(k, mine)) {
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
    private void startRun(List<ChunkKey> run, List<CompletableFuture<Fetched>> pending) {
        if (run.isEmpty()) {
            return;
        }
        List<ChunkKey> keys = List.copyOf(run);
        List<CompletableFuture<Fetched>> futures = List.copyOf(pending);
        run.clear();
        pending.clear();
        Runnable fetch = () -> {
            ObjectIdentity object = keys.get(0).object();
            long start = keys.get(0).index() * chunkBytes;
            long end = Math.min((keys.get(keys.size() - 1).index() + 1) * chunkBytes, object.size());
            try {
                held.reserve(end - start); // before the arrays exist: bytes on their way count in the budget
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failRest(keys, futures, new Fetched(null, new IllegalStateException("interrupted while waiting to "
                        + "fetch " + object.key(), e), null), false);
                return;
            }
            List<byte[]> arrays = new ArrayList<>(keys.size());
            for (ChunkKey k : keys) {
                long at = k.index() * chunkBytes;
                arrays.add(new byte[(int) (Math.min(at + chunkBytes, end) - at)]);
            }
            try {
                gets.increment();
                // Each chunk's own array, filled straight from the one response: no array of the run to cut up.
                store.readRangeInto(object.key(), ByteRange.of(start, (int) (end - start)), arrays, n -> {
                    bytesFetched.add(arrays.get(n).length);
                    held.arrived(keys.get(n), futures.get(n), new Fetched(arrays.get(n), null, null),
                            arrays.get(n).length);
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
    private void failRest(List<ChunkKey> keys, List<CompletableFuture<Fetched>> futures, Fetched failure,
            boolean reserved) {
        for (int n = 0; n < keys.size(); n++) {
            if (!futures.get(n).isDone()) {
                held.arrived(keys.get(n), futures.get(n), failure, reserved ? lengthOf(keys.get(n)) : 0);
            }
        }
    }

    /** The bytes of chunk {@code k}: a whole chunk, or the object's tail. */
    private int lengthOf(ChunkKey k) {
        return (int) Math.min(chunkBytes, k.object().size() - k.index() * chunkBytes);
    }

    private byte[] fetch(ChunkKey k) throws StoreException {
        long start = k.index() * chunkBytes;
        int length = lengthOf(k);
        gets.increment();
        byte[] bytes = store.readRange(k.object().key(), ByteRange.of(start, length));
        bytesFetched.add(bytes.length);
        return bytes;
    }
}
