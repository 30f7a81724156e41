package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.Writer;

/** JSON output helpers: one factory, and u64 values written unsigned. */
final class Json {

    static final JsonFactory FACTORY = JsonFactory.builder().build();

    private Json() {
    }

    /** A generator that leaves {@code out} open, so lines can be written one object at a time. */
    static JsonGenerator generator(Writer out) throws IOException {
        JsonGenerator g = FACTORY.createGenerator(out);
        g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        return g;
    }

    /** Writes a u64 field as an unsigned decimal number. */
    static void u64(JsonGenerator g, String field, long value) throws IOException {
        g.writeFieldName(field);
        g.writeNumber(Long.toUnsignedString(value));
    }
}
