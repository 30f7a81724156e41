package dev.felix.offload.cli;

import dev.felix.offload.daemon.Daemon;
import dev.felix.offload.daemon.DaemonConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The daemon in-process on the filesystem store, with every pass scheduled each second. */
class DaemonTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path tmp;
    Daemon daemon;

    @AfterEach
    void stop() {
        if (daemon != null) {
            daemon.stop(Duration.ofSeconds(10));
        }
    }

    private Daemon start(Map<String, String> extra) throws Exception {
        return start(extra, store -> store);
    }

    private Daemon start(Map<String, String> extra, java.util.function.UnaryOperator<ObjectStore> wrap) throws Exception {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "2", "--shards-per-stream", "1",
                "--records", "1500", "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path storeDir = Files.createDirectories(tmp.resolve("store"));
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", storeDir.toUri().toString());
        values.put("node-id", "daemon-test");
        values.put("offload.schedule", "* * * * * ?");
        values.put("retention.schedule", "* * * * * ?");
        values.put("scrub.schedule", "* * * * * ?");
        values.put("local.retention.bytes", "40KiB");
        values.put("http.port", "0");
        values.putAll(extra);
        DaemonConfig config = DaemonConfig.of(tmp.resolve("felix.yaml"), values);
        daemon = new Daemon(config, wrap.apply(FilesystemStore.open(storeDir)), Map.of(), PassClock.system(ZoneOffset.UTC));
        daemon.start();
        return daemon;
    }

    private HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + daemon.httpPort() + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(100);
        }
    }

    private JsonNode shards() {
        try {
            return JSON.readTree(get("/shards").body());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static boolean settled(JsonNode shards) {
        for (JsonNode s : shards.get("shards")) {
            if (s.get("offload_lag").get("segments").asInt() != 0 || s.get("local_bytes").asLong() > 40 * 1024
                    || s.get("remote_segments").asInt() == 0) {
                return false;
            }
        }
        return shards.get("shards").size() == 2;
    }

    @Test
    void offloadsAppliesRetentionAndReportsOverHttp() throws Exception {
        start(Map.of());
        await("every sealed segment is offloaded and local disk is under the limit", () -> settled(shards()));
        JsonNode s = shards();
        assertThat(s.get("node_id").asText()).isEqualTo("daemon-test");
        JsonNode first = s.get("shards").get(0);
        assertThat(first.get("local_base").asLong()).isPositive();
        assertThat(first.get("remote_range").get("first").asLong()).isZero();
        assertThat(first.get("remote_range").get("last").asLong()).isGreaterThanOrEqualTo(first.get("local_base").asLong() - 1);

        await("offload, retention and scrub have each run", () -> {
            try {
                JsonNode passes = JSON.readTree(get("/health").body()).get("passes");
                return passes.get("offload").has("last") && passes.get("retention").has("last")
                        && passes.get("scrub").has("last");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        HttpResponse<String> health = get("/health");
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        JsonNode h = JSON.readTree(health.body());
        assertThat(h.get("status").asText()).isEqualTo("ready");
        assertThat(h.get("store").get("answered").asBoolean()).isTrue();
        assertThat(get("/health/live").statusCode()).isEqualTo(200);

        // Below the local base, from the store.
        String dir = first.get("dir").asText();
        HttpResponse<String> read = get("/read?shard=" + dir + "&from=0&max=5");
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
        List<String> lines = read.body().lines().toList();
        assertThat(lines).hasSize(5);
        for (int i = 0; i < 5; i++) {
            JsonNode rec = JSON.readTree(lines.get(i));
            assertThat(rec.get("offset").asLong()).isEqualTo(i);
            assertThat(rec.get("source").asText()).isEqualTo("remote");
        }
        assertThat(get("/read?shard=nope&from=0").statusCode()).isEqualTo(404);
        assertThat(get("/read?shard=" + dir + "&from=x").statusCode()).isEqualTo(400);

        String metrics = get("/metrics").body();
        assertThat(metrics).contains("felix_offload_segments_total ", "felix_offload_bytes_total ",
                "felix_offload_lag_segments ", "felix_local_bytes ", "felix_remote_bytes ",
                "felix_remote_reads_total ", "felix_chunk_cache_misses_total ", "felix_chunk_cache_hits_total ",
                "felix_store_upload_seconds_count ", "felix_retention_deleted_segments_total{where=\"local\"}",
                "felix_orphans_found_total ", "felix_pass_runs_total{pass=\"offload\",status=\"succeeded\"}");
        assertThat(value(metrics, "felix_offload_segments_total")).isPositive();
        assertThat(value(metrics, "felix_remote_reads_total")).isPositive();
        assertThat(value(metrics, "felix_offload_lag_segments")).isZero();

        assertThat(daemon.stop(Duration.ofSeconds(10))).isTrue();
        daemon = null;
    }

    @Test
    void aScrubAnomalyMakesTheDaemonDegraded() throws Exception {
        start(Map.of("retention.schedule", "off"));
        await("something is offloaded", () -> shards().get("shards").get(0).get("remote_segments").asInt() > 0);
        String key = "daemon-test/" + shards().get("shards").get(0).get("dir").asText()
                + "/00000000000000000005-00000000000000099999.segment"; // offsets the shard holds: an orphan
        try (FilesystemStore s = FilesystemStore.open(tmp.resolve("store"))) {
            s.put(key, dev.felix.offload.store.UploadBody.ofBytes(new byte[] {1, 2, 3}));
        }
        await("the scrub reports the orphan", () -> {
            try {
                HttpResponse<String> h = get("/health");
                return h.statusCode() == 503 && h.body().contains("orphan " + key);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(JSON.readTree(get("/health").body()).get("status").asText()).isEqualTo("degraded");
        assertThat(get("/metrics").body()).contains("felix_scrub_anomalies_total{kind=\"orphan\"}");
    }

    @Test
    void readsOverTheirPoolGet503WithRetryAfterWhileHealthAndMetricsStillAnswer() throws Exception {
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        // A store whose range reads for /read wait until the test lets them go, so the read pool stays busy. The
        // tiered reader fetches chunks on its own fetch threads (the read-work thread waits for them, and the
        // http-read thread for it, up to http.read.timeout), and a header the scrub already read may be cached, so
        // every ranged read off the pass threads is held.
        start(Map.of("http.read.threads", "1"), store -> (ObjectStore) java.lang.reflect.Proxy.newProxyInstance(
                ObjectStore.class.getClassLoader(), new Class<?>[] {ObjectStore.class}, (proxy, method, args) -> {
                    String thread = Thread.currentThread().getName();
                    if (method.getName().startsWith("readRange")
                            && (thread.startsWith("http-read") || thread.startsWith("read-work")
                            || thread.startsWith("chunk-fetch"))) {
                        waiting.countDown();
                        release.await();
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                }));
        await("every sealed segment is offloaded and local disk is under the limit", () -> settled(shards()));
        String dir = shards().get("shards").get(0).get("dir").asText();
        var slow = HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + daemon.httpPort()
                + "/read?shard=" + dir + "&from=0")).header("Accept", "application/octet-stream").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(waiting.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the first read reached the store").isTrue();

        HttpResponse<String> busy = get("/read?shard=" + dir + "&from=0");
        assertThat(busy.statusCode()).isEqualTo(503);
        assertThat(busy.headers().firstValue("Retry-After")).hasValue("1");
        JsonNode e = JSON.readTree(busy.body());
        assertThat(e.get("error").asText()).isEqualTo("busy");
        assertThat(e.get("reason").asText()).isEqualTo("Service Unavailable");
        assertThat(get("/metrics").statusCode()).isEqualTo(200);
        assertThat(get("/health/live").statusCode()).isEqualTo(200);
        assertThat(get("/shards").statusCode()).isEqualTo(200);

        release.countDown();
        HttpResponse<byte[]> done = slow.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(done.statusCode()).isEqualTo(200);
        assertThat(done.body()).isNotEmpty();
        assertThat(Long.parseLong(done.headers().firstValue("Felix-Next-Offset").orElseThrow())).isPositive();
    }

    /** The value of an untagged sample in Prometheus text. */
    static double value(String metrics, String name) {
        return metrics.lines().filter(l -> l.startsWith(name + " ")).map(l -> Double.parseDouble(l.split(" ")[1]))
                .findFirst().orElseThrow(() -> new AssertionError("no sample " + name));
    }
}
