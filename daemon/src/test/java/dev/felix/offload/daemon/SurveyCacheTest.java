package dev.felix.offload.daemon;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A survey reused for a second from its end, however long it took; past that, a scrape is answered from
 * it while the next runs behind it, but never from one older than a pass's change.
 */
class SurveyCacheTest {

    private static final long SECOND = 1_000_000_000L;

    private static ShardSurvey.ShardStatus row(String shard) {
        return new ShardSurvey.ShardStatus(shard, OptionalLong.of(0), 1, 100, OptionalLong.empty(), OptionalLong.empty(),
                0, 0, 1, 100, null);
    }

    @Test
    void aSurveyLongerThanTheReuseTimeServesEveryGaugeOfAScrape() {
        AtomicLong clock = new AtomicLong(10 * SECOND);
        AtomicLong taken = new AtomicLong();
        // Each survey takes 3 s on this clock: counted from its start, every gauge would take one of its own.
        SurveyCache cache = new SurveyCache(() -> {
            taken.incrementAndGet();
            clock.addAndGet(3 * SECOND);
            return List.of(row("a"), row("b"));
        }, clock::get);
        for (int gauge = 0; gauge < 6; gauge++) {
            assertThat(cache.get(e -> { }).totals().lagSegments()).isEqualTo(2);
            clock.addAndGet(SECOND / 10);
        }
        assertThat(taken.get()).isEqualTo(1);
        clock.addAndGet(SECOND);
        cache.get(e -> { });
        assertThat(taken.get()).isEqualTo(2);
        assertThat(cache.surveys()).isEqualTo(2);
    }

    @Test
    void aFailedSurveyLeavesThePreviousOneStanding() {
        AtomicLong clock = new AtomicLong();
        AtomicLong calls = new AtomicLong();
        List<IOException> failures = new java.util.ArrayList<>();
        SurveyCache cache = new SurveyCache(() -> {
            if (calls.incrementAndGet() > 1) {
                throw new IOException("root unreadable");
            }
            return List.of(row("a"));
        }, clock::get);
        assertThat(cache.get(failures::add).shards()).hasSize(1);
        clock.addAndGet(2 * SECOND);
        assertThat(cache.get(failures::add).shards()).hasSize(1);
        assertThat(failures).hasSize(1);
    }

    @Test
    void aScrapePastTheReuseTimeIsAnsweredAtOnceWhileTheNextSurveyRunsBehindIt() {
        AtomicLong clock = new AtomicLong(10 * SECOND);
        AtomicLong taken = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<List<ShardSurvey.ShardStatus>> rows =
                new java.util.concurrent.atomic.AtomicReference<>(List.of(row("a")));
        List<Runnable> behind = new java.util.ArrayList<>();
        SurveyCache cache = new SurveyCache(() -> {
            taken.incrementAndGet();
            return rows.get();
        }, clock::get, behind::add);
        assertThat(cache.get(e -> { }).shards()).hasSize(1); // the first: nothing to answer from, so taken now
        assertThat(taken.get()).isEqualTo(1);

        rows.set(List.of(row("a"), row("b")));
        clock.addAndGet(2 * SECOND);
        // Past the reuse time: answered from the latest survey, the next one queued, none taken by the scrape.
        assertThat(cache.get(e -> { }).shards()).hasSize(1);
        assertThat(cache.get(e -> { }).shards()).hasSize(1);
        assertThat(taken.get()).as("surveys taken by the scrapes themselves").isEqualTo(1);
        assertThat(behind).as("one survey at a time").hasSize(1);

        behind.remove(0).run();
        assertThat(taken.get()).isEqualTo(2);
        assertThat(cache.get(e -> { }).shards()).hasSize(2);
        assertThat(behind).isEmpty();
    }

