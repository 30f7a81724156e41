package dev.felix.offload.log.format;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One decoded record: its logical offset, publish time, kind, the batch tag when it opens a batch,
 * and its payload. The payload array is owned by the record; callers must not change it.
 */
public final class Record {

    private final long offset;
    private final long timestampMicros;
    private final RecordKind kind;
    private final BatchTag tag;
    private final byte[] payload;

    private Record(long offset, long timestampMicros, RecordKind kind, BatchTag tag, byte[] payload) {
        this.offset = offset;
        this.timestampMicros = timestampMicros;
        this.kind = Objects.requireNonNull(kind, "kind");
        this.payload = Objects.requireNonNull(payload, "payload");
        if (kind.hasTag() != (tag != null)) {
            throw new IllegalArgumentException(kind.label() + " record " + (tag == null ? "needs" : "takes no") + " batch tag");
        }
        if (payload.length > RecordCodec.MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("payload of " + payload.length + " bytes is over the limit of "
                    + RecordCodec.MAX_PAYLOAD_BYTES);
        }
        if (kind == RecordKind.GENERATION_START && payload.length != Long.BYTES) {
            throw new IllegalArgumentException("a generation-start payload is the generation as 8 bytes, got " + payload.length);
        }
        this.tag = tag;
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

    public byte[] payload() {
        return payload;
    }

    /** The generation a generation-start record announces. */
    public long generation() {
        if (kind != RecordKind.GENERATION_START) {
            throw new IllegalStateException("a " + kind.label() + " record carries no generation");
        }
        return ByteBuffer.wrap(payload).getLong(0);
    }

    /** Bytes this record takes in a segment: header, tag when present, payload. */
    public int encodedLength() {
        return RecordCodec.encodedLength(kind, payload.length);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Record r && offset == r.offset && timestampMicros == r.timestampMicros
                && kind == r.kind && Objects.equals(tag, r.tag) && Arrays.equals(payload, r.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(offset, timestampMicros, kind, tag, Arrays.hashCode(payload));
    }

    @Override
    public String toString() {
        return "Record{offset=" + offset + ", timestampMicros=" + timestampMicros + ", kind=" + kind.label()
                + (tag != null ? ", tag=" + tag : "") + ", payload=" + payload.length + " bytes}";
    }
}
