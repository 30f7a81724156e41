package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/** The scan's CRC-32 of the valid bytes is what an upload of those bytes must carry. */
class SegmentScanCrcTest {

    @Test
    void crcCoversHeaderAndEveryValidRecordAndStopsAtATornTail(@TempDir Path dir) throws Exception {
        SegmentFile file = SegmentFile.in(dir, 0);
        SplittableRandom random = new SplittableRandom(3);
        try (SegmentWriter w = SegmentWriter.create(file, SegmentHeader.v3(0, 9), 512)) {
            for (int i = 0; i < 300; i++) {
                byte[] p = new byte[random.nextInt(2000)];
                random.nextBytes(p);
                w.append(Record.plain(i, i, p));
            }
        }
        byte[] whole = Files.readAllBytes(file.log());
        SegmentScan scan = SegmentScan.of(file.log(), "s", 0, ScanDepth.RECORDS);
        assertThat(scan.isClean()).isTrue();
        assertThat(scan.validBytesCrc32()).isEqualTo(crc(whole, whole.length));

        try (FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.WRITE)) {
            ch.truncate(whole.length - 5);
        }
        SegmentScan torn = SegmentScan.of(file.log(), "s", 0, ScanDepth.RECORDS);
        assertThat(torn.isClean()).isFalse();
        assertThat(torn.validEnd()).isLessThan(whole.length);
        assertThat(torn.validBytesCrc32()).isEqualTo(crc(whole, (int) torn.validEnd()));
        assertThat(SegmentScan.of(file.log(), "s", 0, ScanDepth.HEADERS).validBytesCrc32()).isEqualTo(-1);
    }

    private static long crc(byte[] bytes, int length) {
        CRC32 crc = new CRC32();
        crc.update(Arrays.copyOf(bytes, length));
        return crc.getValue();
    }
}
