package dev.felix.offload.schedule;

import dev.felix.offload.copy.StopSignal;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Handing the root over: the pass waiting has it first, and a stop meanwhile leaves nothing held. */
class DataRootGuardTest {

    private static void awaitWaiting(DataRootGuard guard) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!guard.othersWaiting() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(guard.othersWaiting()).isTrue();
    }

    @Test
    void aHandOverLetsTheWaitingPassHaveTheRootBeforeTheHandingPassHasItBack() throws Exception {
        DataRootGuard guard = new DataRootGuard();
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch started = new CountDownLatch(1);
        try (DataRootGuard.Held held = guard.hold(StopSignal.never())) {
            assertThat(guard.othersWaiting()).isFalse();
            Thread offload = new Thread(() -> {
                started.countDown();
                try (DataRootGuard.Held h = guard.hold(StopSignal.never())) {
                    order.add("offload");
                    Thread.sleep(50);
                    order.add("offload done");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            offload.start();
            started.await();
            awaitWaiting(guard);

            assertThat(guard.handOver(StopSignal.never())).isTrue();
            order.add("retention again");
            offload.join();
        }
        assertThat(order).containsExactly("offload", "offload done", "retention again");
        assertThat(guard.othersWaiting()).isFalse();
    }

    @Test
    void aStopWhileHandedOverAnswersFalseAndTheHoldClosesCleanly() throws Exception {
        DataRootGuard guard = new DataRootGuard();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch otherHolds = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (DataRootGuard.Held held = guard.hold(stop::get)) {
            Thread other = new Thread(() -> {
                try (DataRootGuard.Held h = guard.hold(StopSignal.never())) {
                    otherHolds.countDown();
                    stop.set(true); // the stop comes while the other pass has the root
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            other.start();
            awaitWaiting(guard);
            assertThat(guard.handOver(stop::get)).isFalse();
            assertThat(otherHolds.await(30, TimeUnit.SECONDS)).isTrue();
            release.countDown();
            other.join();
        } // closing a hold given away is nothing
        assertThatThrownBy(() -> guard.handOver(StopSignal.never())).isInstanceOf(IllegalStateException.class);
        try (DataRootGuard.Held again = guard.hold(StopSignal.never())) {
            assertThat(again).isNotNull();
        }
    }
}
