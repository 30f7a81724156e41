package dev.felix.offload.it;

import org.junit.jupiter.api.parallel.Isolated;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code felix-offload run} as a real process against S3Mock, every pass scheduled each second, while
 * the test appends to a shard through a {@link ShardLog} as a broker would.
 */
@Isolated("its SIGTERM must land while a paced segment is on the wire, not during the short index put before it"
        + " (a stop there leaves the index object without an entry): nothing else loads the machine beside it")
class DaemonIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final long LOCAL_LIMIT = 48 * 1024;
    private static final int PAYLOAD = 200;

    @TempDir
    Path work;

    static Map<String, String> credentials(S3Server server) {
        return Map.of("AWS_ACCESS_KEY_ID", server.credentials().accessKey().orElseThrow(),
                "AWS_SECRET_ACCESS_KEY", server.credentials().secretKey().orElseThrow(),
                "AWS_REGION", server.region());
    }

    static String storeUri(S3Server server, String bucket) {
        return storeUri(server, bucket, "");
    }

    /** @param prefix a key prefix starting with a slash, or empty */
    static String storeUri(S3Server server, String bucket, String prefix) {
        return "s3://" + bucket + prefix + "?endpoint=" + server.endpoint() + "&region=" + server.region()
                + "&path-style=true&max-attempts=3";
    }

    private static String get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static int status(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static JsonNode shard(String base, String dir) {
        try {
            for (JsonNode s : JSON.readTree(get(base + "/shards")).get("shards")) {
                if (s.get("dir").asText().equals(dir)) {
                    return s;
                }
            }
            return null;
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Appends {@code n} records, remembering their payloads by offset. */
    private static void append(ShardLog log, List<byte[]> written, int n, SplittableRandom random) throws IOException {
        for (int i = 0; i < n; i++) {
            byte[] payload = new byte[PAYLOAD];
            random.nextBytes(payload);
            long offset = log.append(1_767_225_600_000_000L + written.size() * 1000L, payload);
            assertThat(offset).isEqualTo(written.size());
            written.add(payload);
        }
        log.flush();
    }

    private static boolean settled(JsonNode s, int minRemote) {
        return s != null && s.get("offload_lag").get("segments").asInt() == 0
                && s.get("local_bytes").asLong() <= LOCAL_LIMIT && s.get("remote_segments").asInt() >= minRemote;
    }

    @Test
    void offloadsWhatAShardLogWritesServesReadsAndMetricsAndStopsOnSigterm() throws Exception {
        S3Server s3 = S3Servers.s3mock();
        String bucket = s3.createBucket("daemon-it");
        Path root = Files.createDirectories(work.resolve("data"));
        String dir = new ShardKey("acme", "default", "orders", 0).directoryName();
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: data",
                "store: " + storeUri(s3, bucket),
                "node-id: it-node",
                "offload.schedule: '* * * * * ?'",
                "retention.schedule: '* * * * * ?'",
                "scrub.schedule: '*/2 * * * * ?'",
                "local.retention.bytes: " + LOCAL_LIMIT,
                "orphans.grace: 1h",
                "http.port: 0",
                "shutdown.grace: 20s",
                ""), StandardCharsets.UTF_8);
        Map<String, String> env = credentials(s3);
        List<byte[]> written = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(7);
        ShardLogConfig logConfig = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
                .withFsyncPolicy(FsyncPolicy.none());

        try (ShardLog log = ShardLog.open(root.resolve(dir), logConfig);
             FelixJar.Daemon daemon = FelixJar.Daemon.start(work, env, config)) {
            append(log, written, 600, random);
            FelixJar.await("the first segments are offloaded and local bytes are under the limit",
                    Duration.ofSeconds(90), () -> settled(shard(daemon.base, dir), 3));

            // More records while it runs: new sealed segments go the same way.
            int before = shard(daemon.base, dir).get("remote_segments").asInt();
            append(log, written, 600, random);
            FelixJar.await("the new segments are offloaded too", Duration.ofSeconds(90),
                    () -> settled(shard(daemon.base, dir), before + 3));
            JsonNode s = shard(daemon.base, dir);
            long localBase = s.get("local_base").asLong();
            assertThat(localBase).as("older segments left local disk").isPositive();
            assertThat(s.get("remote_range").get("first").asLong()).isZero();
            assertThat(s.get("last_offload").get("ok").asBoolean()).isTrue();

            // The objects are in the bucket, under this node's prefix.
            List<String> keys = s3.admin().listObjectsV2(b -> b.bucket(bucket).prefix("it-node/" + dir + "/"))
                    .contents().stream().map(S3Object::key).toList();
            assertThat(keys).filteredOn(k -> k.endsWith(".segment")).hasSizeGreaterThanOrEqualTo(before + 3);

            // Reads below the local base come from the store with the bytes that were written.
            int count = (int) Math.min(localBase + 5, written.size());
            List<String> lines = get(daemon.base + "/read?shard=" + dir + "&from=0&max=" + count).lines().toList();
            assertThat(lines).hasSize(count);
            for (int i = 0; i < count; i++) {
                JsonNode r = JSON.readTree(lines.get(i));
                assertThat(r.get("offset").asLong()).isEqualTo(i);
                assertThat(Base64.getDecoder().decode(r.get("payload_base64").asText())).isEqualTo(written.get(i));
                assertThat(r.get("source").asText()).isEqualTo(i < localBase ? "remote" : "local");
            }

            // /metrics is Prometheus text, and it counted what happened.
            PrometheusText metrics = PrometheusText.parse(get(daemon.base + "/metrics"));
            assertThat(metrics.types).containsEntry("felix_offload_segments_total", "counter")
                    .containsEntry("felix_offload_lag_segments", "gauge")
                    .containsEntry("felix_store_upload_seconds", "histogram");
            assertThat(metrics.value("felix_offload_segments_total", "")).isGreaterThanOrEqualTo(before + 3);
            assertThat(metrics.value("felix_offload_bytes_total", "")).isPositive();
            assertThat(metrics.value("felix_remote_reads_total", "")).isPositive();
            assertThat(metrics.value("felix_chunk_cache_misses_total", "")).isPositive();
            assertThat(metrics.value("felix_local_bytes", "")).isLessThanOrEqualTo(LOCAL_LIMIT);
            assertThat(metrics.value("felix_retention_deleted_segments_total", "{where=\"local\"}")).isPositive();
            assertThat(metrics.value("felix_offload_verification_failures_total", "")).isZero();

            FelixJar.await("every pass has run and the daemon is ready", Duration.ofSeconds(60), () -> {
                try {
                    return status(daemon.base + "/health") == 200
                            && JSON.readTree(get(daemon.base + "/health")).get("passes").get("scrub").has("last");
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            });

            // SIGTERM: a clean stop, exit 0, and nothing of the credentials anywhere in its output.
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
            String output = daemon.stdout() + daemon.stderr();
            assertThat(output).contains("stopping", "stopped").doesNotContain(env.get("AWS_SECRET_ACCESS_KEY"));
        }

        // What it left is whole: the root checks clean and reads across the local base still work.
        FelixJar.Result fsck = FelixJar.inside(work, Map.of(), "fsck", "fsck", "--data-dir", "data");
        assertThat(fsck.exitCode()).as(fsck.out() + fsck.err()).isZero();
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub", "scrub", "--config", config.toString(), "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
        assertThat(JSON.readTree(scrub.out()).get("entries_checked").asInt()).isPositive();
    }

    @Test
    void sigtermDuringAnOffloadEndsBetweenSegmentsAndLeavesNothingHalfDone() throws Exception {
        S3Server s3 = S3Servers.s3mock();
        String bucket = s3.createBucket("daemon-sigterm-it");
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "data", "--records", "3000",
                "--payload-bytes", "200", "--segment-bytes", "65536");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: data",
                "store: " + storeUri(s3, bucket),
                "node-id: it-node",
                "offload.schedule: '* * * * * ?'",
                "offload.bandwidth: 64KiB", // about a second a segment, so the stop comes mid-pass
                "retention.schedule: 'off'",
                "scrub.schedule: 'off'",
                "http.port: 0",
                "shutdown.grace: 30s",
                ""), StandardCharsets.UTF_8);
        Map<String, String> env = credentials(s3);
        String dir = new ShardKey("acme", "default", "stream-0", 0).directoryName();
        int total;
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, env, config)) {
            total = shard(daemon.base, dir).get("offload_lag").get("segments").asInt()
                    + shard(daemon.base, dir).get("remote_segments").asInt();
            assertThat(total).isGreaterThanOrEqualTo(8);
            FelixJar.await("the pass is under way", Duration.ofSeconds(90),
                    () -> shard(daemon.base, dir).get("remote_segments").asInt() >= 2);
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
            assertThat(daemon.stderr()).contains("stopping");
        }
        // It stopped early, between segments: every entry it wrote names a whole, verified object, and
        // no object was left without an entry.
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub", "scrub", "--config", config.toString(), "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
        JsonNode report = JSON.readTree(scrub.out());
        assertThat(report.get("entries_checked").asInt()).isPositive().isLessThan(total);
        FelixJar.Result fsck = FelixJar.inside(work, Map.of(), "fsck", "fsck", "--data-dir", "data");
        assertThat(fsck.exitCode()).as(fsck.out() + fsck.err()).isZero();

        // The next run goes on from there and finishes.
        FelixJar.Result offload = FelixJar.inside(work, env, "offload", "offload", "--config", config.toString(), "--json");
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        FelixJar.Result after = FelixJar.inside(work, env, "scrub2", "scrub", "--config", config.toString(), "--json");
        assertThat(after.exitCode()).as(after.out()).isZero();
        assertThat(JSON.readTree(after.out()).get("entries_checked").asInt()).isEqualTo(total);
    }
}
