package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.retention.PassOutcome;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.tier.TieredRead;
import dev.felix.offload.tier.TieredReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The daemon's HTTP endpoint (the JDK's server), loopback unless configured otherwise:
 * <ul>
 *   <li>{@code GET /metrics}: every metric in the Prometheus text format;</li>
 *   <li>{@code GET /health}: JSON; 200 when ready (the store answered and the last run of every
 *       pass went well), 503 with the reasons when degraded;</li>
 *   <li>{@code GET /health/live}: 200 while the process serves;</li>
 *   <li>{@code GET /shards}: per-shard JSON: local base, remote range, bytes local and remote,
 *       offload lag, the last offload and retention result;</li>
 *   <li>{@code GET /read?shard=NAME&from=OFFSET[&max=N]}: records as {@code read --json} prints them
 *       (NAME is the shard's name under the root, {@code dead-letters/<dir>} URL-encoded or not),
 *       one JSON object a line, from local disk or the store.</li>
 * </ul>
 * Nothing it shows holds a credential: the store appears by its own description.
 */
final class StatusServer {

    private static final Logger LOG = LoggerFactory.getLogger(StatusServer.class);
    private static final String JSON = "application/json";

    private final HttpServer server;
    private final ExecutorService executor;

    private StatusServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    static StatusServer start(Daemon daemon, String bind, int port) throws IOException {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(bind, port), 16);
        } catch (BindException e) {
            throw new FelixOffload.UsageException(DaemonConfig.HTTP_PORT + ": cannot listen on " + bind + ":" + port
                    + " (" + e.getMessage() + "); choose another http.port or http.bind");
        }
        ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> serve(ex, () -> reply(ex, 200,
                "text/plain; version=0.0.4; charset=utf-8", daemon.metrics().scrape())));
        server.createContext("/health", ex -> serve(ex, () -> health(ex, daemon)));
        server.createContext("/shards", ex -> serve(ex, () -> shards(ex, daemon)));
        server.createContext("/read", ex -> serve(ex, () -> read(ex, daemon)));
        server.createContext("/", ex -> serve(ex, () -> reply(ex, 404, "text/plain; charset=utf-8",
                "not found; try /metrics, /health, /shards or /read\n")));
        server.start();
        StatusServer s = new StatusServer(server, executor);
        LOG.info("serving http://{}:{}/ (metrics, health, shards, read)", bind, s.port());
        return s;
    }

    int port() {
        return server.getAddress().getPort();
    }

    void stop() {
        server.stop(0);
        executor.shutdownNow();
    }

    private interface Handler {
        void handle() throws IOException;
    }

    private static void serve(HttpExchange ex, Handler handler) {
        try (ex) {
            if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
                reply(ex, 405, "text/plain; charset=utf-8", "only GET\n");
                return;
            }
            handler.handle();
        } catch (IOException | RuntimeException e) {
            LOG.warn("{} {} failed: {}", ex.getRequestMethod(), ex.getRequestURI().getPath(), e.toString());
        }
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        boolean head = "HEAD".equals(ex.getRequestMethod());
        ex.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    private interface JsonBody {
        void write(JsonGenerator g) throws IOException;
    }

    private static String json(JsonBody body) throws IOException {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = Json.generator(w)) {
            body.write(g);
        }
        return w.append('\n').toString();
    }

    private static void health(HttpExchange ex, Daemon daemon) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (path.equals("/health/live")) {
            reply(ex, 200, JSON, json(g -> {
                g.writeStartObject();
                g.writeBooleanField("live", true);
                g.writeEndObject();
            }));
            return;
        }
        if (!path.equals("/health") && !path.equals("/health/")) {
            reply(ex, 404, "text/plain; charset=utf-8", "not found\n");
            return;
        }
        List<String> reasons = daemon.notReadyReasons();
        boolean ready = reasons.isEmpty();
        reply(ex, ready ? 200 : 503, JSON, json(g -> {
            g.writeStartObject();
            g.writeStringField("status", ready ? "ready" : "degraded");
            g.writeBooleanField("live", true);
            g.writeBooleanField("ready", ready);
            g.writeArrayFieldStart("reasons");
            for (String r : reasons) {
                g.writeString(r);
            }
            g.writeEndArray();
            g.writeObjectFieldStart("store");
            g.writeStringField("description", daemon.storeDescription());
            g.writeBooleanField("answered", daemon.storeProblem() == null);
            if (daemon.storeProblem() != null) {
                g.writeStringField("problem", daemon.storeProblem());
            }
            g.writeEndObject();
            g.writeObjectFieldStart("passes");
            for (Daemon.PassState p : daemon.passStates()) {
                g.writeObjectFieldStart(p.pass());
                g.writeStringField("schedule", p.schedule().expression());
                g.writeBooleanField("running", p.running());
                g.writeNumberField("runs", p.runs());
                if (p.nextRun().isPresent()) {
                    g.writeStringField("next_run", p.nextRun().get().toString());
                }
                if (p.outcome().isPresent()) {
                    PassOutcome o = p.outcome().get();
                    g.writeObjectFieldStart("last");
                    g.writeStringField("status", o.status().name().toLowerCase(Locale.ROOT));
                    g.writeStringField("started", o.started().toString());
                    g.writeStringField("finished", o.finished().toString());
                    if (o.error() != null) {
                        g.writeStringField("error", o.error());
                    }
                    if (p.result().isPresent()) {
                        g.writeStringField("summary", p.result().get().summary());
                        g.writeArrayFieldStart("problems");
                        for (String problem : p.result().get().problems()) {
                            g.writeString(problem);
                        }
                        g.writeEndArray();
                    }
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            g.writeEndObject();
            g.writeEndObject();
        }));
    }

    private static void shards(HttpExchange ex, Daemon daemon) throws IOException {
        List<ShardSurvey.ShardStatus> survey = daemon.survey();
        Optional<String> nodeId = daemon.nodeId();
        reply(ex, 200, JSON, json(g -> {
            g.writeStartObject();
            if (nodeId.isPresent()) {
                g.writeStringField("node_id", nodeId.get());
            }
            g.writeArrayFieldStart("shards");
            for (ShardSurvey.ShardStatus s : survey) {
                g.writeStartObject();
                g.writeStringField("dir", s.shard());
                u64OrNull(g, "local_base", s.localBase());
                g.writeNumberField("local_segments", s.localSegments());
                g.writeNumberField("local_bytes", s.localBytes());
                g.writeObjectFieldStart("remote_range");
                u64OrNull(g, "first", s.remoteFirst());
                u64OrNull(g, "last", s.remoteLast());
                g.writeEndObject();
                g.writeNumberField("remote_segments", s.remoteSegments());
                g.writeNumberField("remote_bytes", s.remoteBytes());
                g.writeObjectFieldStart("offload_lag");
                g.writeNumberField("segments", s.lagSegments());
                g.writeNumberField("bytes", s.lagBytes());
                g.writeEndObject();
                note(g, "last_offload", daemon.lastOffload(s.shard()));
                note(g, "last_retention", daemon.lastRetention(s.shard()));
                if (s.problem() != null) {
                    g.writeStringField("problem", s.problem());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }));
    }

    private static void u64OrNull(JsonGenerator g, String field, OptionalLong v) throws IOException {
        if (v.isPresent()) {
            Json.u64(g, field, v.getAsLong());
        } else {
            g.writeNullField(field);
        }
    }

    private static void note(JsonGenerator g, String field, Daemon.ShardNote n) throws IOException {
        if (n == null) {
            g.writeNullField(field);
            return;
        }
        g.writeObjectFieldStart(field);
        g.writeStringField("at", n.at().toString());
        g.writeBooleanField("ok", n.ok());
        g.writeStringField("result", n.result());
        g.writeEndObject();
    }

    private static Map<String, String> query(HttpExchange ex) {
        Map<String, String> out = new HashMap<>();
        String q = ex.getRequestURI().getRawQuery();
        if (q == null) {
            return out;
        }
        for (String part : q.split("&")) {
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
        return out;
    }

    private static void read(HttpExchange ex, Daemon daemon) throws IOException {
        Map<String, String> q = query(ex);
        String shard = q.getOrDefault("shard", "");
        long from;
        int max;
        try {
            from = Long.parseUnsignedLong(q.getOrDefault("from", ""));
            max = Integer.parseInt(q.getOrDefault("max", "100"));
        } catch (NumberFormatException e) {
            reply(ex, 400, "text/plain; charset=utf-8", "expected /read?shard=DIR&from=OFFSET[&max=N]\n");
            return;
        }
        if (max < 1 || max > 10_000) {
            reply(ex, 400, "text/plain; charset=utf-8", "max must be from 1 to 10000\n");
            return;
        }
        Optional<TieredReader> reader = daemon.reader(shard);
        if (reader.isEmpty()) {
            reply(ex, 404, "text/plain; charset=utf-8", "no shard directory '" + shard + "'\n");
            return;
        }
        StringWriter body = new StringWriter();
        PrintWriter out = new PrintWriter(body);
        int status = 200;
        try {
            int printed = 0;
            long next = from;
            for (int round = 0; round < max && printed < max; round++) {
                TieredRead r = reader.get().read(next, max - printed, 8L * 1024 * 1024);
                if (r instanceof TieredRead.Trimmed t) {
                    if (printed == 0) {
                        status = 416;
                        out.print(json(g -> {
                            g.writeStartObject();
                            g.writeStringField("error", "Trimmed");
                            Json.u64(g, "offset", from);
                            Json.u64(g, "next_available", t.nextAvailable());
                            g.writeEndObject();
                        }));
                    }
                    break;
                }
                TieredRead.Records records = (TieredRead.Records) r;
                if (records.records().isEmpty()) {
                    break;
                }
                for (TieredRead.SourcedRecord sr : records.records()) {
                    RecordLines.json(out, sr.record(), -1, sr.remote() ? "remote" : "local");
                    printed++;
                }
                next = records.nextOffset();
            }
        } catch (CorruptionException e) {
            status = 500;
            DumpCommand.writeJsonError(out, e);
        } catch (StoreException e) {
            status = 502;
            String kind = DaemonMetrics.kindOf(e);
            out.println(json(g -> {
                g.writeStartObject();
                g.writeStringField("error", "Store");
                g.writeStringField("kind", kind);
                g.writeStringField("message", e.getMessage());
                g.writeEndObject();
            }).trim());
        }
        out.flush();
        reply(ex, status, "application/x-ndjson", body.toString());
    }
}
