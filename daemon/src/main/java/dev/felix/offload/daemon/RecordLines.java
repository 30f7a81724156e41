package dev.felix.offload.daemon;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordKind;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Base64;

/**
 * One record per line, as {@code dump} and {@code read} print them. The JSON form is a contract:
 * {@code offset}, {@code timestamp_micros}, {@code kind}, {@code position} (when known),
 * {@code payload_base64}, plus {@code producer_id}, {@code sequence}, {@code batch_len} on batch-open
 * and {@code generation} on generation-start, and {@code source} where a read says where it came from.
 */
public final class RecordLines {

    private static final Base64.Encoder BASE64 = Base64.getEncoder();

    private RecordLines() {
    }

    /** @param position the byte position, or -1 to leave it out; @param source local/remote, or null */
    public static void json(PrintWriter out, Record r, long position, String source) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            Json.u64(g, "offset", r.offset());
            Json.u64(g, "timestamp_micros", r.timestampMicros());
            g.writeStringField("kind", r.kind().label());
            if (position >= 0) {
                g.writeNumberField("position", position);
            }
            g.writeStringField("payload_base64", base64(r));
            if (r.kind() == RecordKind.BATCH_OPEN) {
                Json.u64(g, "producer_id", r.tag().producerId());
                Json.u64(g, "sequence", r.tag().sequence());
                g.writeNumberField("batch_len", r.tag().recordCount());
            } else if (r.kind() == RecordKind.GENERATION_START) {
                Json.u64(g, "generation", r.generation());
            }
            if (source != null) {
                g.writeStringField("source", source);
            }
            g.writeEndObject();
        }
        out.println();
    }

    public static void text(PrintWriter out, Record r, long position, String source) {
        StringBuilder line = new StringBuilder()
                .append("offset=").append(Long.toUnsignedString(r.offset()))
                .append(" timestamp_micros=").append(Long.toUnsignedString(r.timestampMicros()))
                .append(" kind=").append(r.kind().label());
        if (position >= 0) {
            line.append(" position=").append(position);
        }
        line.append(" payload_len=").append(r.payloadLength());
        if (r.kind() == RecordKind.BATCH_OPEN) {
            line.append(" producer_id=").append(Long.toUnsignedString(r.tag().producerId()))
                    .append(" sequence=").append(Long.toUnsignedString(r.tag().sequence()))
                    .append(" batch_len=").append(r.tag().recordCount());
        } else if (r.kind() == RecordKind.GENERATION_START) {
            line.append(" generation=").append(Long.toUnsignedString(r.generation()));
        }
        if (source != null) {
            line.append(" source=").append(source);
        }
        line.append(" payload_base64=").append(base64(r));
        out.println(line);
    }

    /** The payload in base64, encoded from the record's bytes where they lie (no copy of a view's payload). */
    private static String base64(Record r) {
        java.nio.ByteBuffer b = BASE64.encode(r.payloadView());
        return new String(b.array(), b.arrayOffset() + b.position(), b.remaining(), java.nio.charset.StandardCharsets.US_ASCII);
    }
}
