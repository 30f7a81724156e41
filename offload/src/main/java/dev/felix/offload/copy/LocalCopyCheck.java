package dev.felix.offload.copy;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.ManifestEntry;

import java.io.IOException;

/**
 * Whether a local segment's valid bytes are exactly what a manifest entry records: the same base
 * offset, the same size and the same CRC32. Only then is the entry's object a copy of the local file,
 * and only then may the local file go. The segment is scanned in full with every record's checksums
 * verified; a segment with any damage never matches.
 *
 * @param matches       true when the local file may be removed in favour of the copy
 * @param localBytes    the segment's valid bytes (0 when its header is damaged)
 * @param localCrc32    their CRC32, or -1 when the scan met damage
 * @param mismatch      why it does not match, or null when it does
 * @param damaged       true when the scan met damage (a record or the header fails its checks);
 *                      {@code localBytes} is then where the first failing record begins
 */
public record LocalCopyCheck(boolean matches, long localBytes, long localCrc32, String mismatch, boolean damaged) {

    /** Scans {@code segment} of shard {@code shard} and compares it with {@code entry}. */
    public static LocalCopyCheck of(String shard, SegmentFile segment, ManifestEntry entry) throws IOException {
        SegmentScan scan = SegmentScan.of(segment.log(), shard, segment.id(), ScanDepth.RECORDS);
        if (!scan.isClean()) {
            return new LocalCopyCheck(false, scan.validEnd(), -1, "segment " + Long.toUnsignedString(segment.id())
                    + " is damaged locally: " + scan.failure().getMessage(), true);
        }
        long crc = scan.validBytesCrc32();
        if (segment.id() != entry.segmentId() || scan.baseOffset() != entry.baseOffset()) {
            return new LocalCopyCheck(false, scan.validEnd(), crc, String.format(
                    "segment %s begins at offset %s, its manifest entry names segment %s at offset %s",
                    Long.toUnsignedString(segment.id()), Long.toUnsignedString(scan.baseOffset()),
                    Long.toUnsignedString(entry.segmentId()), Long.toUnsignedString(entry.baseOffset())), false);
        }
        long recorded = Integer.toUnsignedLong(entry.objectCrc32());
        if (scan.validEnd() != entry.sizeBytes() || crc != recorded) {
            return new LocalCopyCheck(false, scan.validEnd(), crc, String.format(
                    "segment %s holds %d valid bytes with crc32 %08x locally, its manifest entry records %d bytes "
                            + "with crc32 %08x", Long.toUnsignedString(segment.id()), scan.validEnd(), crc,
                    entry.sizeBytes(), recorded), false);
        }
        return new LocalCopyCheck(true, scan.validEnd(), crc, null, false);
    }
}
