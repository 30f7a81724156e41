package dev.felix.offload.log.format;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The outcome of scanning one segment to its end or to its first damage: what is valid, and the
 * corruption that stopped the scan, if any. A scan never throws {@link CorruptionException}; it
 * records it here for {@code RecoveryRules} to judge.
 *
 * @param header          the segment header, or null when the header itself is damaged
 * @param fileSize        the file's size in bytes
 * @param validEnd        byte position just past the last valid record (32 for a valid but empty
 *                        segment, 0 when the header is damaged)
 * @param recordCount     valid records before any damage
 * @param nextOffset      one past the last valid record, or the base offset when there is none
 *                        (0 when the header is damaged)
 * @param oldestTimestamp timestamp_micros of the first valid record, or -1
 * @param newestTimestamp timestamp_micros of the last valid record, or -1 (what the manifest's
 *                        {@code newest} field records, by the spec)
 * @param failure         the corruption that ended the scan, or null when it reached a clean end
 * @param validBytesCrc32 CRC-32 of bytes 0 to {@code validEnd} when records were verified, else -1
 * @param largestTimestamp the largest timestamp_micros among the valid records (unsigned), or -1:
 *                        what time retention judges a segment by, since a clock that stepped back
 *                        leaves the last record older than earlier ones
 */
public record SegmentScan(SegmentHeader header, long fileSize, long validEnd, long recordCount, long nextOffset,
                          long oldestTimestamp, long newestTimestamp, CorruptionException failure,
                          long validBytesCrc32, long largestTimestamp) {

    /**
     * Scans {@code file} from its header to its end.
     *
     * @param depth {@link ScanDepth#RECORDS} to read every record and verify its checksum (recovery,
     *              fsck, offload); {@link ScanDepth#HEADERS} to check headers only (index rebuild)
     */
    public static SegmentScan of(Path file, String shard, long segmentId, ScanDepth depth) throws IOException {
        SegmentScanner scanner;
        try {
            scanner = SegmentScanner.open(file, shard, segmentId, depth);
        } catch (CorruptionException e) {
            long size = java.nio.file.Files.size(file);
            return new SegmentScan(null, size, 0, 0, 0, -1, -1, e, -1, -1);
        }
        try (scanner) {
            Timestamps timestamps = new Timestamps();
            CorruptionException failure = null;
            try {
                while (true) {
                    long ts;
                    if (depth.wholeRecords()) {
                        RecordHeader h = scanner.nextChecked();
                        if (h == null) {
                            break;
                        }
                        ts = h.timestampMicros();
                    } else {
                        RecordHeader h = scanner.nextHeader();
                        if (h == null) {
                            break;
                        }
                        ts = h.timestampMicros();
                    }
                    timestamps.seen(ts, scanner.recordCount());
                }
            } catch (CorruptionException e) {
                failure = e;
            }
            return timestamps.scanOf(scanner, failure, depth.wholeRecords() ? scanner.validBytesCrc32() : -1);
        }
    }

    public boolean isClean() {
        return failure == null;
    }

    public Optional<CorruptionException> failureIfAny() {
        return Optional.ofNullable(failure);
    }

    /** True when the header decoded; records may still be damaged. */
    public boolean headerValid() {
        return header != null;
    }

    /** The base offset from the header; only when {@link #headerValid()}. */
    public long baseOffset() {
        if (header == null) {
            throw new IllegalStateException("segment header is damaged: " + failure.getMessage());
        }
        return header.baseOffset();
    }

    /** Bytes past {@link #validEnd()}: what a tail repair would cut off. */
    public long bytesAfterValid() {
        return fileSize - validEnd;
    }

    /**
     * The timestamps of a scan's records as it reads them in order: the first's, the last's and the
     * largest (unsigned); -1 before any record.
     */
    public static final class Timestamps {
        private long oldest = -1;
        private long newest = -1;
        private long largest = -1;

        /** The scanner has just read a record stamped {@code micros}, its {@code count}th. */
        public void seen(long micros, long count) {
            if (count == 1) {
                oldest = micros;
            }
            newest = micros;
            if (largest == -1 || Long.compareUnsigned(micros, largest) > 0) {
                largest = micros;
            }
        }

        /** What {@code scanner} found so far, with these timestamps. */
        public SegmentScan scanOf(SegmentScanner scanner, CorruptionException failure, long validBytesCrc32) {
            return new SegmentScan(scanner.header(), scanner.fileSize(), scanner.position(), scanner.recordCount(),
                    scanner.nextOffset(), oldest, newest, failure, validBytesCrc32, largest);
        }
    }
}
