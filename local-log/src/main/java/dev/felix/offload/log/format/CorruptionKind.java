package dev.felix.offload.log.format;

/**
 * What a reader found wrong with bytes on disk. The first twelve are exactly the kinds the Felix
 * Durable Segment Format v4 names for segments and indexes ("Compatibility and corruption
 * behaviour"). The spec names no kinds for a shard's other files (the manifest and the side files),
 * so the next group, prefixed {@code SideFile}, covers those; {@link #TRUNCATED} is shared by all.
 * {@link #OBJECT_MISMATCH} is a reader of offloaded copies' finding.
 * {@link #specName()} is the spelling every machine-readable output uses (for example
 * {@code RecordChecksum}).
 */
public enum CorruptionKind {
    /** The segment file does not start with {@code FLSG}. */
    SEGMENT_MAGIC("SegmentMagic"),
    /** The index file does not start with {@code FLSI}. */
    INDEX_MAGIC("IndexMagic"),
    /** A segment version this reader does not know (only 2, 3 and 4 are read). */
    SEGMENT_VERSION("SegmentVersion"),
    /** An index version this reader does not know (only 2, 3 and 4 are read). */
    INDEX_VERSION("IndexVersion"),
    /** Non-zero header flags, in a segment or an index; unknown bits are never masked off. */
    SEGMENT_FLAGS("SegmentFlags"),
    /** The segment header's CRC-32 does not match bytes 0..24. */
    SEGMENT_HEADER_CHECKSUM("SegmentHeaderChecksum"),
    /** A short read: the file ends before the bytes a verified length promised. */
    TRUNCATED("Truncated"),
    /** A record header's CRC-32 does not match; its length cannot be trusted. */
    RECORD_HEADER_CHECKSUM("RecordHeaderChecksum"),
    /** A record's CRC-32 over header prefix, tag and payload does not match. */
    RECORD_CHECKSUM("RecordChecksum"),
    /** The record's kind bits are not allowed: two or more set, or a kind the segment version cannot hold. */
    RECORD_FLAGS("RecordFlags"),
    /** A verified header carries a payload length over {@link RecordCodec#MAX_PAYLOAD_BYTES}. */
    RECORD_TOO_LARGE("RecordTooLarge"),
    /** Offsets are not contiguous where they must be. */
    OFFSET_OUT_OF_ORDER("OffsetOutOfOrder"),

    // Not in the segment table: a shard's other files (offload.manifest, epochs, replica, ...).

    /** A side file does not start with its magic. */
    SIDE_FILE_MAGIC("SideFileMagic"),
    /** A side file version this reader does not know. */
    SIDE_FILE_VERSION("SideFileVersion"),
    /** A side file's CRC does not match its bytes. */
    SIDE_FILE_CHECKSUM("SideFileChecksum"),
    /** A side file decodes but breaks a rule of its layout: a bound, an order, trailing bytes, bad UTF-8. */
    SIDE_FILE_CONTENT("SideFileContent"),

    // Not about a file's layout: a copy elsewhere that is not the one its record names.

    /**
     * A copy of a segment (an object in a store) is not the one its manifest entry names: another
     * size, or another CRC-32 of its bytes, than the entry records. Its records may each pass their
     * own checksums (another root's history at the same key, say); none of them is served.
     */
    OBJECT_MISMATCH("ObjectMismatch");

    private final String specName;

    CorruptionKind(String specName) {
        this.specName = specName;
    }

    /** The spec's name of this kind, as printed in JSON output. */
    public String specName() {
        return specName;
    }

    /** True for the kinds of the spec's segment and index table. */
    public boolean isSegmentFormatKind() {
        return ordinal() <= OFFSET_OUT_OF_ORDER.ordinal();
    }

    /** True for the kinds that carry a stored and a computed checksum. */
    public boolean isChecksum() {
        return this == SEGMENT_HEADER_CHECKSUM || this == RECORD_HEADER_CHECKSUM || this == RECORD_CHECKSUM
                || this == SIDE_FILE_CHECKSUM;
    }

    @Override
    public String toString() {
        return specName;
    }
}
