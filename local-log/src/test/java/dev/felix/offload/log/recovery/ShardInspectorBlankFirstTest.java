package dev.felix.offload.log.recovery;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.recovery.ShardInspection.Action;
import dev.felix.offload.log.recovery.ShardInspection.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The blank-first-segment rule as {@link ShardInspector} applies it to whole shard directories. */
class ShardInspectorBlankFirstTest {

    @TempDir
    Path tmp;

    private List<Problem> dataProblems(ShardInspection s) {
        return s.problems().stream().filter(p -> !p.derived()).toList();
    }

    @Test
    void allZeroHeaderSizedOnlySegmentIsRepairableByDeletingIt() throws IOException {
        Path shard = tmp.resolve("s_0-01");
        SegmentBytes.writeSegment(shard, 0, new byte[32]);
        ShardInspection s = ShardInspector.inspect(shard, RecoveryOptions.DEFAULT);
        assertThat(s.verdict()).isEqualTo(Verdict.REPAIRABLE);
        assertThat(dataProblems(s)).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo("SegmentMagic");
            assertThat(p.repairable()).isTrue();
            assertThat(p.position()).isZero();
        });
        assertThat(s.segments()).singleElement().extracting(ShardInspection.SegmentPlan::action)
                .isEqualTo(Action.DELETE_BLANK);
        assertThat(s.records()).isZero();
        assertThat(s.firstOffset()).isZero();
        assertThat(s.nextOffset()).isZero();
    }

    @Test
    void zeroedHeaderOnALongerOnlySegmentIsCorrupt() throws IOException {
        Path shard = tmp.resolve("s_0-02");
        SegmentBytes.writeSegment(shard, 0, new byte[33]);
        ShardInspection s = ShardInspector.inspect(shard, new RecoveryOptions(true));
        assertThat(s.verdict()).isEqualTo(Verdict.CORRUPT);
        assertThat(dataProblems(s)).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo("SegmentMagic");
            assertThat(p.repairable()).isFalse();
        });
        assertThat(s.segments()).singleElement().extracting(ShardInspection.SegmentPlan::action)
                .isEqualTo(Action.REFUSE);
    }

    @Test
    void shortFirstSegmentFollowedByAnotherIsCorrupt() throws IOException {
        Path shard = tmp.resolve("s_0-03");
        SegmentBytes.writeSegment(shard, 0, new byte[20]);
        SegmentBytes.writeSegment(shard, 1, SegmentHeader.v3(0, 1).encode());
        ShardInspection s = ShardInspector.inspect(shard, new RecoveryOptions(true));
        assertThat(s.verdict()).isEqualTo(Verdict.CORRUPT);
        assertThat(dataProblems(s)).first().satisfies(p -> {
            assertThat(p.file()).isEqualTo("00000000000000000000.log");
            assertThat(p.kind()).isEqualTo("Truncated");
            assertThat(p.repairable()).isFalse();
        });
    }
}
