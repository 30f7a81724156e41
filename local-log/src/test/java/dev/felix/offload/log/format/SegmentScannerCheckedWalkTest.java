package dev.felix.offload.log.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.log.SegmentBytes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SegmentScanner#nextChecked()}, the walk recovery and the offload's one pass take: each record
 * verified whole, only its header handed out. It must see what {@link SegmentScanner#nextRecord()}
 * sees and count the same bytes in the valid-bytes CRC (what an upload carries); the bit-flip test
 * holds it to the same verdicts on damage.
 */
class SegmentScannerCheckedWalkTest {

    private static final String SHARD = "walk_0-01";

    @TempDir
    Path tmp;

    @Test
    void aCleanSegmentGivesEveryRecordsHeaderAndTheCrcOfTheWholeFile() throws IOException, CorruptionException {
        DamageFixture f = DamageFixture.write(tmp);
        Path file = SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, f.bytes);
        CRC32 whole = new CRC32();
        whole.update(f.bytes);
        try (SegmentScanner scanner = SegmentScanner.open(file, SHARD, 0, ScanDepth.RECORDS)) {
            for (int i = 0; i < f.records.size(); i++) {
                assertThat(scanner.position()).isEqualTo(f.boundaries[i]);
                RecordHeader h = scanner.nextChecked();
                Record r = f.records.get(i);
                assertThat(h).as("record %d", i).isNotNull();
                assertThat(h.offset()).isEqualTo(r.offset());
                assertThat(h.timestampMicros()).isEqualTo(r.timestampMicros());
                assertThat(h.kind()).isEqualTo(r.kind());
                assertThat(h.payloadLength()).isEqualTo(r.payloadLength());
                assertThat(h.end()).isEqualTo(f.boundaries[i + 1]);
            }
            assertThat(scanner.nextChecked()).isNull();
            assertThat(scanner.recordCount()).isEqualTo(f.records.size());
            assertThat(scanner.validBytesCrc32()).isEqualTo(whole.getValue());
        }
    }

    @Test
    void checkedAndWholeRecordsMixInOneWalk() throws IOException, CorruptionException {
        DamageFixture f = DamageFixture.write(tmp);
        Path file = SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, f.bytes);
        CRC32 whole = new CRC32();
        whole.update(f.bytes);
        try (SegmentScanner scanner = SegmentScanner.open(file, SHARD, 0, ScanDepth.RECORDS)) {
            for (int i = 0; i < f.records.size(); i++) {
                if (i % 2 == 0) {
                    assertThat(scanner.nextChecked().offset()).isEqualTo(f.records.get(i).offset());
                } else {
                    assertThat(scanner.nextRecord()).isEqualTo(f.records.get(i));
                }
            }
            assertThat(scanner.validBytesCrc32()).isEqualTo(whole.getValue());
        }
    }

    @Test
    void aDamagedRecordStopsTheWalkThere() throws IOException, CorruptionException {
        DamageFixture f = DamageFixture.write(tmp);
        int victim = 1;
        // the last byte of record 1: its payload, under the record checksum only
        byte[] damaged = SegmentBytes.flipBit(f.bytes, (int) (f.boundaries[victim + 1] - 1) * 8);
        Path file = SegmentBytes.writeSegment(tmp.resolve(SHARD), 0, damaged);
        try (SegmentScanner scanner = SegmentScanner.open(file, SHARD, 0, ScanDepth.RECORDS)) {
            assertThat(scanner.nextChecked()).isNotNull();
            assertThatThrownBy(scanner::nextChecked).isInstanceOfSatisfying(CorruptionException.class, e -> {
                assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM);
                assertThat(e.site()).isEqualTo(new CorruptionSite(SHARD, 0, f.boundaries[victim]));
            });
            // it stays at the damaged record, as nextRecord does: asked again, the same verdict
            assertThat(scanner.position()).isEqualTo(f.boundaries[victim]);
            assertThatThrownBy(scanner::nextChecked).isInstanceOfSatisfying(CorruptionException.class,
                    e -> assertThat(e.site().position()).isEqualTo(f.boundaries[victim]));
            assertThat(scanner.recordCount()).isEqualTo(1);
        }
    }
}
