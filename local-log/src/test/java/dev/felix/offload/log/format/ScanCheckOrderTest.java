package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import static dev.felix.offload.log.SegmentBytes.concat;
import static dev.felix.offload.log.SegmentBytes.rawRecord;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order of the per-record checks when more than one fails: a record whose verified header carries
 * the wrong offset, in a file that ends inside that record. The offset is checked before the file is
 * asked to hold the whole record (SegmentScanner's class comment lists the checks in that order, and
 * the independent implementation, gen_golden.py's scan_segment, does the same), so the answer is
 * OffsetOutOfOrder wherever the file ends. The kind matters: Truncated is repaired by default,
 * OffsetOutOfOrder only with repairChecksumTail.
 *
 * <p>{@link #wrongOffsetInABatchOpenTornInsideItsTagIsOffsetOutOfOrder} is EXPECTED TO FAIL against the
 * current main code (RecordCodec.decodeHeader raises Truncated for a torn tag before the scanner checks
 * the offset).
 */
class ScanCheckOrderTest {

    private static final String SHARD = "order_0-01";
    private static final byte[] PAYLOAD = "payload".getBytes(StandardCharsets.UTF_8);
    private static final byte[] FIRST = SegmentBytes.plain(0, 1, "abc".getBytes(StandardCharsets.UTF_8));

    @TempDir
    Path tmp;

    /** Offset 5 where 1 is due; the file keeps {@code keep} bytes of that record. */
    private CorruptionException scanTorn(boolean batchOpen, int keep) throws IOException {
        byte[] wrong = batchOpen
                ? rawRecord(SegmentBytes.BIT_OPEN | PAYLOAD.length, 5, 2, SegmentBytes.tag(42, 1, 2), PAYLOAD)
                : rawRecord(PAYLOAD.length, 5, 2, null, PAYLOAD);
        byte[] bytes = concat(SegmentHeader.v3(0, 1).encode(), FIRST, Arrays.copyOf(wrong, keep));
        Path file = SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, bytes);
        Outcome<Record> full = SegmentBytes.readRecords(file, SHARD, 0);
        assertThat(full.items()).hasSize(1);
        assertThat(full.failure()).isNotNull();
        assertThat(full.failure().site().position()).isEqualTo(32 + FIRST.length);
        return full.failure();
    }

    @ParameterizedTest(name = "batch-open={0}, file ends {1} bytes into the record")
    @CsvSource({"false, 31", "true, 52", "false, 28", "true, 48"})
    void wrongOffsetInARecordTornInsideItsPayloadIsOffsetOutOfOrder(boolean batchOpen, int keep) throws IOException {
        CorruptionException e = scanTorn(batchOpen, keep);
        assertThat(e.kind()).as(e.getMessage()).isEqualTo(CorruptionKind.OFFSET_OUT_OF_ORDER);
    }

    @Test
    void wrongOffsetInABatchOpenTornInsideItsTagIsOffsetOutOfOrder() throws IOException {
        CorruptionException e = scanTorn(true, 33);
        assertThat(e.kind()).as(e.getMessage()).isEqualTo(CorruptionKind.OFFSET_OUT_OF_ORDER);
    }
}