    @Test
    void theSurveyBegunAtStartUpServesTheFirstScrape() {
        AtomicLong taken = new AtomicLong();
        List<Runnable> behind = new java.util.ArrayList<>();
        SurveyCache cache = new SurveyCache(() -> {
            taken.incrementAndGet();
            return List.of(row("a"));
        }, () -> 0L, behind::add);
        cache.warm();
        cache.warm();
        assertThat(behind).hasSize(1);
        behind.remove(0).run();
        assertThat(cache.get(e -> { }).shards()).hasSize(1);
        assertThat(taken.get()).isEqualTo(1);
    }

    @Test
    void aScrapeAfterAPassChangedTheRootShowsASurveyBegunAfterTheChange() throws Exception {
        AtomicLong clock = new AtomicLong(10 * SECOND);
        java.util.concurrent.atomic.AtomicReference<List<ShardSurvey.ShardStatus>> rows =
                new java.util.concurrent.atomic.AtomicReference<>(List.of(row("a")));
        java.util.concurrent.ExecutorService background = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            SurveyCache cache = new SurveyCache(rows::get, clock::get, background);
            assertThat(cache.get(e -> { }).shards()).hasSize(1);
            // Within the reuse time, but a pass uploaded: the survey from before it is not shown again.
            rows.set(List.of(row("a"), row("b")));
            cache.changed();
            assertThat(cache.get(e -> { }).shards()).hasSize(2);
        } finally {
            background.shutdownNow();
        }
    }

    @Test
    void aScrapeWaitsForASlowSurveyNoLongerThanItsBoundAndThenSaysWhatIsKnown() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<List<ShardSurvey.ShardStatus>> rows =
                new java.util.concurrent.atomic.AtomicReference<>(List.of(row("a")));
        java.util.concurrent.ExecutorService background = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            SurveyCache cache = new SurveyCache(heldUntil(release, rows), System::nanoTime, background, 200_000_000L);
            // The start-up survey is slow (thousands of shards): the first scrape does not wait for its end.
            cache.warm();
            long began = System.nanoTime();
            SurveyCache.Taken first = cache.get(e -> { });
            long waitedMillis = (System.nanoTime() - began) / 1_000_000;
            assertThat(first.known()).as("nothing is known before the first survey ends").isFalse();
            assertThat(first.shards()).isEmpty();
            assertThat(waitedMillis).as("the scrape waited for the bound, not for the survey").isGreaterThanOrEqualTo(150);
            release.countDown();
            SurveyCache.Taken second = awaitKnown(cache);
            assertThat(second.shards()).hasSize(1);

            // A pass changed the root and the survey after it is slow again: the previous one is answered.
            java.util.concurrent.CountDownLatch again = new java.util.concurrent.CountDownLatch(1);
            SurveyCache slow = new SurveyCache(heldUntil(again, rows), System::nanoTime, background, 200_000_000L);
            again.countDown();
            assertThat(slow.get(e -> { }).shards()).hasSize(1);
            java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
            rows.set(List.of(row("a"), row("b")));
            background.execute(() -> {
                try {
                    blocked.await(); // the survey thread is busy: the change's survey waits behind this
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            slow.changed();
            SurveyCache.Taken stale = slow.get(e -> { });
            assertThat(stale.known()).isTrue();
            assertThat(stale.shards()).as("the survey from before the change, answered at the bound").hasSize(1);
            blocked.countDown();
        } finally {
            background.shutdownNow();
        }
    }

    /** A survey that answers {@code rows} once {@code release} is counted down: a slow one, as the test needs. */
    private static SurveyCache.Surveyor heldUntil(java.util.concurrent.CountDownLatch release,
            java.util.concurrent.atomic.AtomicReference<List<ShardSurvey.ShardStatus>> rows) {
        return () -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            return rows.get();
        };
    }

    private static SurveyCache.Taken awaitKnown(SurveyCache cache) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        SurveyCache.Taken t = cache.get(e -> { });
        while (!t.known() && System.nanoTime() < deadline) {
            Thread.sleep(20);
            t = cache.get(e -> { });
        }
        return t;
    }
}
