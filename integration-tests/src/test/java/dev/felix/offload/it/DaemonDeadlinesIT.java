package dev.felix.offload.it;

import org.junit.jupiter.api.parallel.Isolated;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.MultipartUpload;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deadlines of the daemon ({@code run --config}, the jar) against a store that does not answer, made
 * by a {@link FaultProxy} in front of S3Proxy (Ceph RGW in a subclass) that accepts connections and
 * then holds requests: the HTTP endpoint is up before the store answers, the start-up wait is logged
 * and a SIGTERM during it exits 0; the probe gives up within the store's timeouts; {@code /read}
 * answers 504 at its deadline; a SIGTERM during a multipart upload starts no request after the
 * signal but the upload's abort, and leaves no upload open, also when the store hangs.
 */
@Isolated("it holds the daemon to its deadlines: nothing else runs beside it")
class DaemonDeadlinesIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final String SHARD = new ShardKey("acme", "default", "stream-0", 0).directoryName();

    @TempDir
    Path work;

    private S3Server s3;
    private FaultProxy proxy;
    private String bucket;

    /** The server behind the proxy: S3Proxy here, another in a subclass. */
    protected S3Server server() {
        return S3Servers.s3proxy();
    }

    @BeforeEach
    void start() throws IOException {
        s3 = server();
        bucket = s3.createBucket("deadlines");
        proxy = FaultProxy.start(s3.endpoint());
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
    }

    private String storeUri(String extra) {
        return "s3://" + bucket + "?endpoint=" + proxy.endpoint() + "&region=" + s3.region() + "&path-style=true"
                + (extra.isEmpty() ? "" : "&" + extra);
    }

    private Path config(String store, String... more) throws IOException {
        Path config = work.resolve("felix.yaml");
        List<String> lines = new java.util.ArrayList<>(List.of("data-dir: data", "store: " + store, "node-id: deadlines",
                "http.port: 0"));
        lines.addAll(List.of(more));
        Files.writeString(config, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        return config;
    }

    private void generate(String... args) throws Exception {
        List<String> all = new java.util.ArrayList<>(List.of("generate", "--data-dir", "data", "--streams", "1",
                "--shards-per-stream", "1"));
        all.addAll(List.of(args));
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate", all.toArray(String[]::new));
        assertThat(gen.exitCode()).as(gen.err()).isZero();
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static boolean isPartUpload(String method, String target) {
        return method.equals("PUT") && target.contains("partNumber=");
    }

    private List<MultipartUpload> openUploads() {
        return s3.admin().listMultipartUploads(ListMultipartUploadsRequest.builder().bucket(bucket).build()).uploads();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theEndpointAnswersWhileTheStoreKeepsItWaitingAndSigtermThenExitsZero() throws Exception {
        generate("--records", "200");
        proxy.policy((m, t) -> new FaultProxy.NoAnswer());
        Path config = config(storeUri(""), "shutdown.grace: 10s");
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, DaemonIT.credentials(s3), config)) {
            HttpResponse<String> health = get(daemon.base + "/health");
            assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
            JsonNode h = JSON.readTree(health.body());
            assertThat(h.get("ready").asBoolean()).isFalse();
            assertThat(h.get("reasons").toString()).contains("store: waiting for its first answer");
            assertThat(get(daemon.base + "/health/live").statusCode()).isEqualTo(200);
            assertThat(get(daemon.base + "/metrics").body()).contains("felix_store_ready 0.0");
            FelixJar.await("a line says what the daemon waits for", Duration.ofSeconds(60),
                    () -> daemon.stderr().contains("waiting for the store to answer"));
            // The line and the first request come from two of the daemon's threads: on a loaded machine the line
            // can come first, before the request has reached the proxy.
            FelixJar.await("the store holds a request of the daemon's unanswered", Duration.ofSeconds(60),
                    () -> !proxy.exchanges().isEmpty());

            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
            assertThat(daemon.stderr()).contains("stopping", "stopped");
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theProbeGivesUpOnASilentStoreWithinItsTimeouts() throws Exception {
        generate("--records", "200");
        proxy.policy((m, t) -> new FaultProxy.NoAnswer());
        // each attempt waits 2 s for an answer; no retry begins after 4 s
        Path config = config(storeUri("read-timeout=2&api-call-timeout=4&max-attempts=3"), "shutdown.grace: 5s");
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, DaemonIT.credentials(s3), config)) {
            FelixJar.await("the probe gives up", Duration.ofSeconds(90),
                    () -> daemon.stderr().contains("store did not answer"));
            assertThat(daemon.stderr()).containsPattern("store did not answer \\(S3 store, bucket " + bucket
                    + " at " + proxy.endpoint() + "\\): transient_store: .*(?i)timed out");
            String reasons = JSON.readTree(get(daemon.base + "/health").body()).get("reasons").toString();
            assertThat(reasons).contains("transient_store").containsIgnoringCase("timed out");
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aReadBelowTheLocalBaseAnswers504AtItsDeadlineWhenTheStoreHangs() throws Exception {
        generate("--records", "3000", "--payload-bytes", "200", "--segment-bytes", "65536");
        // an attempt at most 5 s (so also its silence), so that a fetch the deadline gave up on ends soon after
        Path config = config(storeUri("attempt-timeout=5&api-call-timeout=6&max-attempts=2"),
                "offload.schedule: '* * * * * ?'", "retention.schedule: '* * * * * ?'", "scrub.schedule: 'off'",
                "local.retention.bytes: 64KiB", "http.read.timeout: 2s", "shutdown.grace: 5s",
                // no broker rewrites the manifest here: older segments need not wait 5 s to leave local disk
                "offload.unlink-settle: 0s");
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, DaemonIT.credentials(s3), config)) {
            FelixJar.await("older segments are only in the store", Duration.ofSeconds(120), () -> {
                try {
                    for (JsonNode s : JSON.readTree(get(daemon.base + "/shards").body()).get("shards")) {
                        if (s.get("dir").asText().equals(SHARD)) {
                            return s.get("local_base").asLong() > 0;
                        }
                    }
                    return false;
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            proxy.policy((m, t) -> m.equals("GET") ? new FaultProxy.NoAnswer() : null);
            HttpResponse<String> late = get(daemon.base + "/read?shard=" + SHARD + "&from=0&max=10");
            assertThat(late.statusCode()).as(late.body()).isEqualTo(504);
            JsonNode error = JSON.readTree(late.body());
            assertThat(error.get("error").asText()).isEqualTo("read_timeout");
            assertThat(error.get("timeout_ms").asLong()).isEqualTo(2000);
            assertThat(error.get("message").asText()).contains(SHARD, "http.read.timeout");
            assertThat(get(daemon.base + "/metrics").body()).as("a read the store left unanswered")
                    .contains("felix_store_ready 0.0");
            assertThat(get(daemon.base + "/health").body()).contains("read_timeout");

            proxy.policy(FaultProxy.PASS);
            FelixJar.await("reads are answered again once the store answers", Duration.ofSeconds(120), () -> {
                try {
                    return get(daemon.base + "/read?shard=" + SHARD + "&from=0&max=10").statusCode() == 200;
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            FelixJar.await("the store counts as ready again", Duration.ofSeconds(60), () -> {
                try {
                    return get(daemon.base + "/metrics").body().contains("felix_store_ready 1.0");
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
        }
    }

    /** A root whose one shard holds two sealed segments of about 11 MiB, each three parts of at most 5 MiB. */
    private Path multipartRoot(String... more) throws Exception {
        generate("--records", "360", "--payload-bytes", "65536", "--segment-bytes", "11534336");
        List<String> lines = new java.util.ArrayList<>(List.of("offload.schedule: '* * * * * ?'",
                "offload.parallelism: 1", "retention.schedule: 'off'", "scrub.schedule: 'off'"));
        lines.addAll(List.of(more));
        return config(storeUri("multipart-threshold=5242880&part-size=5242880&part-concurrency=2"),
                lines.toArray(String[]::new));
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sigtermDuringAMultipartUploadStartsNoRequestButItsAbort() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        proxy.policy((m, t) -> isPartUpload(m, t) ? new FaultProxy.HoldUntilReleased(release) : null);
        // One segment's upload at a time: with the default bound the pass begins the second segment's
        // upload beside the first, and its first request could land between the count taken below and
        // the signal, where it is not a request begun after the signal.
        Path config = multipartRoot("shutdown.grace: 30s", "offload.max-bytes-in-flight: 12MiB");
        int sentBefore;
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, DaemonIT.credentials(s3), config)) {
            FelixJar.await("two parts of an upload are on their way", Duration.ofSeconds(90), () -> proxy.heldNow() == 2);
            sentBefore = proxy.exchanges().size();
            daemon.process.destroy(); // SIGTERM
            FelixJar.await("the daemon takes the signal", Duration.ofSeconds(30),
                    () -> daemon.stderr().contains("stopping: "));
            release.countDown(); // the parts under way may end now
            assertThat(daemon.process.waitFor(2, TimeUnit.MINUTES)).as("the daemon ends").isTrue();
            assertThat(daemon.process.exitValue()).as(daemon.stderr()).isZero();
        }
        List<FaultProxy.Exchange> after = proxy.exchanges().subList(sentBefore, proxy.exchanges().size());
        assertThat(after).as("requests begun after the signal").isNotEmpty()
                .allSatisfy(e -> assertThat(e.method() + " " + e.target()).matches("DELETE .*uploadId=.*"));
        assertThat(openUploads()).as("multipart uploads left open").isEmpty();
        List<String> segments = s3.admin().listObjectsV2(b -> b.bucket(bucket)).contents().stream()
                .map(o -> o.key()).filter(k -> k.endsWith(".segment")).toList();
        assertThat(segments).as("no segment object from the upload cut short").isEmpty();
        assertThat(work.resolve("data").resolve(SHARD).resolve("offload.manifest")).doesNotExist();
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sigtermWithTheStoreHangingMidUploadAbortsTheUploadAndExitsZero() throws Exception {
        proxy.policy((m, t) -> isPartUpload(m, t) ? new FaultProxy.NoAnswer() : null);
        Path config = multipartRoot("shutdown.grace: 6s");
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, DaemonIT.credentials(s3), config)) {
            FelixJar.await("an upload's parts are under way", Duration.ofSeconds(90),
                    () -> proxy.exchanges("PUT", t -> t.contains("partNumber=")).size() >= 2);
            FelixJar.await("the store has the upload open", Duration.ofSeconds(30), () -> !openUploads().isEmpty());
            long signalled = System.nanoTime();
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled);
            System.out.println("SIGTERM with the store hanging mid-upload on " + s3.name() + ": exit 0 after " + millis
                    + " ms (shutdown.grace 6 s)");
        }
        assertThat(openUploads()).as("multipart uploads left open").isEmpty();
    }
}
