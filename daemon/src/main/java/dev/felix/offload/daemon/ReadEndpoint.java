package dev.felix.offload.daemon;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code GET /read?shard=DIR&from=OFFSET[&max_bytes=N][&max=RECORDS][&format=raw|json]}: a shard's
 * records from an offset, local or from the store below the local base (docs/read-api.md).
 *
 * <p>Raw ({@code Accept: application/octet-stream} or {@code format=raw}) is the records exactly as
 * the segments store them, back to back, each with its own checksums, so a broker decodes and
 * verifies them with its own codec. JSON is one {@code read --json} line per record. Both are bounded
 * by {@code max_bytes} of encoded records, but always hold at least one whole record.
 *
 * <p>The records of one answer are read (and verified) before its status and headers are sent,
 * because the headers say where the next call starts and an error must still be able to change the
 * status; the body is then written record by record. {@link #MAX_MAX_BYTES} bounds what one answer
 * holds in memory, and the read pool bounds how many answers are in flight.
 */
final class ReadEndpoint {

    static final long DEFAULT_MAX_BYTES = 1024 * 1024;
    static final long MAX_MAX_BYTES = 16L * 1024 * 1024;
    /** The most records one answer may be asked for (max_bytes bounds it anyway). */
    static final int MAX_RECORDS = 100_000;
    static final String RAW = "application/octet-stream";
    static final String NDJSON = "application/x-ndjson";
    static final String NEXT_OFFSET = "Felix-Next-Offset";
    static final String LOG_START = "Felix-Log-Start";
    static final String LOCAL_BASE = "Felix-Local-Base";
    static final String LOG_END = "Felix-Log-End";
    static final String NEXT_AVAILABLE = "Felix-Next-Available";
    /** On an answer that stops at a gap in the history: the first and last offset held nowhere. */
    static final String GAP_FIRST = "Felix-Gap-First";
    static final String GAP_LAST = "Felix-Gap-Last";
    private static final String USAGE = "/read?shard=DIR&from=OFFSET[&max_bytes=N][&max=RECORDS][&format=raw|json]";

    private ReadEndpoint() {
    }

    /** The parameters /read takes; any other is a mistake (a misspelt max_bytes would be ignored). */
    static final List<String> PARAMETERS = List.of("shard", "from", "max_bytes", "max", "format");

    /**
     * Why the query is malformed, or null: a parameter given twice (which one would count?), or one
     * /read does not take. Read from the raw query, since {@link StatusServer#query} keeps one value a name.
     */
    static String malformed(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return null;
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String part : rawQuery.split("&")) {
            if (part.isEmpty()) {
                continue;
            }
            int eq = part.indexOf('=');
            String name = java.net.URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            if (!PARAMETERS.contains(name)) {
                return "unknown parameter '" + name + "'; /read takes " + PARAMETERS + ": " + USAGE;
            }
            if (!seen.add(name)) {
                return name + " is given twice: " + USAGE;
            }
        }
        return null;
    }

    static void handle(HttpExchange ex, Daemon daemon) throws IOException {
        String bad = malformed(ex.getRequestURI().getRawQuery());
        if (bad != null) {
            StatusServer.error(ex, 400, "bad_request", bad);
            return;
        }
        Map<String, String> q = StatusServer.query(ex);
        String shard = q.getOrDefault("shard", "");
        if (shard.isEmpty()) { // no shard named is a malformed request; a name the root lacks is a 404 below
            StatusServer.error(ex, 400, "bad_request", "shard is required: " + USAGE);
            return;
        }
        if (!q.containsKey("from")) {
            StatusServer.error(ex, 400, "bad_request", "from is required: " + USAGE);
            return;
        }
        long from;
        try {
            from = Long.parseUnsignedLong(q.get("from"));
        } catch (NumberFormatException e) {
            StatusServer.error(ex, 400, "bad_offset", "from must be an unsigned 64-bit offset, got '" + q.get("from") + "'");
            return;
        }
        long maxBytes = DEFAULT_MAX_BYTES;
        int maxRecords = MAX_RECORDS;
        try {
            if (q.containsKey("max_bytes")) {
                maxBytes = Long.parseLong(q.get("max_bytes"));
            }
            if (q.containsKey("max")) {
                maxRecords = Integer.parseInt(q.get("max"));
            }
        } catch (NumberFormatException e) {
            StatusServer.error(ex, 400, "bad_limit", "max_bytes and max must be whole numbers: " + USAGE);
            return;
        }
        if (maxBytes < 1 || maxBytes > MAX_MAX_BYTES) {
            StatusServer.error(ex, 400, "bad_limit", "max_bytes must be from 1 to " + MAX_MAX_BYTES + ", got " + maxBytes);
            return;
        }
        if (maxRecords < 1 || maxRecords > MAX_RECORDS) {
            StatusServer.error(ex, 400, "bad_limit", "max must be from 1 to " + MAX_RECORDS + ", got " + maxRecords);
            return;
        }
        boolean raw;
        String format = q.get("format");
        if (format == null) {
            String accept = Optional.ofNullable(ex.getRequestHeaders().getFirst("Accept")).orElse("");
            raw = accept.contains(RAW);
        } else if (format.equals("raw") || format.equals("json")) {
            raw = format.equals("raw");
        } else {
            StatusServer.error(ex, 400, "bad_format", "format must be raw or json, got '" + format + "'");
            return;
        }
        Optional<TieredReader> found = daemon.reader(shard);
        if (found.isEmpty()) {
            StatusServer.error(ex, 404, "no_such_shard", "no shard directory '" + shard + "' under the data root");
            return;
        }
        TieredReader reader = found.get();

        List<TieredRead.SourcedRecord> taken = new ArrayList<>();
        long next = from;
        TieredRead.Trimmed trimmed = null;
        TieredRead.Gap gap = null;
        TieredReader.Bounds bounds;
        try {
            long bytes = 0;
            boolean full = false;
            while (!full && taken.size() < maxRecords && bytes < maxBytes) {
                TieredRead r = reader.read(next, maxRecords - taken.size(), taken.isEmpty() ? maxBytes : maxBytes - bytes);
                if (r instanceof TieredRead.Trimmed t) {
                    if (taken.isEmpty()) {
                        trimmed = t;
                    }
                    break;
                }
                if (r instanceof TieredRead.Gap g) {
                    gap = g;
                    break;
                }
                List<TieredRead.SourcedRecord> records = ((TieredRead.Records) r).records();
                if (records.isEmpty()) {
                    break;
                }
                for (TieredRead.SourcedRecord sr : records) {
                    int length = sr.record().encodedLength();
                    // The reader lets a round's first record exceed what is left; only an answer's first may.
                    if (!taken.isEmpty() && bytes + length > maxBytes) {
                        full = true;
                        break;
                    }
                    taken.add(sr);
                    bytes += length;
                    next = sr.record().offset() + 1;
                }
            }
            bounds = reader.bounds(); // after the read, so the end is at or past every record taken
        } catch (CorruptionException e) {
            CorruptionSite site = e.site();
            if (e.kind() == dev.felix.offload.log.format.CorruptionKind.OBJECT_MISMATCH) {
                daemon.objectMismatch(shard, e);
            }
            StatusServer.error(ex, 500, "corrupt", shard + ": " + e.getMessage(), g -> {
                g.writeStringField("kind", e.kind().specName());
                g.writeStringField("file", site.file());
                g.writeNumberField("position", site.position());
            });
            return;
        } catch (StoreException e) {
            StatusServer.error(ex, 502, "store_error", e.getMessage(),
                    g -> g.writeStringField("kind", DaemonMetrics.kindOf(e)));
            return;
        }

        Headers h = ex.getResponseHeaders();
        header(h, LOG_START, bounds.logStart());
        header(h, LOCAL_BASE, bounds.localBase());
        header(h, LOG_END, bounds.logEnd());
        if (gap != null) {
            TieredRead.Gap hole = gap;
            h.set(NEXT_AVAILABLE, Long.toUnsignedString(hole.nextAvailable()));
            h.set(GAP_FIRST, Long.toUnsignedString(hole.firstMissing()));
            h.set(GAP_LAST, Long.toUnsignedString(hole.lastMissing()));
            if (taken.isEmpty()) {
                StatusServer.error(ex, 416, "gap", "offsets " + Long.toUnsignedString(hole.firstMissing()) + ".."
                        + Long.toUnsignedString(hole.lastMissing()) + " are held nowhere (a gap in the shard's history); "
                        + "the next offset held is " + Long.toUnsignedString(hole.nextAvailable()), g -> {
                            Json.u64(g, "first_missing", hole.firstMissing());
                            Json.u64(g, "last_missing", hole.lastMissing());
                            Json.u64(g, "next_available", hole.nextAvailable());
                        });
                return;
            }
        }
        if (trimmed != null) {
            long available = trimmed.nextAvailable();
            h.set(NEXT_AVAILABLE, Long.toUnsignedString(available));
            StatusServer.error(ex, 416, "trimmed", "offset " + Long.toUnsignedString(from)
                    + " is not held; the next offset held is " + Long.toUnsignedString(available), g -> {
                        Json.u64(g, "offset", from);
                        Json.u64(g, "next_available", available);
                    });
            return;
        }
        if (taken.isEmpty() && bounds.logEnd().isPresent()
                && Long.compareUnsigned(from, bounds.logEnd().getAsLong()) > 0) {
            long logEnd = bounds.logEnd().getAsLong();
            StatusServer.error(ex, 416, "beyond_log_end", "offset " + Long.toUnsignedString(from)
                    + " is past the end of the log at " + Long.toUnsignedString(logEnd), g -> {
                        Json.u64(g, "offset", from);
                        Json.u64(g, "log_end", logEnd);
                    });
            return;
        }
        h.set(NEXT_OFFSET, Long.toUnsignedString(next));
        h.set("Content-Type", raw ? RAW : NDJSON);
        boolean head = "HEAD".equals(ex.getRequestMethod());
        if (taken.isEmpty() || head) {
            ex.sendResponseHeaders(200, -1); // caught up (or HEAD): the headers say where the log stands
            return;
        }
        ex.sendResponseHeaders(200, 0); // chunked: written record by record
        try (OutputStream body = new BufferedOutputStream(ex.getResponseBody(), 64 * 1024)) {
            if (raw) {
                for (int i = 0; i < taken.size(); i++) {
                    Record r = taken.get(i).record();
                    taken.set(i, null); // let each record go once written
                    RecordCodec.writeTo(r, body); // a remote record's stored bytes, not a copy
                }
            } else {
                PrintWriter out = new PrintWriter(new OutputStreamWriter(body, StandardCharsets.UTF_8));
                for (int i = 0; i < taken.size(); i++) {
                    TieredRead.SourcedRecord sr = taken.get(i);
                    taken.set(i, null);
                    RecordLines.json(out, sr.record(), -1, sr.remote() ? "remote" : "local");
                }
                out.flush();
            }
        }
    }

    private static void header(Headers h, String name, OptionalLong value) {
        if (value.isPresent()) {
            h.set(name, Long.toUnsignedString(value.getAsLong()));
        }
    }
}
