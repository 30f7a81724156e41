package dev.felix.offload.daemon;

import com.fasterxml.jackson.core.JsonGenerator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.felix.offload.schedule.PassOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
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
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's HTTP endpoint (the JDK's server), loopback unless configured otherwise:
 * <ul>
 *   <li>{@code GET /metrics}: every metric in the Prometheus text format;</li>
 *   <li>{@code GET /health}: JSON; 200 when ready (the store answered and the last run of every
 *       pass went well), 503 with the reasons when degraded;</li>
 *   <li>{@code GET /health/live}: 200 while the process serves;</li>
 *   <li>{@code GET /shards[?limit=N&after=SHARD]}: per-shard JSON, a page at a time: local base,
 *       remote range, bytes local and remote, offload lag, the last offload and retention result;</li>
 *   <li>{@code GET /read?shard=NAME&from=OFFSET[&max_bytes=N]}: records, raw as the segments store
 *       them or as {@code read --json} lines, from local disk or the store ({@link ReadEndpoint},
 *       docs/read-api.md), on a pool of its own so the other endpoints answer while reads are busy
 *       (NAME is the shard's name under the root, {@code dead-letters/<dir>} URL-encoded or not).</li>
 * </ul>
 * Every error answer is JSON: {@code {"error": NAME, "status": CODE, "reason": PHRASE, "message": ...}},
 * where NAME is stable and a program may decide on it.
 * Who may ask for what is {@link AccessPolicy}'s decision, taken before anything else; over TLS when
 * {@code http.tls.*} is set ({@link TlsFiles}). A second, plain listener ({@code http.status.port})
 * serves only {@code /metrics}, {@code /health} and {@code /health/live}, to anyone.
 * Nothing it shows holds a credential: the store appears by its own description.
 */
final class StatusServer {

    private static final Logger LOG = LoggerFactory.getLogger(StatusServer.class);
    private static final String JSON = "application/json";

    private final HttpServer server;
    private final ExecutorService executor;
    private final ExecutorService readPool;
    /** The second listener (http.status.port), or null. */
    private HttpServer statusServer;

    private StatusServer(HttpServer server, ExecutorService executor, ExecutorService readPool) {
        this.server = server;
        this.executor = executor;
        this.readPool = readPool;
    }

    /** Answers {@code handler} only for a request {@code access} admits; a refusal is answered here. */
    private static HttpHandler guard(AccessPolicy access, HttpHandler handler) {
        return ex -> {
            Optional<AccessPolicy.Refusal> refusal = access.check(ex);
            if (refusal.isEmpty()) {
                handler.handle(ex);
                return;
            }
            try (ex) {
                AccessPolicy.Refusal r = refusal.get();
                if (r.status() == 401) {
                    ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"felix-offload\"");
                }
                error(ex, r.status(), r.error(), r.message());
            } catch (IOException | RuntimeException e) {
                LOG.debug("refusing {} {}: {}", ex.getRequestMethod(), ex.getRequestURI().getPath(), e.toString());
            }
        };
    }

    private static HttpServer listen(String setting, String bind, int port, Optional<TlsFiles> tls) throws IOException {
        try {
            if (tls.isEmpty()) {
                return HttpServer.create(new InetSocketAddress(bind, port), 16);
            }
            HttpsServer https = HttpsServer.create(new InetSocketAddress(bind, port), 16);
            javax.net.ssl.SSLContext context = tls.get().context();
            boolean clients = tls.get().checksClients();
            https.setHttpsConfigurator(new HttpsConfigurator(context) {
                @Override
                public void configure(HttpsParameters params) {
                    javax.net.ssl.SSLParameters p = context.getDefaultSSLParameters();
                    // Asked for, not required: /health and /metrics stay open to probes without one,
                    // while a certificate that is offered must verify, or the handshake ends.
                    p.setWantClientAuth(clients);
                    params.setSSLParameters(p);
                }
            });
            return https;
        } catch (BindException e) {
            throw new StartRefusedException(setting + ": cannot listen on " + urlHost(bind) + ":" + port
                    + " (" + e.getMessage() + "); choose another " + setting + " or "
                    + (setting.equals(DaemonConfig.HTTP_PORT) ? DaemonConfig.HTTP_BIND : HttpSecurity.STATUS_BIND));
        }
    }

    /** The second listener: /metrics, /health and /health/live in plain HTTP, for probes and scrapers. */
    private static HttpServer statusListener(Daemon daemon, HttpSecurity security, String bind, ExecutorService executor)
            throws IOException {
        String statusBind = security.statusBind().orElse(bind);
        HttpServer status = listen(HttpSecurity.STATUS_PORT, statusBind, security.statusPort().getAsInt(), Optional.empty());
        status.setExecutor(executor);
        status.createContext("/metrics", ex -> serve(ex, () -> {
            if (exactly(ex, "/metrics")) {
                reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", daemon.metrics().scrape());
            }
        }));
        status.createContext("/health", ex -> serve(ex, () -> health(ex, daemon)));
        status.createContext("/", ex -> serve(ex, () -> error(ex, 404, "not_found",
                "this listener (http.status.port) serves /metrics, /health and /health/live only")));
        status.start();
        LOG.info("serving http://{}:{}/ (metrics, health; no authentication)", statusBind, status.getAddress().getPort());
        return status;
    }

    private static ThreadFactory threads(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** @param readThreads how many {@code /read} answers may be in the making at once; more get a 503 */
    static StatusServer start(Daemon daemon, String bind, int port, int readThreads, HttpSecurity security)
            throws IOException {
        AccessPolicy access = AccessPolicy.of(security);
        Optional<TlsFiles> tls = security.tls() ? Optional.of(TlsFiles.open(security)) : Optional.empty();
        if (security.tokenFile().isPresent() && tls.isEmpty() && !HttpSecurity.loopback(bind)) {
            LOG.warn("{} is set without TLS on {}: tokens cross the network in the clear; set {} and {}",
                    HttpSecurity.TOKEN_FILE, urlHost(bind), HttpSecurity.TLS_CERTIFICATE, HttpSecurity.TLS_KEY);
        }
        if (!access.requiresCredentials() && !HttpSecurity.loopback(bind)) {
            LOG.warn("{} is true: /read and /shards on {} answer anyone who reaches the port", HttpSecurity.ALLOW_UNAUTHENTICATED,
                    urlHost(bind));
        }
        HttpServer server = listen(DaemonConfig.HTTP_PORT, bind, port, tls);
        daemon.metrics().functionCounter("felix.http.unauthorized", "HTTP requests refused for want of a credential (401)",
                null, access, AccessPolicy::unauthorized);
        daemon.metrics().functionCounter("felix.http.forbidden", "HTTP requests refused for a bearer token not accepted (403)",
                null, access, AccessPolicy::forbidden);
        ExecutorService executor = Executors.newFixedThreadPool(2, threads("http"));
        // No queue: a read either finds an idle thread or is told to come back, so a burst of reads
        // neither piles up in memory nor keeps /health and /metrics waiting.
        ThreadPoolExecutor readPool = new ThreadPoolExecutor(readThreads, readThreads, 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), threads("http-read"));
        server.setExecutor(executor);
        server.createContext("/metrics", guard(access, ex -> serve(ex, () -> {
            if (exactly(ex, "/metrics")) {
                reply(ex, 200, "text/plain; version=0.0.4; charset=utf-8", daemon.metrics().scrape());
            }
        })));
        server.createContext("/health", guard(access, ex -> serve(ex, () -> health(ex, daemon))));
        server.createContext("/shards", guard(access, ex -> serve(ex, () -> {
            if (exactly(ex, "/shards")) {
                shards(ex, daemon);
            }
        })));
        server.createContext("/read", guard(access, ex -> {
            String path = ex.getRequestURI().getPath();
            if (!path.equals("/read") && !path.equals("/read/")) {
                serve(ex, () -> exactly(ex, "/read")); // answers 404
                return;
            }
            try {
                readPool.execute(() -> serve(ex, () -> ReadDeadline.handle(ex, daemon)));
            } catch (RejectedExecutionException busy) {
                serve(ex, () -> {
                    ex.getResponseHeaders().set("Retry-After", "1");
                    error(ex, 503, "busy", "all " + readThreads + " read threads are busy (http.read.threads); retry");
                });
            }
        }));
        server.createContext("/", guard(access, ex -> serve(ex, () -> error(ex, 404, "not_found",
                "no such endpoint; try /metrics, /health, /shards or /read"))));
        StatusServer s = new StatusServer(server, executor, readPool);
        if (security.statusPort().isPresent()) {
            s.statusServer = statusListener(daemon, security, bind, executor);
        }
        server.start();
        LOG.info("serving {}://{}:{}/ (metrics, health, shards, read{})", security.scheme(), urlHost(bind), s.port(),
                access.requiresCredentials() ? "; " + (security.scope() == HttpSecurity.Scope.ALL ? "every path" : "shards and read")
                        + " need a credential" : "");
        return s;
    }

    /** The second listener's port, when there is one. */
    java.util.OptionalInt statusPort() {
        return statusServer == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(statusServer.getAddress().getPort());
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** An address as the host part of a URL: an IPv6 literal in brackets ({@code [::1]}), anything else as it is. */
    static String urlHost(String bind) {
        return bind.indexOf(':') >= 0 && !bind.startsWith("[") ? "[" + bind + "]" : bind;
    }

    /**
     * The JDK's server hands a context every path it prefixes ({@code /metricsfoo}, {@code /shards/x}):
     * answers 404 unless the path is {@code path} itself (or with a trailing slash); true when it is.
     */
    private static boolean exactly(HttpExchange ex, String path) throws IOException {
        String asked = ex.getRequestURI().getPath();
        if (asked.equals(path) || asked.equals(path + "/")) {
            return true;
        }
        error(ex, 404, "not_found", "no such endpoint " + asked + "; try /metrics, /health, /shards or /read");
        return false;
    }

    void stop() {
        server.stop(0);
        if (statusServer != null) {
            statusServer.stop(0);
        }
        executor.shutdownNow();
        readPool.shutdownNow();
    }

    private interface Handler {
        void handle() throws IOException;
    }

    private static void serve(HttpExchange ex, Handler handler) {
        try (ex) {
            if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
                ex.getResponseHeaders().set("Allow", "GET, HEAD");
                error(ex, 405, "method_not_allowed", ex.getRequestMethod() + " is not served; only GET and HEAD");
                return;
            }
            try {
                handler.handle();
            } catch (IOException e) {
                // Reading local files failed before anything was sent: say which file and why.
                if (ex.getResponseCode() < 0) {
                    error(ex, 500, "io_error", dev.felix.offload.log.IoProblem.describe(e));
                }
                throw e;
            } catch (RuntimeException e) {
                if (ex.getResponseCode() < 0) {
                    error(ex, 500, "internal_error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                throw e;
            }
        } catch (IOException e) {
            LOG.warn("{} {} failed: {}", ex.getRequestMethod(), ex.getRequestURI().getPath(), dev.felix.offload.log.IoProblem.describe(e));
        } catch (RuntimeException e) {
            LOG.warn("{} {} failed: {}", ex.getRequestMethod(), ex.getRequestURI().getPath(), e.toString());
        }
    }

    /** Reason phrases of the statuses this server answers. */
    static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 416 -> "Range Not Satisfiable";
            case 500 -> "Internal Server Error";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> "Status " + status;
        };
    }

    /** An error answer: JSON naming the error (stable), the status and its reason phrase, and what happened. */
    static void error(HttpExchange ex, int status, String name, String message) throws IOException {
        error(ex, status, name, message, g -> { });
    }

    static void error(HttpExchange ex, int status, String name, String message, JsonBody extra) throws IOException {
        reply(ex, status, JSON, json(g -> {
            g.writeStartObject();
            g.writeStringField("error", name);
            g.writeNumberField("status", status);
            g.writeStringField("reason", reason(status));
            g.writeStringField("message", message);
            extra.write(g);
            g.writeEndObject();
        }));
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

    interface JsonBody {
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
            error(ex, 404, "not_found", "no such endpoint " + path + "; try /health or /health/live");
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
            long lastAnswer = daemon.storeHealth().lastAnswerEpochMillis();
            if (lastAnswer != 0) {
                g.writeStringField("last_answer", java.time.Instant.ofEpochMilli(lastAnswer).toString());
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

    /** Shards in one page of {@code /shards} when {@code limit} is not given, and the most a page may hold. */
    static final int SHARDS_PAGE = 1000;
    static final int SHARDS_PAGE_MAX = 10_000;
    private static final String SHARDS_USAGE = "/shards?limit=N&after=SHARD (limit 1 to " + SHARDS_PAGE_MAX
            + ", default " + SHARDS_PAGE + "; after: the next_after of the page before)";

    /**
     * {@code GET /shards}: one page of shards by name: {@code limit} of them (default
     * {@value #SHARDS_PAGE}) after the shard named {@code after}; {@code next_after} is the cursor of
     * the next page, null on the last. Only the page's shards are read, so that an answer costs the
     * same on a node of 50 shards and of 50,000.
     */
    private static void shards(HttpExchange ex, Daemon daemon) throws IOException {
        Map<String, String> q = query(ex);
        for (String name : q.keySet()) {
            if (!name.equals("limit") && !name.equals("after")) {
                error(ex, 400, "bad_request", "unknown parameter '" + name + "'; try " + SHARDS_USAGE);
                return;
            }
        }
        int limit = SHARDS_PAGE;
        if (q.containsKey("limit")) {
            String given = q.get("limit");
            limit = given.matches("[0-9]{1,6}") ? Integer.parseInt(given) : -1;
            if (limit < 1 || limit > SHARDS_PAGE_MAX) {
                error(ex, 400, "bad_request", "limit must be a whole number from 1 to " + SHARDS_PAGE_MAX + ", not '"
                        + given + "'; try " + SHARDS_USAGE);
                return;
            }
        }
        String after = q.getOrDefault("after", "");
        ShardSurvey.Memo.Page page = daemon.surveyPage(after.isEmpty() ? null : after, limit);
        List<ShardSurvey.ShardStatus> survey = page.shards();
        Optional<String> nodeId = daemon.nodeId();
        reply(ex, 200, JSON, json(g -> {
            g.writeStartObject();
            if (nodeId.isPresent()) {
                g.writeStringField("node_id", nodeId.get());
            }
            if (page.nextAfter() == null) {
                g.writeNullField("next_after");
            } else {
                g.writeStringField("next_after", page.nextAfter());
            }
            // files the broker removed under a survey since start-up: looked at again, not errors
            g.writeNumberField("files_vanished", ShardSurvey.vanished());
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

    private static void note(JsonGenerator g, String field, ScheduledPasses.ShardNote n) throws IOException {
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

    static Map<String, String> query(HttpExchange ex) {
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
}
