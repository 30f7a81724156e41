package dev.felix.offload.log.recovery;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.recovery.ShardInspection.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shard whose middle segment has a damaged header. Nothing is known about that segment's offsets,
 * so the next segment cannot be judged against the one before it.
 *
 * <p>The first test is EXPECTED TO FAIL against the current main code: {@link ShardInspector} keeps the
 * previous good segment's next offset across the undecodable segment and reports a spurious
 * OffsetOutOfOrder at byte 8 of the intact segment after it. The independent implementation
 * ({@code tools/golden/gen_golden.py}, {@code fsck_shard}: "Header undecodable: nothing known about
 * this segment's offsets", {@code prev_next = None}) reports only the damaged header. It is tagged
 *.
 */
class ShardInspectorDamagedHeaderTest {

    @TempDir
    Path tmp;

    private static byte[] segment(long base, int count) {
        List<Record> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(Record.plain(base + i, 1, ("r" + (base + i)).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
        return SegmentBytes.segment(SegmentHeader.v3(base, 1), records);
    }

    @Test
    void segmentAfterAnUndecodableHeaderIsNotBlamedForAGap() throws IOException {
        Path shard = tmp.resolve("s_0-01");
        SegmentBytes.writeSegment(shard, 0, segment(0, 3));          // offsets 0..2
        byte[] middle = segment(3, 4);                               // offsets 3..6
        middle[0] = 'X';                                             // magic destroyed
        SegmentBytes.writeSegment(shard, 1, middle);
        SegmentBytes.writeSegment(shard, 2, segment(7, 2));          // offsets 7..8: intact, follows segment 1

        ShardInspection s = ShardInspector.inspect(shard, RecoveryOptions.DEFAULT);
        assertThat(s.verdict()).isEqualTo(Verdict.CORRUPT);
        assertThat(s.problems().stream().filter(p -> !p.derived()).map(p -> p.file() + " " + p.kind() + " @" + p.position()))
                .containsExactly("00000000000000000001.log SegmentMagic @0");
    }

    @Test
    void damagedMiddleHeaderIsNeverRepairable() throws IOException {
        Path shard = tmp.resolve("s_0-02");
        SegmentBytes.writeSegment(shard, 0, segment(0, 3));
        SegmentBytes.writeSegment(shard, 1, new byte[32]);
        SegmentBytes.writeSegment(shard, 2, segment(3, 2));
        ShardInspection s = ShardInspector.inspect(shard, new RecoveryOptions(true));
        assertThat(s.verdict()).isEqualTo(Verdict.CORRUPT);
        assertThat(s.problems()).filteredOn(p -> p.file().equals("00000000000000000001.log")).singleElement()
                .satisfies(p -> {
                    assertThat(p.kind()).isEqualTo("SegmentMagic");
                    assertThat(p.repairable()).isFalse();
                });
    }

    /** A shard under groups/ is named by its path under the root in what the inspection finds, as DataRoot names it. */
    @Test
    void aShardIsNamedAsTheRootNamesIt() throws IOException {
        Path shard = tmp.resolve("groups").resolve("s_0-03");
        SegmentBytes.writeSegment(shard, 0, segment(0, 3));
        byte[] damaged = segment(3, 4);
        damaged[0] = 'X';
        SegmentBytes.writeSegment(shard, 1, damaged);

        ShardInspection s = ShardInspector.inspect("groups/s_0-03", shard, RecoveryOptions.DEFAULT,
                ShardInspector.Depth.EVERY_SEGMENT);
        assertThat(s.problems()).filteredOn(p -> p.cause() != null).isNotEmpty()
                .allSatisfy(p -> assertThat(p.cause().site().shard()).isEqualTo("groups/s_0-03"));
    }
}
