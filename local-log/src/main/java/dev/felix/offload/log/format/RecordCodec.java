package dev.felix.offload.log.format;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * Encodes and decodes records.
 *
 * <pre>
 *  offset      size  field
 *   0          4     payload_len       low 29 bits: payload bytes, at most MAX_PAYLOAD_BYTES (64 MiB)
 *                                      bit 31 batch-open, bit 30 batch-continue,
 *                                      bit 29 generation-start; at most one may be set
 *   4          8     offset            logical offset; +1 per record within a segment
 *  12          8     timestamp_micros  publish time
 *  20          4     header_crc        CRC-32 over bytes 0..20
 *  24          4     checksum          CRC-32 over bytes 0..24, then the tag, then the payload
 *  28          20    tag               only with bit 31: producer_id u64, sequence u64, len u32
 *  28 or 48    n     payload           opaque bytes
 * </pre>
 *
 * <p>The header CRC is checked before any other header field is used, so a length is only acted on
 * once it is known to be intact; the length limit is checked before anything is allocated. The step
 * to the next record, {@code 28 + (20 if batch-open) + n}, comes from the header alone.
 */
public final class RecordCodec {

    /** The largest payload a record may carry: 64 MiB. */
    public static final int MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

    public static final int PAYLOAD_LEN_OFFSET = 0;
    public static final int PAYLOAD_LEN_LENGTH = 4;
    public static final int OFFSET_OFFSET = PAYLOAD_LEN_OFFSET + PAYLOAD_LEN_LENGTH;
    public static final int OFFSET_LENGTH = 8;
    public static final int TIMESTAMP_OFFSET = OFFSET_OFFSET + OFFSET_LENGTH;
    public static final int TIMESTAMP_LENGTH = 8;
    public static final int HEADER_CRC_OFFSET = TIMESTAMP_OFFSET + TIMESTAMP_LENGTH;
    public static final int HEADER_CRC_LENGTH = 4;
    public static final int CHECKSUM_OFFSET = HEADER_CRC_OFFSET + HEADER_CRC_LENGTH;
    public static final int CHECKSUM_LENGTH = 4;
    /** A record header without tag; also where the tag (or the payload) starts. */
    public static final int HEADER_LENGTH = CHECKSUM_OFFSET + CHECKSUM_LENGTH;
    public static final int TAG_OFFSET = HEADER_LENGTH;
    /** The longest header: with a batch tag. */
    public static final int MAX_HEADER_LENGTH = TAG_OFFSET + BatchTag.LENGTH;

    /** The three kind bits of {@code payload_len}. */
    public static final int KIND_BITS_MASK = 0xE000_0000;
    /** The length bits of {@code payload_len}. */
    public static final int LENGTH_MASK = ~KIND_BITS_MASK;

    private RecordCodec() {
    }

    /** Bytes a record of this kind and payload length takes in a segment. */
    public static int encodedLength(RecordKind kind, int payloadLength) {
        return HEADER_LENGTH + (kind.hasTag() ? BatchTag.LENGTH : 0) + payloadLength;
    }

    /** The record's bytes, exactly as stored in a segment. */
    public static byte[] encode(Record record) {
        ByteBuffer buf = ByteBuffer.allocate(record.encodedLength());
        encodeInto(record, buf);
        return buf.array();
    }

    /**
     * Writes the record's bytes, exactly as stored in a segment, to {@code out}: a view's stored bytes
     * as they are (verified when decoded), anything else encoded first.
     */
    public static void writeTo(Record record, java.io.OutputStream out) throws java.io.IOException {
        java.util.Optional<ByteBuffer> stored = record.encodedView();
        if (stored.isPresent()) {
            ByteBuffer b = stored.get();
            if (b.hasArray()) {
                out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
            } else {
                java.nio.channels.Channels.newChannel(out).write(b);
            }
            return;
        }
        out.write(encode(record));
    }

