package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records larger than, and straddling, the scanner's read-ahead windows (4 KiB for headers, 256 KiB
 * for whole records): every record reads back exactly, in both modes.
 */
class SegmentScannerLargeRecordsTest {

    @TempDir
    Path tmp;

    @Test
    void recordsStraddlingAndExceedingTheReadWindowsReadBackExactly() throws IOException {
        Random random = new Random(20261129);
        int[] sizes = {100_000, 100_000, 70_000, 300_000, 5, 0, 262_144 - 28, 262_144, 1_000_000, 4_000, 4_097, 1};
        List<Record> records = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            byte[] payload = new byte[sizes[i]];
            random.nextBytes(payload);
            records.add(i % 3 == 1
                    ? Record.batchOpen(50 + i, i, new BatchTag(i, i, 1), payload)
                    : Record.plain(50 + i, i, payload));
        }
        byte[] bytes = SegmentBytes.segment(SegmentHeader.v3(50, 1), records);
        Path file = SegmentBytes.writeSegment(tmp.resolve("big_0-01"), 0, bytes);

        Outcome<Record> full = SegmentBytes.readRecords(file, "big", 0);
        assertThat(full.failure()).isNull();
        assertThat(full.items()).containsExactlyElementsOf(records);
        assertThat(full.endPosition()).isEqualTo(Files.size(file));

        Outcome<RecordHeader> quick = SegmentBytes.readHeaders(file, "big", 0);
        assertThat(quick.failure()).isNull();
        assertThat(quick.positions()).isEqualTo(full.positions());
    }

    @Test
    void damageInsideALargeRecordIsFoundAtItsStart() throws IOException {
        byte[] payload = new byte[600_000];
        new Random(7).nextBytes(payload);
        List<Record> records = List.of(Record.plain(0, 1, new byte[10]), Record.plain(1, 1, payload),
                Record.plain(2, 1, new byte[10]));
        byte[] bytes = SegmentBytes.segment(SegmentHeader.v3(0, 1), records);
        int start = 32 + records.get(0).encodedLength();
        bytes[start + 28 + 500_000] ^= 0x40;
        Path file = SegmentBytes.writeSegment(tmp.resolve("big_0-02"), 0, bytes);

        Outcome<Record> full = SegmentBytes.readRecords(file, "big", 0);
        assertThat(full.items()).containsExactly(records.get(0));
        assertThat(full.failure().kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM);
        assertThat(full.failure().site().position()).isEqualTo(start);
    }
}
