package dev.felix.offload.daemon;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** The opt-in per-shard gauges: off by default, bounded to metrics.shards series plus one for the rest. */
class DaemonMetricsShardsTest {

    private static ShardSurvey.ShardStatus shard(String name, long lagBytes, int lagSegments, long remoteBytes) {
        return new ShardSurvey.ShardStatus(name, OptionalLong.of(0), 1, 100, OptionalLong.of(0), OptionalLong.of(9), 1,
                remoteBytes, lagSegments, lagBytes, null);
    }

    @Test
    void offByDefault() {
        DaemonMetrics metrics = new DaemonMetrics();
        metrics.perShard(0, () -> List.of(shard("a", 1, 1, 1)));
        assertThat(metrics.scrape()).doesNotContain("felix_shard_");
    }

    @Test
    void theFirstShardsByNameGetSeriesAndTheRestAreSummedUnderOther() {
        DaemonMetrics metrics = new DaemonMetrics();
        AtomicReference<List<ShardSurvey.ShardStatus>> survey = new AtomicReference<>(List.of(
                shard("s-c", 30, 3, 300), shard("s-a", 10, 1, 100), shard("s-d", 40, 4, 400), shard("s-b", 20, 2, 200)));
        metrics.perShard(2, survey::get);
        String text = metrics.scrape();
        assertThat(text).contains("felix_shard_lag_bytes{shard=\"s-a\"} 10.0", "felix_shard_lag_bytes{shard=\"s-b\"} 20.0",
                "felix_shard_lag_segments{shard=\"s-b\"} 2.0", "felix_shard_remote_bytes{shard=\"s-a\"} 100.0",
                "felix_shard_lag_bytes{shard=\"(other)\"} 70.0", "felix_shard_lag_segments{shard=\"(other)\"} 7.0",
                "felix_shard_remote_bytes{shard=\"(other)\"} 700.0", "felix_shard_metrics_omitted_shards 2.0");
        assertThat(text).doesNotContain("{shard=\"s-c\"}", "{shard=\"s-d\"}");
        assertThat(seriesOf(text, "felix_shard_lag_bytes")).hasSize(3);

        // A shard gone loses its series, and with room again nothing is left under (other).
        survey.set(List.of(shard("s-b", 5, 1, 50)));
        text = metrics.scrape();
        assertThat(text).contains("felix_shard_lag_bytes{shard=\"s-b\"} 5.0", "felix_shard_metrics_omitted_shards 0.0");
        assertThat(text).doesNotContain("{shard=\"s-a\"}", "{shard=\"(other)\"}");
    }

    @Test
    void aCollisionCounterExistsAtZero() {
        assertThat(new DaemonMetrics().scrape()).contains("felix_offload_collisions_total 0.0");
    }

    private static List<String> seriesOf(String text, String name) {
        List<String> out = new ArrayList<>();
        for (String line : text.lines().toList()) {
            if (line.startsWith(name + "{")) {
                out.add(line);
            }
        }
        return out;
    }
}
