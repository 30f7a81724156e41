package dev.felix.offload.daemon;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** A survey reused for a second from its end, however long it took. */
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
}
