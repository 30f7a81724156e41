package dev.felix.offload.read;

import dev.felix.offload.read.HeldChunks.ChunkKey;
import dev.felix.offload.read.HeldChunks.Fetched;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class HeldChunksTest {

    private static final ObjectIdentity OBJECT = new ObjectIdentity("a", 1 << 20, 1);

    private static ChunkKey chunk(long i) {
        return new ChunkKey(OBJECT, i);
    }

    /** Fetches chunk {@code i} of {@code bytes} bytes as a reader that misses does. */
    private static void load(HeldChunks held, long i, int bytes) throws InterruptedException {
        HeldChunks.Lookup l = held.lookup(chunk(i));
        assertThat(l.mine()).isTrue();
        held.reserve(bytes);
        held.arrived(chunk(i), l.pending(), new Fetched(new byte[bytes], null, null), bytes);
    }

    @Test
    void aLookupFindsAHeldChunkAndSharesOneEntryForAChunkOnItsWay() throws InterruptedException {
        HeldChunks held = new HeldChunks(10_000);
        HeldChunks.Lookup first = held.lookup(chunk(0));
        HeldChunks.Lookup second = held.lookup(chunk(0));
        assertThat(first.mine()).isTrue();
        assertThat(second.mine()).isFalse();
        assertThat(second.pending()).isSameAs(first.pending());
        held.reserve(100);
        held.arrived(chunk(0), first.pending(), new Fetched(new byte[100], null, null), 100);
        assertThat(first.pending()).isCompleted();
        assertThat(held.lookup(chunk(0)).bytes()).hasSize(100);
        assertThat(held.stats().hitCount()).isEqualTo(1);
        assertThat(held.stats().missCount()).isEqualTo(2);
        assertThat(held.heldBytes()).isEqualTo(100);
        assertThat(held.inFlightBytes()).isZero();
    }

    @Test
    void theLeastRecentlyUsedChunkGoesFirstToMakeRoom() throws InterruptedException {
        HeldChunks held = new HeldChunks(300);
        load(held, 0, 100);
        load(held, 1, 100);
        load(held, 2, 100);
        held.lookup(chunk(0)); // a use: chunk 1 is now the oldest
        load(held, 3, 100);
        assertThat(held.lookup(chunk(1)).bytes()).as("evicted").isNull();
        assertThat(held.lookup(chunk(0)).bytes()).isNotNull();
        assertThat(held.stats().evictionCount()).isEqualTo(1);
        assertThat(held.stats().evictionWeight()).isEqualTo(100);
        assertThat(held.peakBytes()).isLessThanOrEqualTo(300);
    }

    @Test
    void aClaimIsNotAUseAndFailsForAChunkHeldOrOnItsWay() throws InterruptedException {
        HeldChunks held = new HeldChunks(200);
        load(held, 0, 100);
        load(held, 1, 100);
        assertThat(held.claim(chunk(0), new CompletableFuture<>())).isFalse();
        CompletableFuture<Fetched> mine = new CompletableFuture<>();
        assertThat(held.claim(chunk(5), mine)).isTrue();
        assertThat(held.claim(chunk(5), new CompletableFuture<>())).isFalse();
        assertThat(held.lookup(chunk(5)).pending()).isSameAs(mine);
        load(held, 2, 100);
        assertThat(held.lookup(chunk(0)).bytes()).as("claiming chunk 0 did not make it recent").isNull();
    }

    @Test
    void aReservationWaitsWhileGetsUnderWayFillTheBudget() throws Exception {
        HeldChunks held = new HeldChunks(200);
        HeldChunks.Lookup a = held.lookup(chunk(0));
        held.reserve(150);
        CountDownLatch reserved = new CountDownLatch(1);
        Thread second = new Thread(() -> {
            try {
                held.reserve(100);
                reserved.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        second.start();
        assertThat(reserved.await(200, TimeUnit.MILLISECONDS)).as("no room while 150 are on their way").isFalse();
        held.arrived(chunk(0), a.pending(), new Fetched(null, new IllegalStateException("failed"), null), 150);
        assertThat(reserved.await(30, TimeUnit.SECONDS)).isTrue();
        second.join();
        assertThat(held.inFlightBytes()).isEqualTo(100);
        assertThat(held.stats().loadFailureCount()).isEqualTo(1);
        assertThat(held.lookup(chunk(0)).mine()).as("a failure is not held: the next read asks again").isTrue();
    }

    @Test
    void aGetLargerThanTheBudgetGoesAloneAndItsChunkStays() throws InterruptedException {
        HeldChunks held = new HeldChunks(100);
        load(held, 0, 50);
        load(held, 1, 150);
        assertThat(held.lookup(chunk(1)).bytes()).as("the chunk just fetched is never its own eviction").isNotNull();
        assertThat(held.lookup(chunk(0)).bytes()).isNull();
        assertThat(held.heldBytes()).isEqualTo(150);
    }

    @Test
    void droppedChunksAreFetchedAgain() throws InterruptedException {
        HeldChunks held = new HeldChunks(1000);
        load(held, 0, 100);
        load(held, 1, 100);
        load(held, 2, 100);
        held.drop(OBJECT, 0, 1);
        assertThat(held.heldBytes()).isEqualTo(100);
        assertThat(held.lookup(chunk(0)).mine()).isTrue();
        assertThat(held.lookup(chunk(2)).bytes()).isNotNull();
    }
}
