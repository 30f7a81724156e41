package dev.felix.offload.log.format;

/**
 * What a reader found wrong with segment or index bytes: exactly the kinds named in the Felix
 * Durable Segment Format v4, "Compatibility and corruption behaviour". {@link #specName()} is the
 * spelling the spec and every machine-readable output use (for example {@code RecordChecksum}).
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
    OFFSET_OUT_OF_ORDER("OffsetOutOfOrder");

    private final String specName;

    CorruptionKind(String specName) {
        this.specName = specName;
    }

    /** The spec's name of this kind, as printed in JSON output. */
    public String specName() {
        return specName;
    }

    /** True for the kinds that carry a stored and a computed checksum. */
    public boolean isChecksum() {
        return this == SEGMENT_HEADER_CHECKSUM || this == RECORD_HEADER_CHECKSUM || this == RECORD_CHECKSUM;
    }

    @Override
    public String toString() {
        return specName;
    }
}
