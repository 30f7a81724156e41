package dev.felix.offload.log.format;

import dev.felix.offload.log.Golden;
import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import dev.felix.offload.log.TestJson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code golden/segments/*.log} written by the independent Python implementation, scanned with
 * {@link SegmentScanner} and compared field by field with its {@code .expected-dump.jsonl}: in verify
 * mode exactly, and in headers-only mode with the one documented difference that RecordChecksum
 * damage goes unseen there. New fixtures are picked up from the directory listing.
 */
class SegmentGoldenFilesTest {

    private static final String SHARD = "golden-segments";
    private static final long SEGMENT_ID = 0;
    private static final Set<String> KNOWN_KEYS = Set.of("offset", "timestamp_micros", "kind", "position",
            "payload_base64", "producer_id", "sequence", "batch_len", "generation");

    static List<Path> segments() {
        return Golden.files("segments", ".log");
    }

    /** The fixture's expectation: the record lines and, if the file is damaged, the error line. */
    private record Expected(List<Map<String, Object>> records, Map<String, Object> error) {
        static Expected of(Path log) {
            Path dump = log.resolveSibling(Golden.stem(log, ".log") + ".expected-dump.jsonl");
            assertThat(dump).as("every golden segment has a dump").exists();
            List<Map<String, Object>> lines = TestJson.lines(Golden.read(dump));
            Map<String, Object> error = null;
            if (!lines.isEmpty() && lines.get(lines.size() - 1).containsKey("error")) {
                error = lines.remove(lines.size() - 1);
            }
            for (Map<String, Object> line : lines) {
                assertThat(line).as("only the last line may be an error").doesNotContainKey("error");
                assertThat(KNOWN_KEYS).as("dump keys").containsAll(line.keySet());
            }
            return new Expected(lines, error);
        }

        String errorKind() {
            return (String) error.get("error");
        }

        long errorPosition() {
            return ((BigInteger) error.get("position")).longValueExact();
        }
    }

    private static void assertU64(Object json, long actual, String what) {
        assertThat(json).as(what + " in the dump").isInstanceOf(BigInteger.class);
        assertThat(Long.toUnsignedString(actual)).as(what).isEqualTo(json.toString());
    }

    private static void assertHeaderMatches(Map<String, Object> line, RecordHeader h, long position, String at) {
        assertU64(line.get("offset"), h.offset(), at + " offset");
        assertU64(line.get("timestamp_micros"), h.timestampMicros(), at + " timestamp_micros");
        assertThat(h.kind().label()).as(at + " kind").isEqualTo(line.get("kind"));
        assertU64(line.get("position"), position, at + " position");
        assertThat(h.position()).as(at + " header position").isEqualTo(position);
        byte[] payload = Base64.getDecoder().decode((String) line.get("payload_base64"));
        assertThat(h.payloadLength()).as(at + " payload length").isEqualTo(payload.length);
        if (h.kind() == RecordKind.BATCH_OPEN) {
            assertThat(h.tag()).isNotNull();
            assertU64(line.get("producer_id"), h.tag().producerId(), at + " producer_id");
            assertU64(line.get("sequence"), h.tag().sequence(), at + " sequence");
            assertU64(line.get("batch_len"), h.tag().recordCount(), at + " batch_len");
        } else {
            assertThat(h.tag()).as(at + " tag").isNull();
            assertThat(line).doesNotContainKeys("producer_id", "sequence", "batch_len");
        }
        if (h.kind() != RecordKind.GENERATION_START) {
            assertThat(line).doesNotContainKey("generation");
        }
    }

    private static void assertRecordMatches(Map<String, Object> line, Record r, long position, String at) {
        RecordHeader h = new RecordHeader(position, r.kind(), r.offset(), r.timestampMicros(), r.payload().length, 0,
                r.tag());
        assertHeaderMatches(line, h, position, at);
        assertThat(Base64.getEncoder().encodeToString(r.payload())).as(at + " payload").isEqualTo(line.get("payload_base64"));
        if (r.kind() == RecordKind.GENERATION_START) {
            assertU64(line.get("generation"), r.generation(), at + " generation");
        }
    }