    /** Writes the record's bytes at {@code buf}'s position and advances it. */
    public static void encodeInto(Record record, ByteBuffer buf) {
        int start = buf.position();
        java.util.Optional<ByteBuffer> stored = record.encodedView();
        if (stored.isPresent()) {
            buf.put(stored.get());
            return;
        }
        ByteBuffer payload = record.payloadView();
        buf.putInt(start + PAYLOAD_LEN_OFFSET, payload.remaining() | record.kind().bit());
        buf.putLong(start + OFFSET_OFFSET, record.offset());
        buf.putLong(start + TIMESTAMP_OFFSET, record.timestampMicros());
        buf.putInt(start + HEADER_CRC_OFFSET, Crc32s.of(buf, start, HEADER_CRC_OFFSET));
        buf.position(start + HEADER_LENGTH);
        BatchTag tag = record.tag();
        if (tag != null) {
            buf.putLong(tag.producerId()).putLong(tag.sequence()).putInt((int) tag.recordCount());
        }
        buf.put(payload);
        int end = buf.position();
        CRC32 crc = new CRC32();
        crc.update(buf.duplicate().position(start).limit(start + CHECKSUM_OFFSET));
        crc.update(buf.duplicate().position(start + HEADER_LENGTH).limit(end));
        buf.putInt(start + CHECKSUM_OFFSET, (int) crc.getValue());
    }

    /**
     * Decodes and checks a record header from the bytes at {@code bytes}' position: at least
     * {@link #HEADER_LENGTH}, plus the tag's 20 when they are there. Checks, in order: the header
     * CRC (RecordHeaderChecksum), the kind bits (RecordFlags: two or more set, or a kind the segment
     * version cannot hold, or a generation-start whose payload is not 8 bytes), the length limit
     * (RecordTooLarge), and for a batch-open record that the
     * tag's bytes were given (Truncated). It does not check the offset or the record checksum.
     *
     * <p>A mark in a v2 segment, or a generation-start record in a v2 or v3 segment, is reported as
     * {@code RecordFlags}: the bits are flag bits this segment version cannot carry, and the header CRC
     * proves they were written that way, so this is not a torn write and is never repaired. (A build of
     * the older version would have read the bits as a length past the limit; this reader knows better.)
     *
     * @param bytes          the header bytes (not consumed)
     * @param position       the record's byte position in the segment, for the result and errors
     * @param segmentVersion the version of the segment the record lives in
     * @param site           names the file; errors are reported at {@code position}
     */
    public static RecordHeader decodeHeader(ByteBuffer bytes, long position, int segmentVersion,
                                            CorruptionSite site) throws CorruptionException {
        RecordHeader h = decodePrefix(bytes, position, segmentVersion, site);
        if (!h.kind().hasTag()) {
            return h;
        }
        if (bytes.remaining() < MAX_HEADER_LENGTH) {
            throw CorruptionException.truncated(site.at(position), "batch-open record", h.totalLength(),
                    bytes.remaining());
        }
        return withTag(h, bytes);
    }

    /**
     * Like {@link #decodeHeader} but without reading a batch-open record's tag: the result's
     * {@code tag} is null even for batch-open, so {@link RecordHeader#totalLength()} is known from the
     * first 28 bytes. A scanner uses it to check the offset before it asks for the tag's bytes, so a
     * wrong offset is reported as such even when the file ends inside the tag.
     */
    public static RecordHeader decodePrefix(ByteBuffer bytes, long position, int segmentVersion,
                                            CorruptionSite site) throws CorruptionException {
        int p = bytes.position();
        int available = bytes.remaining();
        if (available < HEADER_LENGTH) {
            throw CorruptionException.truncated(site.at(position), "record header", HEADER_LENGTH, available);
        }
        int storedHeaderCrc = bytes.getInt(p + HEADER_CRC_OFFSET);
        int computedHeaderCrc = Crc32s.of(bytes, p, HEADER_CRC_OFFSET);
        if (storedHeaderCrc != computedHeaderCrc) {
            throw CorruptionException.checksum(CorruptionKind.RECORD_HEADER_CHECKSUM, site.at(position), "record header",
                    storedHeaderCrc, computedHeaderCrc);
        }
        int lenField = bytes.getInt(p + PAYLOAD_LEN_OFFSET);
        RecordKind kind = kindOf(lenField, site, position);
        if (kind.minimumSegmentVersion() > segmentVersion) {
            throw CorruptionException.of(CorruptionKind.RECORD_FLAGS, site.at(position), "a " + kind.label()
                    + " record needs a segment of version " + kind.minimumSegmentVersion()
                    + " or later; this segment is version " + segmentVersion);
        }
        int payloadLength = lenField & LENGTH_MASK;
        if (payloadLength > MAX_PAYLOAD_BYTES) {
            throw CorruptionException.of(CorruptionKind.RECORD_TOO_LARGE, site.at(position), "payload_len " + payloadLength
                    + " is over the limit of " + MAX_PAYLOAD_BYTES);
        }
        if (kind == RecordKind.GENERATION_START && payloadLength != Long.BYTES) {
            // Verified by the header CRC, so written this way: not a torn write, and not a valid record.
            throw CorruptionException.of(CorruptionKind.RECORD_FLAGS, site.at(position),
                    "generation-start record with a payload of " + payloadLength + " bytes, expected 8");
        }
        return new RecordHeader(position, kind, bytes.getLong(p + OFFSET_OFFSET), bytes.getLong(p + TIMESTAMP_OFFSET),
                payloadLength, bytes.getInt(p + CHECKSUM_OFFSET), null);
    }

