package dev.felix.offload.log.format;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One decoded record: its logical offset, publish time, kind, the batch tag when it opens a batch,
 * and its payload. The payload array is owned by the record; callers must not change it.
 *
 * <p>A record decoded from bytes that never change (a chunk of a remote object, see
 * {@link SegmentSource#buffersStay()}) is a view: its payload is a slice of that array, and it knows
 * where its whole encoding lies in it ({@link #encodedView()}), so a reader can hand the stored
 * bytes on to a response without copying them. Such a record keeps the array it views reachable for
 * as long as it is itself.
 */
public final class Record {

    private final long offset;
    private final long timestampMicros;
    private final RecordKind kind;
    private final BatchTag tag;
    /** The array the payload lies in: the payload alone, or (a view) the bytes it was decoded from. */
    private final byte[] bytes;
    private final int payloadAt;
    private final int payloadLength;
    /** Where the record's encoding starts in {@link #bytes}, for a view; -1 for a record that owns its payload. */
    private final int encodedAt;

    private Record(long offset, long timestampMicros, RecordKind kind, BatchTag tag, byte[] bytes, int payloadAt,
            int payloadLength, int encodedAt) {
        this.offset = offset;
        this.timestampMicros = timestampMicros;
        this.kind = Objects.requireNonNull(kind, "kind");
        this.bytes = Objects.requireNonNull(bytes, "payload");
        Objects.checkFromIndexSize(payloadAt, payloadLength, bytes.length);
        this.payloadAt = payloadAt;
        this.payloadLength = payloadLength;
        this.encodedAt = encodedAt;
        if (kind.hasTag() != (tag != null)) {
            throw new IllegalArgumentException(kind.label() + " record " + (tag == null ? "needs" : "takes no") + " batch tag");
        }
        if (payloadLength > RecordCodec.MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("payload of " + payloadLength + " bytes is over the limit of "
                    + RecordCodec.MAX_PAYLOAD_BYTES);
        }
        if (kind == RecordKind.GENERATION_START && payloadLength != Long.BYTES) {
            throw new IllegalArgumentException("a generation-start payload is the generation as 8 bytes, got " + payloadLength);
        }
        this.tag = tag;
    }

    private Record(long offset, long timestampMicros, RecordKind kind, BatchTag tag, byte[] payload) {
        this(offset, timestampMicros, kind, tag, Objects.requireNonNull(payload, "payload"), 0, payload.length, -1);
    }

    /**
     * A record whose payload and encoding stay where they were decoded: {@code bytes} holds the whole
     * encoded record from {@code encodedAt}, its payload at {@code payloadAt}. The caller promises
     * those bytes never change; the codec calls this only for a source that says so.
     */
    static Record viewOf(long offset, long timestampMicros, RecordKind kind, BatchTag tag, byte[] bytes, int encodedAt,
            int payloadAt, int payloadLength) {
        Objects.checkFromIndexSize(encodedAt, RecordCodec.encodedLength(kind, payloadLength), bytes.length);
        return new Record(offset, timestampMicros, kind, tag, bytes, payloadAt, payloadLength, encodedAt);
    }

    /** Builds a record of any kind; {@code tag} must be present exactly for {@link RecordKind#BATCH_OPEN}. */
    public static Record of(long offset, long timestampMicros, RecordKind kind, BatchTag tag, byte[] payload) {
        return new Record(offset, timestampMicros, kind, tag, payload);
    }

    public static Record plain(long offset, long timestampMicros, byte[] payload) {
        return new Record(offset, timestampMicros, RecordKind.PLAIN, null, payload);
    }

    public static Record batchOpen(long offset, long timestampMicros, BatchTag tag, byte[] payload) {
        return new Record(offset, timestampMicros, RecordKind.BATCH_OPEN, Objects.requireNonNull(tag, "tag"), payload);
    }

    public static Record batchContinue(long offset, long timestampMicros, byte[] payload) {
        return new Record(offset, timestampMicros, RecordKind.BATCH_CONTINUE, null, payload);
    }

    public static Record generationStart(long offset, long timestampMicros, long generation) {
        return new Record(offset, timestampMicros, RecordKind.GENERATION_START, null,
                ByteBuffer.allocate(Long.BYTES).putLong(0, generation).array());
    }

    public long offset() {
        return offset;
    }

    public long timestampMicros() {
        return timestampMicros;
    }

    public RecordKind kind() {
        return kind;
    }

    /** The batch tag of a batch-open record, or null. */
    public BatchTag tag() {
        return tag;
    }

    /**
     * The payload as an array of its own length: the record's own array, or, for a view, a copy (the
     * one copy a caller that needs an array pays; {@link #payloadView()} takes none).
     */
    public byte[] payload() {
        if (payloadAt == 0 && payloadLength == bytes.length) {
            return bytes;
        }
        return Arrays.copyOfRange(bytes, payloadAt, payloadAt + payloadLength);
    }

    /** The payload, read-only and without a copy. */
    public ByteBuffer payloadView() {
        return ByteBuffer.wrap(bytes, payloadAt, payloadLength).slice().asReadOnlyBuffer();
    }

    public int payloadLength() {
        return payloadLength;
    }

    /**
     * The record's bytes exactly as they were stored, read-only and without a copy, for a record
     * decoded as a view (their checksum was verified then); empty for a record built or decoded with
     * a payload of its own, which {@link RecordCodec#encode} must encode.
     */
    public java.util.Optional<ByteBuffer> encodedView() {
        if (encodedAt < 0) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(ByteBuffer.wrap(bytes, encodedAt, encodedLength()).slice().asReadOnlyBuffer());
    }

    /** The generation a generation-start record announces. */
    public long generation() {
        if (kind != RecordKind.GENERATION_START) {
            throw new IllegalStateException("a " + kind.label() + " record carries no generation");
        }
        return ByteBuffer.wrap(bytes).getLong(payloadAt);
    }

    /** Bytes this record takes in a segment: header, tag when present, payload. */
    public int encodedLength() {
        return RecordCodec.encodedLength(kind, payloadLength);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Record r && offset == r.offset && timestampMicros == r.timestampMicros
                && kind == r.kind && Objects.equals(tag, r.tag) && Arrays.equals(bytes, payloadAt, payloadAt + payloadLength,
                r.bytes, r.payloadAt, r.payloadAt + r.payloadLength);
    }

    @Override
    public int hashCode() {
        return Objects.hash(offset, timestampMicros, kind, tag, payloadView().hashCode());
    }

    @Override
    public String toString() {
        return "Record{offset=" + offset + ", timestampMicros=" + timestampMicros + ", kind=" + kind.label()
                + (tag != null ? ", tag=" + tag : "") + ", payload=" + payloadLength + " bytes}";
    }
}
