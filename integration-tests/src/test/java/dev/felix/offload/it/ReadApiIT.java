package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.RecordHeader;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The daemon's {@code /read} as a broker uses it, through the real process over HTTP: raw answers
 * decoded both by the Java codec and by tools/golden's independent Python reader, paging by
 * {@code Felix-Next-Offset} to caught-up, the byte bound, 416s, and JSON errors.
 */
@Order(5) // the longest classes start first (see the pom): 74 s
class ReadApiIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final int RECORDS = 3000;

    @TempDir
    Path work;

    private static HttpResponse<byte[]> get(String url, String accept) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Accept", accept)
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static long header(HttpResponse<?> r, String name) {
        return Long.parseUnsignedLong(r.headers().firstValue(name).orElseThrow(() -> new AssertionError("no " + name
                + " in " + r.headers().map())));
    }

    /** The Java codec: every record's header CRC and checksum verified, back to back. */
    private static List<Record> decodeWithJava(byte[] body) throws Exception {
        List<Record> out = new ArrayList<>();
        ByteBuffer buf = ByteBuffer.wrap(body);
        CorruptionSite site = CorruptionSite.inFile("answer", "answer", 0);
        while (buf.hasRemaining()) {
            int p = buf.position();
            RecordHeader h = RecordCodec.decodeHeader(buf.slice(), p, 4, site);
            out.add(RecordCodec.decodeBody(h, buf.slice(p, h.totalLength()), site));
            buf.position(p + h.totalLength());
        }
        return out;
    }

    /** tools/golden/decode_records.py, written from the spec alone. */
    private List<JsonNode> decodeWithPython(byte[] body, long from) throws Exception {
        Path file = work.resolve("answer-" + from + ".bin");
        Files.write(file, body);
        Path script = Path.of("..", "tools", "golden", "decode_records.py").toAbsolutePath();
        Process p = new ProcessBuilder("python3", script.toString(), file.toString(), Long.toString(from))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                lines.add(JSON.readTree(line));
            }
        }
        return lines;
    }

    @Test
    void rawAnswersDecodeWithBothReadersPageToCaughtUpAndStayWithinTheirBound() throws Exception {
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "data",
                "--records", Integer.toString(RECORDS), "--payload-bytes", "100", "--segment-bytes", "16384",
                "--producers", "2");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        String shard;
        try (var dirs = Files.list(work.resolve("data"))) {
            shard = dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString())
                    .filter(n -> !n.startsWith(".")).findFirst().orElseThrow();
        }
        Path store = Files.createDirectories(work.resolve("store"));
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: data",
                "store: " + store.toUri(),
                "node-id: read-it",
                "offload.schedule: '* * * * * ?'",
                "retention.schedule: '* * * * * ?'",
                "local.retention.bytes: 48KiB",
                // no broker rewrites the manifest here: an entry need not stand 5 s before its local segment goes
                "offload.unlink-settle: 0s",
                "retention.bytes: 200KiB",
                "http.port: 0",
                "http.read.threads: 2",
                ""), StandardCharsets.UTF_8);

        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, Map.of(), config)) {
            String read = daemon.base + "/read?shard=" + shard;
            long[] start = new long[1];
            FelixJar.await("old local segments went remote and the oldest copies expired", Duration.ofSeconds(90), () -> {
                try {
                    HttpResponse<byte[]> r = get(read + "&from=" + (RECORDS - 1), "application/octet-stream");
                    start[0] = header(r, "Felix-Log-Start");
                    return r.statusCode() == 200 && start[0] > 0 && header(r, "Felix-Local-Base") > start[0] + 200;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            // Retention may still be removing the oldest copies: wait, with a deadline, until the log start
            // has held still across two of its passes (they run every second).
            long logStart = start[0];
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            long stillSince = System.nanoTime();
            while (System.nanoTime() - stillSince < Duration.ofMillis(2500).toNanos()) {
                assertThat(System.nanoTime()).as("the log start settles within 90 s").isLessThan(deadline);
                Thread.sleep(250);
                long now = header(get(read + "&from=" + (RECORDS - 1), "application/octet-stream"), "Felix-Log-Start");
                if (now != logStart) {
                    logStart = now;
                    stillSince = System.nanoTime();
                }
            }

            // Page through everything from the log start, 8 KiB at a time, as a broker would.
            long from = logStart;
            long localBase = -1;
            int pages = 0;
            while (true) {
                HttpResponse<byte[]> r = get(read + "&from=" + from + "&max_bytes=8192", "application/octet-stream");
                assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
                assertThat(header(r, "Felix-Log-End")).isEqualTo(RECORDS);
                localBase = header(r, "Felix-Local-Base");
                if (r.body().length == 0) {
                    assertThat(header(r, "Felix-Next-Offset")).as("caught up").isEqualTo(from).isEqualTo(RECORDS);
                    break;
                }
                assertThat(r.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
                assertThat(r.body().length).isLessThanOrEqualTo(8192);
                List<Record> java = decodeWithJava(r.body());
                List<JsonNode> python = decodeWithPython(r.body(), from);
                assertThat(python).hasSameSizeAs(java);
                for (int i = 0; i < java.size(); i++) {
                    assertThat(java.get(i).offset()).isEqualTo(from + i);
                    assertThat(python.get(i).get("offset").asLong()).isEqualTo(from + i);
                    assertThat(python.get(i).get("kind").asText()).isEqualTo(java.get(i).kind().label());
                    assertThat(Base64.getDecoder().decode(python.get(i).get("payload_base64").asText()))
                            .isEqualTo(java.get(i).payload());
                }
                long next = header(r, "Felix-Next-Offset");
                assertThat(next).isEqualTo(from + java.size());
                from = next;
                pages++;
            }
            assertThat(pages).as("pages of 8 KiB").isGreaterThan(10);
            assertThat(localBase).isGreaterThan(logStart);

            // The raw bytes of a remote read are the object's bytes, header to header.
            HttpResponse<byte[]> remote = get(read + "&from=" + logStart + "&max_bytes=4096", "application/octet-stream");
            long oldest = logStart;
            byte[] object;
            try (var files = Files.walk(store)) {
                Path segment = files.filter(f -> f.toString().endsWith(".segment")).filter(f -> {
                    try {
                        return ByteBuffer.wrap(Files.readAllBytes(f)).getLong(8) == oldest;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }).findFirst().orElseThrow();
                object = Files.readAllBytes(segment);
            }
            byte[] stored = java.util.Arrays.copyOfRange(object, 32, 32 + remote.body().length);
            assertThat(remote.body()).isEqualTo(stored);

            // At least one whole record, however small the bound.
            HttpResponse<byte[]> one = get(read + "&from=" + localBase + "&max_bytes=1", "application/octet-stream");
            assertThat(decodeWithJava(one.body())).hasSize(1);
            assertThat(header(one, "Felix-Next-Offset")).isEqualTo(localBase + 1);

            // JSON is bounded the same way and says where each record came from.
            HttpResponse<byte[]> json = get(read + "&from=" + (localBase - 2) + "&max_bytes=600", "application/json");
            List<String> lines = new String(json.body(), StandardCharsets.UTF_8).lines().toList();
            assertThat(lines).hasSizeBetween(1, 5);
            assertThat(JSON.readTree(lines.get(0)).get("source").asText()).isEqualTo("remote");
            assertThat(header(json, "Felix-Next-Offset")).isEqualTo(localBase - 2 + lines.size());

            // Below the log start: 416 naming the next offset held; past the end: 416 of its own name.
            HttpResponse<byte[]> trimmed = get(read + "&from=0", "application/octet-stream");
            assertThat(trimmed.statusCode()).isEqualTo(416);
            assertThat(header(trimmed, "Felix-Next-Available")).isEqualTo(logStart);
            JsonNode t = JSON.readTree(trimmed.body());
            assertThat(t.get("error").asText()).isEqualTo("trimmed");
            assertThat(t.get("reason").asText()).isEqualTo("Range Not Satisfiable");
            assertThat(t.get("next_available").asLong()).isEqualTo(logStart);
            HttpResponse<byte[]> beyond = get(read + "&from=" + (RECORDS + 10), "application/octet-stream");
            assertThat(beyond.statusCode()).isEqualTo(416);
            assertThat(JSON.readTree(beyond.body()).get("error").asText()).isEqualTo("beyond_log_end");

            // Every error is JSON with a stable name.
            for (var c : List.of(
                    Map.entry(read + "&from=x", "bad_offset"),
                    Map.entry(read + "&from=0&max_bytes=" + (64L << 20), "bad_limit"),
                    Map.entry(daemon.base + "/read?shard=nope&from=0", "no_such_shard"),
                    Map.entry(read + "&from=0&format=xml", "bad_format"),
                    Map.entry(daemon.base + "/elsewhere", "not_found"))) {
                HttpResponse<byte[]> r = get(c.getKey(), "*/*");
                assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
                JsonNode e = JSON.readTree(r.body());
                assertThat(e.get("error").asText()).as(c.getKey()).isEqualTo(c.getValue());
                assertThat(e.get("status").asInt()).isEqualTo(r.statusCode());
                assertThat(e.get("reason").asText()).isNotBlank();
            }
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
        }

        // The command line prints the same raw bytes.
        Process cli = FelixJar.builder(work, Map.of(), "read-raw", "read", "--data-dir", "data",
                "--store", store.toUri().toString(), "--shard", shard, "--from", Long.toString(RECORDS - 5),
                "--format", "raw").start();
        assertThat(cli.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(cli.exitValue()).as(FelixJar.read(work.resolve("read-raw.err"))).isZero();
        byte[] rawOut = Files.readAllBytes(work.resolve("read-raw.out"));
        assertThat(decodeWithJava(rawOut)).hasSize(5);
        assertThat(decodeWithPython(rawOut, RECORDS - 5)).hasSize(5);
    }
}
