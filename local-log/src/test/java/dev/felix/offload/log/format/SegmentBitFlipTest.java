package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every single-bit flip of a record, and of the segment header, of a segment holding every record
 * kind. A scan may only return an unchanged prefix of the records and then the typed
 * {@link CorruptionException}: never another exception and never a record that differs from what
 * was written. CRC-32 catches every single-bit error, so in verify mode the flipped record itself
 * is where the scan stops, with the kind fixed by which CRC covers the flipped byte.
 */
class SegmentBitFlipTest {

    private static final String SHARD = "flip_0-01";

    @TempDir
    Path tmp;

    private Outcome<Record> verify(byte[] bytes, String at) {
        try {
            return SegmentBytes.readRecords(SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, bytes), SHARD, 0);
        } catch (Throwable t) {
            throw new AssertionError(at + ": scan threw " + t, t);
        }
    }

    private Outcome<RecordHeader> checkedOnly(byte[] bytes, String at) {
        try {
            return SegmentBytes.readChecked(SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, bytes), SHARD, 0);
        } catch (Throwable t) {
            throw new AssertionError(at + ": scan threw " + t, t);
        }
    }

    private Outcome<RecordHeader> headersOnly(byte[] bytes, String at) {
        try {
            return SegmentBytes.readHeaders(SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, bytes), SHARD, 0);
        } catch (Throwable t) {
            throw new AssertionError(at + ": scan threw " + t, t);
        }
    }

    @ParameterizedTest(name = "record {0}")
    @ValueSource(ints = {0, 1, 2, 3, 4, 5})
    void everyBitFlipOfARecordStopsTheScanAtThatRecordWithTheRightKind(int victim) throws IOException {
        DamageFixture f = DamageFixture.write(tmp);
        int start = (int) f.boundaries[victim];
        int end = (int) f.boundaries[victim + 1];
        List<Record> before = f.records.subList(0, victim);
        for (int bit = start * 8; bit < end * 8; bit++) {
            int inRecord = bit / 8 - start;
            String at = "record " + victim + ", byte " + inRecord + ", bit " + (bit % 8);
            byte[] flipped = SegmentBytes.flipBit(f.bytes, bit);

            Outcome<Record> full = verify(flipped, at);
            assertThat(full.items()).as(at + ": records before the flip, unchanged").containsExactlyElementsOf(before);
            assertThat(full.failure()).as(at).isNotNull();
            assertThat(full.failure().site()).as(at).isEqualTo(new CorruptionSite(SHARD, 0, start));
            // Bytes 0..20 and the header CRC at 20..24 are the header CRC's; the rest the record checksum's.
            CorruptionKind expected = inRecord < RecordCodec.CHECKSUM_OFFSET
                    ? CorruptionKind.RECORD_HEADER_CHECKSUM : CorruptionKind.RECORD_CHECKSUM;
            assertThat(full.failure().kind()).as(at + ": " + full.failure().getMessage()).isEqualTo(expected);
            assertThat(full.failure().storedChecksum()).as(at).isNotEqualTo(full.failure().computedChecksum());
            assertThat(full.endPosition()).as(at).isEqualTo(start);

            // Checked headers (recovery's and the offload's walk): the same verdict as whole records.
            Outcome<RecordHeader> checked = checkedOnly(flipped, at);
            assertThat(checked.items()).as(at).hasSize(victim);
            for (int i = 0; i < victim; i++) {
                assertThat(checked.items().get(i).offset()).as(at).isEqualTo(before.get(i).offset());
                assertThat(checked.positions().get(i)).as(at).isEqualTo(f.boundaries[i]);
            }
            assertThat(checked.failure()).as(at).isNotNull();
            assertThat(checked.failure().kind()).as(at).isEqualTo(expected);
            assertThat(checked.failure().site()).as(at).isEqualTo(full.failure().site());
            assertThat(checked.failure().storedChecksum()).as(at).isEqualTo(full.failure().storedChecksum());
            assertThat(checked.failure().computedChecksum()).as(at).isEqualTo(full.failure().computedChecksum());
            assertThat(checked.endPosition()).as(at).isEqualTo(start);

            Outcome<RecordHeader> quick = headersOnly(flipped, at);
            if (inRecord < RecordCodec.CHECKSUM_OFFSET) {
                assertThat(quick.items()).as(at).hasSize(victim);
                assertThat(quick.failure()).as(at).isNotNull();
                assertThat(quick.failure().kind()).as(at).isEqualTo(CorruptionKind.RECORD_HEADER_CHECKSUM);
                assertThat(quick.failure().site().position()).as(at).isEqualTo(start);
            } else {
                // Headers only: the record checksum is not verified, so the walk goes on, same steps.
                assertThat(quick.failure()).as(at).isNull();
                assertThat(quick.items()).as(at).hasSize(f.records.size());
                for (int i = 0; i < f.records.size(); i++) {
                    assertThat(quick.positions().get(i)).isEqualTo(f.boundaries[i]);
                    assertThat(quick.items().get(i).offset()).isEqualTo(f.records.get(i).offset());
                    assertThat(quick.items().get(i).kind()).isEqualTo(f.records.get(i).kind());
                }
            }
        }
    }

    @Test
    void everyBitFlipOfTheSegmentHeaderIsRejectedBeforeAnyRecord() throws IOException {
        DamageFixture f = DamageFixture.write(tmp);
        for (int bit = 0; bit < SegmentHeader.LENGTH * 8; bit++) {
            int b = bit / 8;
            String at = "header byte " + b + ", bit " + (bit % 8);
            byte[] flipped = SegmentBytes.flipBit(f.bytes, bit);
            Outcome<Record> full = verify(flipped, at);

            if (b >= SegmentHeader.RESERVED_OFFSET) {
                // reserved: outside the header CRC and not checked; either refused or read exactly.
                if (full.failure() == null) {
                    assertThat(full.items()).as(at).containsExactlyElementsOf(f.records);
                } else {
                    assertThat(full.items()).as(at).isEmpty();
                }
                continue;
            }
            CorruptionKind expected = b < 4 ? CorruptionKind.SEGMENT_MAGIC
                    : b < 6 ? CorruptionKind.SEGMENT_VERSION
                    : b < 8 ? CorruptionKind.SEGMENT_FLAGS
                    : CorruptionKind.SEGMENT_HEADER_CHECKSUM;
            assertThat(full.items()).as(at).isEmpty();
            assertThat(full.failure()).as(at).isNotNull();
            assertThat(full.failure().kind()).as(at + ": " + full.failure().getMessage()).isEqualTo(expected);
            assertThat(full.failure().site()).as(at).isEqualTo(new CorruptionSite(SHARD, 0, 0));
            Outcome<RecordHeader> quick = headersOnly(flipped, at);
            assertThat(quick.failure()).as(at).isNotNull();
            assertThat(quick.failure().kind()).as(at).isEqualTo(expected);
        }
    }

    @Test
    void v3HeaderWhoseVersionBitFlipsTo2IsCaughtByTheHeaderCrc() throws IOException {
        // 3 ^ 1 == 2, a readable version: the CRC, not the version check, must catch it.
        byte[] v3 = SegmentHeader.v3(0, 1).encode();
        byte[] flipped = SegmentBytes.flipBit(v3, 5 * 8);
        assertThat(flipped[5]).isEqualTo((byte) 2);
        Outcome<Record> out = verify(flipped, "v3 -> v2");
        assertThat(out.failure()).isNotNull();
        assertThat(out.failure().kind()).isEqualTo(CorruptionKind.SEGMENT_HEADER_CHECKSUM);
    }
}
