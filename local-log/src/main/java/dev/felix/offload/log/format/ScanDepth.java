package dev.felix.offload.log.format;

/**
 * How deep a segment scan reads: every record whole with its checksum verified, or each record's
 * header only, stepping over its body (enough to find record boundaries and offsets).
 */
public enum ScanDepth {
    /** Read every record and verify its checksum: recovery, fsck, offload, reads. */
    RECORDS,
    /** Check each record's header and step over its body: index rebuilds, finding a segment's end. */
    HEADERS;

    /** Whether whole records are read. */
    boolean wholeRecords() {
        return this == RECORDS;
    }
}
