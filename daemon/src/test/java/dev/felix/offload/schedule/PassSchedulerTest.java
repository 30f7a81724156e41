package dev.felix.offload.schedule;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The scheduler on a manual clock. Nothing here asserts on how long anything takes: conditions are
 * awaited with a generous deadline that only guards against a hang.
 */
class PassSchedulerTest {

    private static final Duration GUARD = Duration.ofSeconds(20);
    private static final Instant START = Instant.parse("2031-01-01T00:00:30Z");

    private final ManualPassClock clock = new ManualPassClock(START, ZoneOffset.UTC);
    private final List<PassScheduler> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        for (PassScheduler s : started) {
            assertThat(s.stop(GUARD)).as("every pass thread ends").isTrue();
        }
    }

    private PassScheduler start(PassScheduler.Builder builder) {
        PassScheduler s = builder.build();
        started.add(s);
        s.start();
        return s;
    }

    private static Instant at(String hhmmss) {
        return Instant.parse("2031-01-01T" + hhmmss + "Z");
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + GUARD.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("gave up waiting for: " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for: " + what);
            }
        }
    }

    private static void awaitLatch(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(GUARD.toMillis(), TimeUnit.MILLISECONDS)) {
            fail("gave up waiting for: " + what);
        }
    }

    @Test
    void aPassRunsOnceAtEachFireTime() {
        AtomicInteger runs = new AtomicInteger();
        PassScheduler s = start(PassScheduler.builder(clock)
                .pass("offload", Schedule.parse("* * * * *"), stop -> { runs.incrementAndGet(); return null; }));

        await("the first fire time", () -> s.nextRun("offload").equals(Optional.of(at("00:01:00"))));
        assertThat(s.completedRuns("offload")).isZero();

        clock.set(at("00:01:00"));
        await("the next fire time after the run", () -> s.nextRun("offload").equals(Optional.of(at("00:02:00"))));
        assertThat(runs.get()).isEqualTo(1);
        PassOutcome outcome = s.lastOutcome("offload").orElseThrow();
        assertThat(outcome.status()).isEqualTo(PassOutcome.Status.SUCCEEDED);
        assertThat(outcome.scheduledFor()).isEqualTo(at("00:01:00"));

        clock.set(at("00:02:00"));
        await("the second run", () -> s.completedRuns("offload") == 2);
        assertThat(s.lastOutcome("offload").orElseThrow().scheduledFor()).isEqualTo(at("00:02:00"));
    }

    @Test
    void fireTimesMissedDuringALongRunAreNotMadeUp() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        PassScheduler s = start(PassScheduler.builder(clock).pass("retention", Schedule.parse("* * * * *"), stop -> {
            if (runs.incrementAndGet() == 1) {
                running.countDown();
                awaitLatch(release, "the test to release the first run");
            }
            return null;
        }));
        await("the first fire time", () -> s.nextRun("retention").isPresent());
        clock.set(at("00:01:00"));
        awaitLatch(running, "the first run");
        assertThat(s.isRunning("retention")).isTrue();

        clock.set(at("00:06:30")); // five fire times pass while it runs
        release.countDown();

        await("the fire time after the run ended", () -> s.nextRun("retention").equals(Optional.of(at("00:07:00"))));
        assertThat(runs.get()).as("no catch-up runs").isEqualTo(1);
        assertThat(s.completedRuns("retention")).isEqualTo(1);

        clock.set(at("00:07:00"));
        await("the second run", () -> s.completedRuns("retention") == 2);
        assertThat(s.lastOutcome("retention").orElseThrow().scheduledFor()).isEqualTo(at("00:07:00"));
    }

    @Test
    void aPassNeverOverlapsItselfAndRequestsMadeMeanwhileRunItOnce() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        PassScheduler s = start(PassScheduler.builder(clock).pass("scrub", Schedule.parse("0 3 * * *"), stop -> {
            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                if (runs.incrementAndGet() == 1) {
                    running.countDown();
                    awaitLatch(release, "the test to release the first run");
                }
            } finally {
                inside.decrementAndGet();
            }
            return null;
        }));

        assertThat(s.requestRun("scrub")).isTrue();
        awaitLatch(running, "the requested run");
        for (int i = 0; i < 5; i++) {
            assertThat(s.requestRun("scrub")).isTrue();
        }
        clock.set(Instant.parse("2031-01-03T04:00:00Z")); // two daily fire times as well
        release.countDown();

        await("the pass waiting for its next fire time again",
                () -> s.nextRun("scrub").equals(Optional.of(Instant.parse("2031-01-04T03:00:00Z"))));
        assertThat(runs.get()).as("the first run, then one for all the requests").isEqualTo(2);
        assertThat(most.get()).isEqualTo(1);
    }

    @Test
    void passesOfOneGroupNeverRunAtTheSameTime() throws Exception {
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch offloadRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean retentionStarted = new AtomicBoolean();
        AtomicInteger scrubRuns = new AtomicInteger();
        PassScheduler s = start(PassScheduler.builder(clock)
                .pass("offload", Schedule.parse("* * * * *"), "root", stop -> {
                    events.add("offload start");
                    offloadRunning.countDown();
                    awaitLatch(release, "the test to release offload");
                    events.add("offload end");
                    return null;
                })
                .pass("retention", Schedule.parse("* * * * *"), "root", stop -> {
                    retentionStarted.set(true);
                    events.add("retention start");
                    events.add("retention end");
                    return null;
                })
                .pass("scrub", Schedule.parse("* * * * *"), stop -> { scrubRuns.incrementAndGet(); return null; }));

        assertThat(s.requestRun("offload")).isTrue();
        awaitLatch(offloadRunning, "offload to run");
        assertThat(s.requestRun("retention")).isTrue();
        // A pass outside the group runs meanwhile.
        assertThat(s.requestRun("scrub")).isTrue();
        await("scrub to run beside offload", () -> s.completedRuns("scrub") == 1);
        // Give a wrong scheduler every chance to start retention now; a right one never does.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (!retentionStarted.get() && System.nanoTime() < until) {
            Thread.sleep(1);
        }
        assertThat(retentionStarted.get()).as("retention waits while offload runs").isFalse();
        release.countDown();

        await("retention after offload", () -> s.completedRuns("retention") == 1);
        assertThat(events).containsExactly("offload start", "offload end", "retention start", "retention end");
    }

    @Test
    void aStopLetsTheRunningPassFinishWhenItChecksTheSignal() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean sawStop = new AtomicBoolean();
        PassScheduler s = start(PassScheduler.builder(clock).pass("offload", Schedule.parse("* * * * *"), stop -> {
            running.countDown();
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (!stop.stopRequested() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            sawStop.set(stop.stopRequested());
            return null;
        }));
        s.requestRun("offload");
        awaitLatch(running, "the run");

        assertThat(s.stop(GUARD)).isTrue();

        assertThat(sawStop.get()).isTrue();
        PassOutcome outcome = s.lastOutcome("offload").orElseThrow();
        assertThat(outcome.status()).isEqualTo(PassOutcome.Status.SUCCEEDED);
        assertThat(s.requestRun("offload")).as("nothing starts after a stop").isFalse();
        assertThat(s.nextRun("offload")).isEmpty();
        assertThat(s.completedRuns("offload")).isEqualTo(1);
    }

    @Test
    void aStopAbandonsAPassThatDoesNotCheckTheSignal() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        PassScheduler s = start(PassScheduler.builder(clock).pass("offload", Schedule.parse("* * * * *"), stop -> {
            running.countDown();
            never.await(); // only an interrupt ends this
            return null;
        }));
        s.requestRun("offload");
        awaitLatch(running, "the run");

        // The pass never ends by itself, so any patience abandons it; a generous one keeps the
        // interrupted thread's end inside it on a loaded machine (100 ms did not always suffice).
        assertThat(s.stop(Duration.ofSeconds(2))).isTrue();

        PassOutcome outcome = s.lastOutcome("offload").orElseThrow();
        assertThat(outcome.status()).isEqualTo(PassOutcome.Status.ABANDONED);
        assertThat(outcome.error()).contains("InterruptedException");
    }

    @Test
    void aFailedRunIsRecordedAndTheScheduleGoesOn() {
        AtomicInteger runs = new AtomicInteger();
        List<PassOutcome> heard = Collections.synchronizedList(new ArrayList<>());
        List<String> startedRuns = Collections.synchronizedList(new ArrayList<>());
        PassScheduler s = start(PassScheduler.builder(clock)
                .pass("offload", Schedule.parse("* * * * * ?"), stop -> {
                    if (runs.incrementAndGet() == 1) {
                        throw new IllegalStateException("store unreachable\nsecond line");
                    }
                    return null;
                })
                .listener(new PassListener() {
                    @Override
                    public void started(String pass, Instant scheduledFor) {
                        startedRuns.add(pass + "@" + scheduledFor);
                    }

                    @Override
                    public void finished(PassOutcome outcome) {
                        heard.add(outcome);
                    }
                }));

        await("the first fire time", () -> s.nextRun("offload").equals(Optional.of(at("00:00:31"))));
        clock.advance(Duration.ofSeconds(1));
        await("the failed run", () -> s.completedRuns("offload") == 1);
        PassOutcome failed = s.lastOutcome("offload").orElseThrow();
        assertThat(failed.status()).isEqualTo(PassOutcome.Status.FAILED);
        assertThat(failed.error()).isEqualTo("IllegalStateException: store unreachable second line");

        await("the next fire time", () -> s.nextRun("offload").equals(Optional.of(at("00:00:32"))));
        clock.advance(Duration.ofSeconds(1));
        await("the second run", () -> s.completedRuns("offload") == 2);
        assertThat(s.lastOutcome("offload").orElseThrow().succeeded()).isTrue();
        await("the listener to hear both", () -> heard.size() == 2);
        assertThat(heard).extracting(PassOutcome::status)
                .containsExactly(PassOutcome.Status.FAILED, PassOutcome.Status.SUCCEEDED);
        assertThat(startedRuns).containsExactly("offload@" + at("00:00:31"), "offload@" + at("00:00:32"));
        assertThat(s.lastOutcomes()).containsOnlyKeys("offload");
    }

    @Test
    void whatARunFoundIsInItsOutcome() {
        AtomicInteger runs = new AtomicInteger();
        PassScheduler s = start(PassScheduler.builder(clock).pass("retention", Schedule.parse("* * * * *"), stop -> {
            if (runs.incrementAndGet() == 2) {
                throw new IllegalStateException("no store");
            }
            return new PassOutcome.Findings("2 local segments removed", List.of("shard-a: manifest unreadable"));
        }));
        s.requestRun("retention");
        await("the first run", () -> s.completedRuns("retention") == 1);
        PassOutcome first = s.lastOutcome("retention").orElseThrow();
        assertThat(first.succeeded()).isTrue();
        assertThat(first.findings().summary()).isEqualTo("2 local segments removed");
        assertThat(first.findings().problems()).containsExactly("shard-a: manifest unreadable");
        assertThat(first.findings().ok()).isFalse();

        s.requestRun("retention");
        await("the second run", () -> s.completedRuns("retention") == 2);
        assertThat(s.lastOutcome("retention").orElseThrow().findings()).isNull();
    }

    @Test
    void namesAreCheckedAndAStoppedSchedulerDoesNotStart() {
        PassScheduler.Builder b = PassScheduler.builder(clock).pass("offload", Schedule.parse("* * * * *"), stop -> null);
        assertThatThrownBy(() -> b.pass("offload", Schedule.parse("* * * * *"), stop -> null))
                .hasMessageContaining("'offload' is added twice");
        PassScheduler s = b.build();
        assertThat(s.passNames()).containsExactly("offload");
        assertThatThrownBy(() -> s.requestRun("offlaod")).hasMessageContaining("no pass named 'offlaod'")
                .hasMessageContaining("[offload]");
        assertThat(s.stop(Duration.ofSeconds(1))).isTrue();
        assertThatThrownBy(s::start).isInstanceOf(IllegalStateException.class);
    }
}
