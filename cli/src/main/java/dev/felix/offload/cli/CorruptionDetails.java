package dev.felix.offload.cli;

import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;

import java.io.IOException;

/** The values a corruption carries, as JSON fields: needed/available, stored/computed, and a message. */
final class CorruptionDetails {

    private CorruptionDetails() {
    }

    /** The values and the full message. */
    static void write(JsonGenerator g, CorruptionException e) throws IOException {
        writeValues(g, e);
        g.writeStringField("message", e.getMessage());
    }

    /** needed/available for Truncated, stored/computed CRC-32 for the checksum kinds. */
    static void writeValues(JsonGenerator g, CorruptionException e) throws IOException {
        if (e.kind() == CorruptionKind.TRUNCATED) {
            g.writeNumberField("needed", e.needed());
            g.writeNumberField("available", e.available());
        } else if (e.kind().isChecksum()) {
            g.writeStringField("stored_crc32", Json.crc32(e.storedChecksum()));
            g.writeStringField("computed_crc32", Json.crc32(e.computedChecksum()));
        }
    }
}
