package dev.felix.offload.daemon;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.Writer;

/** JSON output helpers: one factory, and u64 values written unsigned. */
public final class Json {

    static final JsonFactory FACTORY = JsonFactory.builder().build();

    private Json() {
    }

    /** A generator that leaves {@code out} open, so lines can be written one object at a time. */
    public static JsonGenerator generator(Writer out) throws IOException {
        JsonGenerator g = FACTORY.createGenerator(out);
        g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        return g;
    }

    /**
     * A CRC-32 as every JSON output writes it: a string of 8 lower-case hex digits, as the text outputs
     * print it (README, "CRC32 notation"), so a value can be compared across outputs by eye or by grep.
     */
    public static String crc32(long crc) {
        return String.format("%08x", crc & 0xFFFF_FFFFL);
    }

    /** Writes a u64 field as an unsigned decimal number. */
    public static void u64(JsonGenerator g, String field, long value) throws IOException {
        g.writeFieldName(field);
        g.writeNumber(Long.toUnsignedString(value));
    }
}
