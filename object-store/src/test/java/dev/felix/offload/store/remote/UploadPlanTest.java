package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** When a body above one part goes in one PUT, and how the choice is explained. */
class UploadPlanTest {
    private static final long MIB = 1024 * 1024;
    private static final long SEGMENT = 128 * MIB;

    private final List<Long> keptRates = new ArrayList<>();

    private UploadPlan plan(RemoteStoreSettings settings, boolean minio) {
        return new UploadPlan(settings, minio, keptRates::add);
    }

    private static RemoteStoreSettings defaults() {
        return RemoteStoreSettings.builder("bucket").build();
    }

    @Test
    void beforeAnythingIsMeasuredTheDefaultThresholdStands() {
        UploadPlan plan = plan(defaults(), false);
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isTrue();
        assertThat(plan.inParts(64 * MIB, Optional.empty())).isFalse();
        plan.sent(SEGMENT, true);
        assertThat(plan.explain().orElseThrow()).startsWith("1 in parts (no upload rate is measured for this endpoint yet");
    }

    @Test
    void aFastMeasuredRateSendsLargeBodiesInOnePutAndASlowOneInParts() {
        UploadPlan plan = plan(defaults(), false);
        plan.measured(16 * MIB, Duration.ofMillis(50).toNanos()); // 320 MiB/s
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isFalse();
        plan.sent(SEGMENT, false);
        assertThat(plan.explain().orElseThrow()).startsWith("1 in one PUT each (a body uploads at 320 MiB/s here, "
                + "so one PUT of 128 MiB takes 0.4 s, within 4.0 s");
        assertThat(keptRates).containsExactly(320 * MIB);

        UploadPlan slow = plan(defaults(), false);
        slow.measured(16 * MIB, Duration.ofSeconds(2).toNanos()); // 8 MiB/s: 16 s for a segment
        assertThat(slow.inParts(SEGMENT, Optional.empty())).isTrue();
        // and bodies under the default threshold go in parts too where one PUT would be long
        assertThat(slow.inParts(48 * MIB, Optional.empty())).isTrue();
        assertThat(slow.inParts(16 * MIB, Optional.empty())).as("one part's worth is one PUT anyway").isFalse();
    }

    @Test
    void theBandwidthLimitAndAShortAttemptTimeoutCountAndAFailureHalvesTheRate() {
        UploadPlan plan = plan(defaults(), false);
        plan.measured(16 * MIB, Duration.ofMillis(50).toNanos());
        plan.pacedAt(10 * MIB);
        assertThat(plan.inParts(SEGMENT, Optional.empty())).as("12.8 s at the limit").isTrue();
        plan.pacedAt(0);
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isFalse();
        plan.failed(16 * MIB);
        plan.failed(16 * MIB);
        plan.failed(16 * MIB); // 40 MiB/s: 3.2 s, still within 4 s
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isFalse();
        plan.failed(16 * MIB); // 20 MiB/s: 6.4 s
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isTrue();

        UploadPlan shortTimeout = plan(defaults().toBuilder().timeouts(Duration.ofSeconds(10), Duration.ofSeconds(8))
                .build(), false);
        shortTimeout.measured(16 * MIB, Duration.ofMillis(100).toNanos()); // 160 MiB/s: 0.8 s, over 1 s? no: within
        assertThat(shortTimeout.singlePutBound()).isEqualTo(Duration.ofSeconds(1));
        assertThat(shortTimeout.inParts(SEGMENT, Optional.empty())).isFalse();
        assertThat(shortTimeout.inParts(256 * MIB, Optional.empty())).isTrue();
    }

    @Test
    void theOperatorsThresholdDecidesAlone() {
        UploadPlan plan = plan(defaults().toBuilder().multipart(64 * MIB, 16 * MIB, 4).build(), false);
        plan.measured(16 * MIB, Duration.ofMillis(10).toNanos());
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isTrue();
        assertThat(plan.inParts(SEGMENT, Optional.of(SEGMENT))).isTrue();
        plan.sent(SEGMENT, true);
        assertThat(plan.explain().orElseThrow()).contains("multipart-threshold is set to 67108864 bytes");
    }

    @Test
    void aBodyGoesAsItsDigestsWereTakenAndAKeptRateIsTheStart() {
        UploadPlan plan = plan(defaults(), false);
        plan.seed(OptionalLong.of(300 * MIB));
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isFalse();
        assertThat(plan.inParts(SEGMENT, Optional.of(16 * MIB))).as("read for parts: goes in parts").isTrue();
        assertThat(plan.inParts(SEGMENT, Optional.of(SEGMENT))).isFalse();
        plan.seed(OptionalLong.of(1));
        assertThat(plan.rate()).as("a rate known is not replaced by a kept one").isEqualTo(300 * MIB);
    }

    @Test
    void aMinioStoreUnderABandwidthLimitKeepsTheDefaultThreshold() {
        UploadPlan plan = plan(defaults(), true);
        plan.measured(16 * MIB, Duration.ofMillis(10).toNanos());
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isFalse();
        plan.pacedAt(1024 * MIB);
        assertThat(plan.inParts(SEGMENT, Optional.empty())).isTrue();
    }

    @Test
    void smallRequestsAreNotMeasured() {
        UploadPlan plan = plan(defaults(), false);
        plan.measured(64 * 1024, 1);
        assertThat(plan.rate()).isZero();
        assertThat(keptRates).isEmpty();
    }
}
