package dev.felix.offload.log.format;

/**
 * A record's header (and tag), verified by its header CRC, read without touching the payload.
 * This is what a scan that only needs positions works from.
 *
 * @param position        byte position of the record's first byte in the segment
 * @param kind            the record's kind
 * @param offset          the logical offset
 * @param timestampMicros the publish time
 * @param payloadLength   payload bytes (the low 29 bits of {@code payload_len}), within the limit
 * @param storedChecksum  the record checksum as stored, verified only when the record is read whole
 * @param tag             the batch tag of a batch-open record, or null (also for a batch-open header
 *                        decoded by {@link RecordCodec#decodePrefix}, which does not read it)
 */
public record RecordHeader(long position, RecordKind kind, long offset, long timestampMicros,
                           int payloadLength, int storedChecksum, BatchTag tag) {

    /** Header plus tag: where the payload starts, relative to {@link #position()}. */
    public int headerLength() {
        return RecordCodec.HEADER_LENGTH + (kind.hasTag() ? BatchTag.LENGTH : 0);
    }

    /** Bytes the whole record takes. */
    public int totalLength() {
        return headerLength() + payloadLength;
    }

    /** Byte position just past this record: where the next one starts. */
    public long end() {
        return position + totalLength();
    }
}
