package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import dev.felix.offload.log.recovery.Problem;
import dev.felix.offload.log.recovery.RecoveryOptions;
import dev.felix.offload.log.recovery.ShardInspection;
import dev.felix.offload.log.recovery.ShardInspection.Action;
import dev.felix.offload.log.recovery.ShardInspection.Verdict;
import dev.felix.offload.log.recovery.ShardInspector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A segment holding every record kind, cut at every length from 0 bytes to its full size: what a
 * crash mid-write can leave. The scan either ends cleanly with a prefix of the records (only at a
 * record boundary) or raises {@link CorruptionException}, never anything else; a cut inside a record
 * is Truncated at that record's start and repairable; a cut inside the header is a blank first segment.
 */
class SegmentTruncationTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    @TempDir
    Path tmp;

    private DamageFixture fixture;

    @BeforeEach
    void writeFixture() throws IOException {
        fixture = DamageFixture.write(tmp);
    }

    private Path shardDir() {
        return tmp.resolve(SHARD);
    }

    private static <T> Outcome<T> guarded(int cut, ThrowingSupplier<Outcome<T>> scan) {
        try {
            return scan.get();
        } catch (Throwable t) { // anything but CorruptionException (which the outcome carries) is a bug
            throw new AssertionError("cut at " + cut + ": scan threw " + t, t);
        }
    }

    interface ThrowingSupplier<T> {
        T get() throws Exception;
    }

    @Test
    void everyCutEndsCleanAtARecordBoundaryOrTruncatedAtTheTornRecord() throws IOException {
        int size = fixture.bytes.length;
        int boundaryCuts = 0;
        int tornCuts = 0;
        for (int cut = 0; cut <= size; cut++) {
            final int c = cut;
            Path file = SegmentBytes.writeSegment(shardDir(), 0, Arrays.copyOf(fixture.bytes, cut));
            Outcome<Record> full = guarded(cut, () -> SegmentBytes.readRecords(file, SHARD, 0));
            Outcome<RecordHeader> quick = guarded(cut, () -> SegmentBytes.readHeaders(file, SHARD, 0));
            String at = "cut at " + cut;

            if (cut < SegmentHeader.LENGTH) {
                for (CorruptionException e : List.of(full.failure(), quick.failure())) {
                    assertThat(e).as(at).isNotNull();
                    assertThat(e.kind()).as(at).isEqualTo(CorruptionKind.TRUNCATED);
                    assertThat(e.site()).as(at).isEqualTo(new CorruptionSite(SHARD, 0, 0));
                    assertThat(e.needed()).as(at).isEqualTo(32);
                    assertThat(e.available()).as(at).isEqualTo(cut);
                }
                continue;
            }
            int k = fixture.recordAt(cut);
            List<Record> prefix = fixture.records.subList(0, k);
            assertThat(full.items()).as(at).containsExactlyElementsOf(prefix);
            assertThat(quick.items()).as(at).hasSize(k);
            assertThat(quick.positions()).as(at).isEqualTo(full.positions());
            if (cut == fixture.boundaries[k]) {
                boundaryCuts++;
                assertThat(full.failure()).as(at + " (a boundary)").isNull();
                assertThat(quick.failure()).as(at + " (a boundary)").isNull();
                assertThat(full.endPosition()).isEqualTo(cut);
            } else {
                tornCuts++;
                long start = fixture.boundaries[k];
                long available = c - start;
                long needed = available < RecordCodec.HEADER_LENGTH ? RecordCodec.HEADER_LENGTH
                        : fixture.records.get(k).encodedLength();
                for (CorruptionException e : List.of(full.failure(), quick.failure())) {
                    assertThat(e).as(at).isNotNull();
                    assertThat(e.kind()).as(at + ": " + e.getMessage()).isEqualTo(CorruptionKind.TRUNCATED);
                    assertThat(e.site()).as(at).isEqualTo(new CorruptionSite(SHARD, 0, start));
                    assertThat(e.available()).as(at).isEqualTo(available);
                    assertThat(e.needed()).as(at).isEqualTo(needed);
                }
                assertThat(full.endPosition()).as(at).isEqualTo(start);
            }
        }
        assertThat(boundaryCuts).isEqualTo(fixture.records.size() + 1);
        assertThat(tornCuts).isEqualTo(size - 32 - fixture.records.size());
    }

    @Test
    void everyCutOfAOneSegmentShardIsOkOrRepairableNeverCorrupt() throws IOException {
        int size = fixture.bytes.length;
        for (int cut = 0; cut <= size; cut++) {
            SegmentBytes.writeSegment(shardDir(), 0, Arrays.copyOf(fixture.bytes, cut));
            ShardInspection s = ShardInspector.inspect(shardDir(), RecoveryOptions.DEFAULT);
            String at = "cut at " + cut;
            List<Problem> data = s.problems().stream().filter(p -> !p.derived()).toList();
            ShardInspection.SegmentPlan plan = s.segments().get(0);

            if (cut < SegmentHeader.LENGTH) {
                // A blank first segment: creation failed before the header was whole.
                assertThat(s.verdict()).as(at).isEqualTo(Verdict.REPAIRABLE);
                assertThat(data).as(at).singleElement().satisfies(p -> {
                    assertThat(p.kind()).isEqualTo("Truncated");
                    assertThat(p.position()).isZero();
                    assertThat(p.repairable()).isTrue();
                });
                assertThat(plan.action()).as(at).isEqualTo(Action.DELETE_BLANK);
                assertThat(s.records()).isZero();
                assertThat(s.firstOffset()).isZero();
                assertThat(s.nextOffset()).isZero();
                continue;
            }
            int k = fixture.recordAt(cut);
            assertThat(s.records()).as(at).isEqualTo(k);
            assertThat(s.firstOffset()).as(at).isEqualTo(DamageFixture.BASE);
            assertThat(s.nextOffset()).as(at).isEqualTo(DamageFixture.BASE + k);
            if (cut == fixture.boundaries[k]) {
                assertThat(s.verdict()).as(at).isEqualTo(Verdict.OK);
                assertThat(data).as(at).isEmpty();
                assertThat(plan.action()).as(at).isEqualTo(Action.KEEP);
            } else {
                long start = fixture.boundaries[k];
                assertThat(s.verdict()).as(at).isEqualTo(Verdict.REPAIRABLE);
                assertThat(data).as(at).singleElement().satisfies(p -> {
                    assertThat(p.kind()).isEqualTo("Truncated");
                    assertThat(p.file()).isEqualTo("00000000000000000000.log");
                    assertThat(p.segmentId()).isZero();
                    assertThat(p.position()).isEqualTo(start);
                    assertThat(p.repairable()).isTrue();
                });
                assertThat(plan.action()).as(at).isEqualTo(Action.TRUNCATE_TAIL);
                assertThat(plan.scan().validEnd()).as(at).isEqualTo(start);
                assertThat(plan.scan().bytesAfterValid()).as(at).isEqualTo(cut - start);
            }
        }
    }

    @Test
    void tornRecordInAnOlderSegmentIsCorrupt() throws IOException {
        long start = fixture.boundaries[3];
        SegmentBytes.writeSegment(shardDir(), 0, Arrays.copyOf(fixture.bytes, (int) start + 5));
        SegmentBytes.writeSegment(shardDir(), 1, SegmentHeader.v3(DamageFixture.BASE + 3, 1).encode());
        ShardInspection s = ShardInspector.inspect(shardDir(), new RecoveryOptions(true));
        assertThat(s.verdict()).isEqualTo(Verdict.CORRUPT);
        assertThat(s.problems().stream().filter(p -> !p.derived()).toList()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo("Truncated");
            assertThat(p.position()).isEqualTo(start);
            assertThat(p.repairable()).isFalse();
        });
    }
}
