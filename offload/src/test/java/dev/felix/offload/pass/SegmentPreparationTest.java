package dev.felix.offload.pass;

import dev.felix.offload.log.format.ScanDepth;
import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.store.BodyDigests;
import dev.felix.offload.store.UploadBody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One read of a segment gives what the separate passes gave before: the scan, the index the
 * header walk builds, and the digests the store takes, each byte read once.
 */
class SegmentPreparationTest {
    @TempDir
    Path tmp;

    /** Sealed segments of records from a few bytes to beyond the scanner's 256 KiB window. */
    private List<SegmentFile> sealedSegments(boolean bigRecords) throws Exception {
        Path dir = tmp.resolve(new ShardKey("acme", "default", "prep" + bigRecords, 0).directoryName());
        SplittableRandom random = new SplittableRandom(7);
        try (ShardLog log = ShardLog.open(dir, TestRoots.SMALL_SEGMENTS.withSegmentSizeBytes(1L << 20))) {
            for (int i = 0; i < 120; i++) {
                byte[] payload = new byte[bigRecords && i % 17 == 0 ? 300_000 + random.nextInt(300_000)
                        : random.nextInt(40_000)];
                random.nextBytes(payload);
                log.append(1000L + i, payload);
            }
        }
        List<SegmentFile> files = SegmentFile.list(dir);
        assertThat(files).hasSizeGreaterThan(2);
        return files.subList(0, files.size() - 1);
    }

    private static void sameScan(SegmentScan got, SegmentScan expected) {
        assertThat(got).usingRecursiveComparison().ignoringFields("failure").isEqualTo(expected);
        assertThat(String.valueOf(got.failure())).isEqualTo(String.valueOf(expected.failure()));
    }

    /**
     * Records below the scanner's 256 KiB window: the file is read once, but for the starts of the
     * records that straddle a window's end, which the scanner reads again with the next window
     * (before, the scan, the index walk, the part CRC32s and the MD5 each read all of it).
     */
    @Test
    void theSegmentIsReadOnceButForTheRecordsThatStraddleAWindow() throws Exception {
        for (SegmentFile f : sealedSegments(false)) {
            long size = Files.size(f.log());
            SegmentPreparation.Prepared p = SegmentPreparation.read(f.log(), "prep", f.id(),
                    SegmentWriter.DEFAULT_INDEX_SPACING_BYTES, java.util.Optional.of(new dev.felix.offload.store.DigestPlan(size, true)));
            assertThat(p.bytesRead()).as("read once, straddling record starts again").isBetween(size, size + size / 5);
            assertThat(p.digests()).isNotNull();
        }
    }

    @Test
    void oneReadGivesTheScanTheIndexAndTheStoresDigests() throws Exception {
        for (SegmentFile f : sealedSegments(true)) {
            long size = Files.size(f.log());
            for (long partSize : new long[] {size, 1_000_000, 262_144}) {
                SegmentPreparation.Prepared p = SegmentPreparation.read(f.log(), "prep", f.id(),
                        SegmentWriter.DEFAULT_INDEX_SPACING_BYTES, java.util.Optional.of(new dev.felix.offload.store.DigestPlan(partSize, true)));
                sameScan(p.scan(), SegmentScan.of(f.log(), "prep", f.id(), ScanDepth.RECORDS));
                assertThat(p.index().encode()).isEqualTo(ShardLog.rebuildIndexOf(f, "prep", size,
                        SegmentWriter.DEFAULT_INDEX_SPACING_BYTES).encode());
                BodyDigests expected = UploadBody.ofFile(f.log()).digests(partSize);
                BodyDigests got = p.digests();
                assertThat(got).isNotNull();
                assertThat(got.partCount()).isEqualTo(expected.partCount());
                assertThat(got.crc32()).isEqualTo(expected.crc32()).isEqualTo(p.scan().validBytesCrc32());
                assertThat(got.partCrc32s()).isEqualTo(expected.partCrc32s());
                for (int i = 0; i < got.partCount(); i++) {
                    assertThat(got.contentMd5(i)).isEqualTo(expected.contentMd5(i));
                }
                assertThat(got.md5Etag(got.partCount() > 1)).isEqualTo(expected.md5Etag(expected.partCount() > 1));

                // a store that sends no MD5 gets the same CRC32s and no MD5s
                BodyDigests crcOnly = SegmentPreparation.read(f.log(), "prep", f.id(),
                        SegmentWriter.DEFAULT_INDEX_SPACING_BYTES,
                        java.util.Optional.of(new dev.felix.offload.store.DigestPlan(partSize, false))).digests();
                assertThat(crcOnly.hasMd5s()).isFalse();
                assertThat(crcOnly.crc32()).isEqualTo(expected.crc32());
                assertThat(crcOnly.partCrc32s()).isEqualTo(expected.partCrc32s());
            }
        }
    }

    @Test
    void withoutAPartSizeNothingIsDigestedAndADamagedSegmentOffersNoDigests() throws Exception {
        SegmentFile f = sealedSegments(true).get(0);
        SegmentPreparation.Prepared none = SegmentPreparation.read(f.log(), "prep", f.id(),
                SegmentWriter.DEFAULT_INDEX_SPACING_BYTES, java.util.Optional.empty());
        assertThat(none.scan().isClean()).isTrue();
        assertThat(none.digests()).isNull();

        byte[] bytes = Files.readAllBytes(f.log());
        bytes[bytes.length - 10] ^= 0x08;
        Files.write(f.log(), bytes);
        SegmentPreparation.Prepared damaged = SegmentPreparation.read(f.log(), "prep", f.id(),
                SegmentWriter.DEFAULT_INDEX_SPACING_BYTES, java.util.Optional.of(new dev.felix.offload.store.DigestPlan(bytes.length, true)));
        assertThat(damaged.scan().isClean()).isFalse();
        sameScan(damaged.scan(), SegmentScan.of(f.log(), "prep", f.id(), ScanDepth.RECORDS));
        assertThat(damaged.digests()).isNull();
    }
}