    /**
     * Adds the batch tag to a header from {@link #decodePrefix}; {@code bytes} starts at the record and
     * holds at least {@link #MAX_HEADER_LENGTH} bytes.
     */
    public static RecordHeader withTag(RecordHeader prefix, ByteBuffer bytes) {
        int t = bytes.position() + TAG_OFFSET;
        BatchTag tag = new BatchTag(bytes.getLong(t + BatchTag.PRODUCER_ID_OFFSET), bytes.getLong(t + BatchTag.SEQUENCE_OFFSET),
                Integer.toUnsignedLong(bytes.getInt(t + BatchTag.RECORD_COUNT_OFFSET)));
        return new RecordHeader(prefix.position(), prefix.kind(), prefix.offset(), prefix.timestampMicros(),
                prefix.payloadLength(), prefix.storedChecksum(), tag);
    }

    private static RecordKind kindOf(int lenField, CorruptionSite site, long position) throws CorruptionException {
        int bits = lenField & KIND_BITS_MASK;
        if (bits == 0) {
            return RecordKind.PLAIN;
        }
        for (RecordKind kind : RecordKind.values()) {
            if (kind.bit() == bits) {
                return kind;
            }
        }
        throw CorruptionException.of(CorruptionKind.RECORD_FLAGS, site.at(position),
                String.format("payload_len 0x%08x sets more than one kind bit", lenField));
    }

    /**
     * Verifies the record checksum and builds the record. {@code record} holds the whole record
     * (header, tag, payload) from its position to its limit, exactly {@code header.totalLength()} bytes.
     */
    public static Record decodeBody(RecordHeader header, ByteBuffer record, CorruptionSite site)
            throws CorruptionException {
        return decodeBody(header, record, site, false);
    }

    /**
     * As {@link #decodeBody(RecordHeader, ByteBuffer, CorruptionSite)}; where {@code stays} (the caller's
     * word that {@code record}'s bytes never change) and they lie in a writable heap array, the record
     * is a view of them ({@link Record#encodedView()}) rather than a copy of its payload.
     */
    public static Record decodeBody(RecordHeader header, ByteBuffer record, CorruptionSite site, boolean stays)
            throws CorruptionException {
        verifyBody(header, record, site);
        int p = record.position();
        if (stays && record.hasArray()) {
            int at = record.arrayOffset() + p;
            return Record.viewOf(header.offset(), header.timestampMicros(), header.kind(), header.tag(), record.array(),
                    at, at + header.headerLength(), header.payloadLength());
        }
        byte[] payload = new byte[header.payloadLength()];
        record.get(p + header.headerLength(), payload);
        return Record.of(header.offset(), header.timestampMicros(), header.kind(), header.tag(), payload);
    }

    /**
     * Checks a whole record's bytes ({@code record}'s remaining bytes, from its first header byte)
     * against the checksum its header stores, without copying or keeping any of them; the buffer's
     * position and limit are left as they were.
     *
     * @throws CorruptionException {@link CorruptionKind#RECORD_CHECKSUM}, both values printed
     */
    public static void verifyBody(RecordHeader header, ByteBuffer record, CorruptionSite site)
            throws CorruptionException {
        int p = record.position();
        if (record.remaining() != header.totalLength()) {
            throw new IllegalArgumentException("expected " + header.totalLength() + " record bytes, got "
                    + record.remaining());
        }
        CRC32 crc = new CRC32();
        Crc32s.update(crc, record, p, CHECKSUM_OFFSET);
        Crc32s.update(crc, record, p + HEADER_LENGTH, header.totalLength() - HEADER_LENGTH);
        int computed = (int) crc.getValue();
        if (computed != header.storedChecksum()) {
            throw CorruptionException.checksum(CorruptionKind.RECORD_CHECKSUM, site.at(header.position()), "record "
                    + header.offset(), header.storedChecksum(), computed);
        }
    }
}