    private static void assertFailure(CorruptionException failure, Expected expected, String mode) {
        assertThat(failure).as(mode + ": expected %s", expected.error).isNotNull();
        assertThat(failure.kind().specName()).as(mode + " error kind (" + failure.getMessage() + ")")
                .isEqualTo(expected.errorKind());
        assertThat(failure.site().position()).as(mode + " error position").isEqualTo(expected.errorPosition());
        assertThat(failure.site().shard()).isEqualTo(SHARD);
        assertThat(failure.site().segmentId()).isEqualTo(SEGMENT_ID);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("segments")
    void verifyModeScanMatchesTheDump(Path log) throws IOException {
        Expected expected = Expected.of(log);
        Outcome<Record> out = SegmentBytes.readRecords(log, SHARD, SEGMENT_ID);

        assertThat(out.items()).as("records before any damage").hasSize(expected.records.size());
        for (int i = 0; i < out.items().size(); i++) {
            assertRecordMatches(expected.records.get(i), out.items().get(i), out.positions().get(i), "record " + i);
        }
        if (expected.error == null) {
            assertThat(out.failure()).as("clean end").isNull();
            assertThat(out.endPosition()).isEqualTo(Files.size(log));
        } else {
            assertFailure(out.failure(), expected, "verify");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("segments")
    void segmentScanSummaryAgreesWithTheDump(Path log) throws IOException {
        Expected expected = Expected.of(log);
        SegmentScan scan = SegmentScan.of(log, SHARD, SEGMENT_ID, ScanDepth.RECORDS);
        assertThat(scan.fileSize()).isEqualTo(Files.size(log));
        assertThat(scan.recordCount()).isEqualTo(expected.records.size());
        if (expected.error == null) {
            assertThat(scan.isClean()).isTrue();
            assertThat(scan.validEnd()).isEqualTo(Files.size(log));
        } else {
            assertFailure(scan.failure(), expected, "SegmentScan");
            if (scan.headerValid()) {
                assertThat(scan.validEnd()).as("valid end is where the damage starts").isEqualTo(expected.errorPosition());
            } else {
                assertThat(scan.validEnd()).isZero();
            }
        }
        if (!expected.records.isEmpty()) {
            Map<String, Object> first = expected.records.get(0);
            Map<String, Object> last = expected.records.get(expected.records.size() - 1);
            assertU64(first.get("timestamp_micros"), scan.oldestTimestamp(), "oldest timestamp");
            assertU64(last.get("timestamp_micros"), scan.newestTimestamp(), "newest timestamp");
            assertThat(Long.toUnsignedString(scan.nextOffset()))
                    .isEqualTo(((BigInteger) last.get("offset")).add(BigInteger.ONE).toString());
        } else if (scan.headerValid()) {
            assertThat(scan.nextOffset()).isEqualTo(scan.baseOffset());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("segments")
    void headersOnlyScanFindsTheSamePositionsAndErrorsExceptRecordChecksum(Path log) throws IOException {
        Expected expected = Expected.of(log);
        Outcome<RecordHeader> out = SegmentBytes.readHeaders(log, SHARD, SEGMENT_ID);

        boolean checksumOnly = expected.error != null
                && expected.errorKind().equals(CorruptionKind.RECORD_CHECKSUM.specName());
        if (checksumOnly) {
            // The damaged record's header verified: headers-only mode steps over it.
            assertThat(out.items()).hasSizeGreaterThan(expected.records.size());
            assertThat(out.positions().get(expected.records.size())).isEqualTo(expected.errorPosition());
            if (out.failure() != null) {
                assertThat(out.failure().kind()).isNotEqualTo(CorruptionKind.RECORD_CHECKSUM);
            }
        } else {
            assertThat(out.items()).hasSize(expected.records.size());
            if (expected.error == null) {
                assertThat(out.failure()).isNull();
                assertThat(out.endPosition()).isEqualTo(Files.size(log));
            } else {
                assertFailure(out.failure(), expected, "headers-only");
            }
        }
        for (int i = 0; i < expected.records.size(); i++) {
            assertHeaderMatches(expected.records.get(i), out.items().get(i), out.positions().get(i), "header " + i);
        }
    }
}
