package dev.felix.offload.it;

import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.ListObjectVersionsResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The capability probe is paid for once, through the runnable jar against S3Mock (in a bucket with
 * versioning on, so every write and delete leaves a version or a delete marker that a listing shows,
 * even once the object is gone) behind a recording proxy:
 * <ul>
 *   <li>the first offload probes and keeps what it found in the data root (with the endpoint, bucket
 *       and the server's identity) and in the store; a second offload and a daemon start send no
 *       probe request;</li>
 *   <li>{@code read} (of records in the store) and {@code scrub} neither put nor delete: the bucket's
 *       versions are the same before and after, with findings kept in the root, with only the
 *       store's copy, and with none anywhere;</li>
 *   <li>findings are learnt again when an answer contradicts them (another server answering; a
 *       create-only put refused with 412 where they say the server ignores the condition), when
 *       they are older than {@code probe-max-age}, and when {@code --probe-store} asks.</li>
 * </ul>
 */
class ProbeFindingsIT {

    private static final String FINDINGS = "offload-store-findings";

    @TempDir
    Path work;

    private S3Server s3;
    private FaultProxy proxy;
    private String bucket;
    private Map<String, String> env;

    @BeforeEach
    void startProxy() throws Exception {
        s3 = S3Servers.s3mock();
        bucket = s3.createBucket("probe-findings");
        s3.admin().putBucketVersioning(b -> b.bucket(bucket).versioningConfiguration(v -> v.status("Enabled")));
        proxy = FaultProxy.start(s3.endpoint());
        env = new HashMap<>(DaemonIT.credentials(s3));
        env.put("FELIX_NODE_ID", "probed");
    }

    @AfterEach
    void stopProxy() throws IOException {
        proxy.close();
    }

    private String uri(String more) {
        return "s3://" + bucket + "/p?endpoint=" + proxy.endpoint() + "&region=" + s3.region() + "&path-style=true"
                + "&max-attempts=2" + more;
    }

    private FelixJar.Result ok(String name, String... args) throws Exception {
        FelixJar.Result r = FelixJar.inside(work, env, name, args);
        assertThat(r.exitCode()).as(name + ": " + r.out() + r.err()).isZero();
        assertThat(r.err()).as(name).doesNotContain("\tat ");
        return r;
    }

    private void generate(String root) throws Exception {
        ok("generate-" + root, "generate", "--data-dir", root, "--streams", "1", "--records", "2000",
                "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "7");
    }

    private String shardOf(String root) throws IOException {
        try (Stream<Path> dirs = Files.list(work.resolve(root))) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow();
        }
    }

    /** Requests the probe sent since the last reset: anything under its reserved folder. */
    private List<FaultProxy.Exchange> probeRequests() {
        return proxy.exchanges().stream().filter(x -> x.target().contains(".felix-probe")).toList();
    }

    /** Every request that writes or deletes: PUT, POST (multipart, batch delete) and DELETE. */
    private List<String> writes() {
        return proxy.exchanges().stream().filter(x -> !x.method().equals("GET") && !x.method().equals("HEAD"))
                .map(x -> x.method() + " " + x.target()).toList();
    }

    /** Every version and delete marker in the bucket: what any put or delete since would have added to. */
    private List<String> versions() {
        List<String> out = new ArrayList<>();
        String keyMarker = null;
        String versionMarker = null;
        while (true) {
            String km = keyMarker;
            String vm = versionMarker;
            ListObjectVersionsResponse page = s3.admin().listObjectVersions(b -> b.bucket(bucket).keyMarker(km)
                    .versionIdMarker(vm));
            page.versions().forEach(v -> out.add("version " + v.key() + " " + v.versionId() + " " + v.size()));
            page.deleteMarkers().forEach(d -> out.add("delete-marker " + d.key() + " " + d.versionId()));
            if (!Boolean.TRUE.equals(page.isTruncated())) {
                return out.stream().sorted().toList();
            }
            keyMarker = page.nextKeyMarker();
            versionMarker = page.nextVersionIdMarker();
        }
    }

    private String findings(String root) throws IOException {
        return Files.readString(work.resolve(root).resolve(FINDINGS), StandardCharsets.US_ASCII);
    }

    @Test
    void theFirstOffloadProbesAndKeepsWhatItFoundAndLaterCommandsReuseIt() throws Exception {
        generate("data");
        ok("offload-1", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(probeRequests()).as("the first offload probes").isNotEmpty();
        String kept = findings("data");
        assertThat(kept).startsWith("felix-offload store findings 1\n")
                .contains("endpoint=" + proxy.endpoint() + "\n", "bucket=" + bucket + "\n", "checksum=auto\n",
                        "server=\n", "crc32-verified=true\n", "create-only-honoured=true\n");
        assertThat(s3.admin().getObjectAsBytes(b -> b.bucket(bucket).key("p/.felix-store/findings")).asUtf8String())
                .as("the store's copy").contains("bucket=" + bucket + "\n", "crc32-verified=true\n");

        proxy.reset();
        ok("offload-2", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(probeRequests()).as("a second offload reuses the findings").isEmpty();
        assertThat(proxy.exchanges()).as("it still talks to the store").isNotEmpty();

        Path config = work.resolve("run.properties");
        Files.writeString(config, "data-dir=" + work.resolve("data") + "\nstore=" + uri("") + "\nhttp.port=0\n"
                + "offload.schedule=0 0 1 1 *\nretention.schedule=0 0 1 1 *\nscrub.schedule=0 0 1 1 *\n");
        proxy.reset();
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, env, config)) {
            assertThat(daemon.terminate()).isZero();
        }
        assertThat(probeRequests()).as("a daemon start reuses them too").isEmpty();
        assertThat(findings("data")).as("and leaves them as they were").isEqualTo(kept);
    }

    @Test
    void readAndScrubNeitherPutNorDeleteWithFindingsKeptInTheRootInTheStoreOrNowhere() throws Exception {
        generate("data");
        ok("offload", "offload", "--data-dir", "data", "--store", uri(""), "--keep-local-segments", "1");
        List<String> before = versions();
        assertThat(before).isNotEmpty();

        // Kept in the root.
        proxy.reset();
        readEverything("read-kept");
        ok("scrub-kept", "scrub", "--data-dir", "data", "--store", uri(""), "--full");
        assertThat(versions()).as("the bucket's versions after read and scrub with findings in the root")
                .isEqualTo(before);
        assertThat(writes()).as("requests of read and scrub with findings in the root").isEmpty();

        // Only the store's copy: a root that never probed (its findings file gone).
        Files.delete(work.resolve("data").resolve(FINDINGS));
        proxy.reset();
        readEverything("read-copy");
        ok("scrub-copy", "scrub", "--data-dir", "data", "--store", uri(""));
        assertThat(versions()).as("the bucket's versions after read and scrub with the store's copy only")
                .isEqualTo(before);
        assertThat(writes()).as("requests of read and scrub with the store's copy only").isEmpty();
        assertThat(work.resolve("data").resolve(FINDINGS)).as("read-only commands write nothing in the root")
                .doesNotExist();

        // None anywhere: the store's copy gone too (through the admin client, so it adds its own marker).
        s3.admin().deleteObject(b -> b.bucket(bucket).key("p/.felix-store/findings"));
        before = versions();
        proxy.reset();
        readEverything("read-none");
        ok("scrub-none", "scrub", "--data-dir", "data", "--store", uri(""));
        assertThat(versions()).as("the bucket's versions after read and scrub with no findings anywhere")
                .isEqualTo(before);
        assertThat(writes()).as("requests of read and scrub with no findings anywhere").isEmpty();
        assertThat(probeRequests()).isEmpty();
    }

    /** Every record of the root's shard from offset 0, most of them from the store. */
    private void readEverything(String name) throws Exception {
        FelixJar.Result r = ok(name, "read", "--data-dir", "data", "--store", uri(""), "--shard", shardOf("data"),
                "--from", "0", "--max-records", "100000", "--json");
        assertThat(r.out().lines().filter(l -> l.contains("\"source\":\"remote\"")).count()).as(name).isPositive();
        assertThat(r.out().lines().count()).as(name).isEqualTo(2000);
    }

    @Test
    void anotherServerAnsweringContradictsTheFindingsAndTheyAreLearntAgain() throws Exception {
        generate("data");
        ok("offload-1", "offload", "--data-dir", "data", "--store", uri(""));
        Path file = work.resolve("data").resolve(FINDINGS);
        // As if learnt from another server at this endpoint, one that said it checks nothing.
        Files.writeString(file, findings("data").replace("server=\n", "server=Jetty(11.0.25)\n")
                .replace("crc32-verified=true", "crc32-verified=false"), StandardCharsets.US_ASCII);
        removeManifests("data");
        proxy.reset();
        FelixJar.Result r = ok("offload-2", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(r.err()).contains("the server answers as a server sending no Server header")
                .contains("'Jetty(11.0.25)'");
        assertThat(probeRequests()).as("the contradicted findings are learnt again").isNotEmpty();
        assertThat(findings("data")).contains("server=\n", "crc32-verified=true\n").doesNotContain("Jetty");
    }

    @Test
    void aCreateOnlyPutRefusedWhereTheFindingsSayTheConditionIsIgnoredContradictsThem() throws Exception {
        generate("data");
        ok("offload-1", "offload", "--data-dir", "data", "--store", uri(""));
        Path file = work.resolve("data").resolve(FINDINGS);
        Files.writeString(file, findings("data").replace("create-only-honoured=true", "create-only-honoured=false"),
                StandardCharsets.US_ASCII);
        // Offloaded again from scratch: each key is headed first (the findings say If-None-Match is
        // ignored), and the first head is answered "absent" though the object is there, so the
        // create-only put meets the server's own 412.
        removeManifests("data");
        proxy.reset();
        proxy.inject("HEAD", t -> t.contains(".segment") || t.contains(".index"), new FaultProxy.ErrorAnswer(404, "NoSuchKey"), 1);
        FelixJar.Result r = ok("offload-2", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(r.err()).contains("was refused with", "though the server was found to ignore If-None-Match");
        // Learnt again before their next use in this command (a probe), or, where the contradicting put
        // was its last request, dropped from the root when the store closed, so that the next command
        // takes findings that hold (the store's copy, which the operator's edit left alone, or a probe).
        if (probeRequests().isEmpty()) {
            if (Files.exists(file)) {
                assertThat(findings("data")).as("the contradicted findings, dropped").doesNotContain("create-only-honoured=false");
            }
            proxy.reset();
            ok("offload-3", "offload", "--data-dir", "data", "--store", uri(""));
        }
        assertThat(findings("data")).contains("create-only-honoured=true\n");
    }

    @Test
    void findingsOlderThanTheirAgeOrAnOperatorsRequestAreLearntAgain() throws Exception {
        generate("data");
        ok("offload-1", "offload", "--data-dir", "data", "--store", uri(""));
        Path file = work.resolve("data").resolve(FINDINGS);
        String learnt = findings("data").lines().filter(l -> l.startsWith("learnt-at=")).findFirst().orElseThrow();

        // Younger than the default day: reused.
        proxy.reset();
        ok("offload-young", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(probeRequests()).isEmpty();

        // Two days old (and the store's copy too): learnt again.
        String old = "learnt-at=" + Instant.now().minus(Duration.ofDays(2)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        Files.writeString(file, findings("data").replace(learnt, old), StandardCharsets.US_ASCII);
        s3.admin().putObject(b -> b.bucket(bucket).key("p/.felix-store/findings"),
                software.amazon.awssdk.core.sync.RequestBody.fromString(findings("data")));
        proxy.reset();
        ok("offload-aged", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(probeRequests()).as("aged findings are learnt again").isNotEmpty();
        assertThat(findings("data")).doesNotContain(old);

        // A shorter probe-max-age in the store URI.
        proxy.reset();
        ok("offload-zero-age", "offload", "--data-dir", "data", "--store", uri("&probe-max-age=0"));
        assertThat(probeRequests()).as("probe-max-age=0 probes at every start").isNotEmpty();

        // Fresh, but the operator asks.
        proxy.reset();
        ok("offload-asked", "offload", "--data-dir", "data", "--store", uri(""), "--probe-store");
        assertThat(probeRequests()).as("--probe-store probes whatever is kept").isNotEmpty();
        proxy.reset();
        ok("offload-after", "offload", "--data-dir", "data", "--store", uri(""));
        assertThat(probeRequests()).isEmpty();
    }

    /**
     * The shards' offload files (manifests, proofs, timestamps), so that the next pass offloads every
     * segment again; the root's own files stay (its lock, and its lease: without it the root would be
     * taken for a copy of itself, which is what the lease is there to stop).
     */
    private void removeManifests(String root) throws IOException {
        Path top = work.resolve(root);
        try (Stream<Path> files = Files.walk(top)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith("offload.")
                    && !p.getParent().equals(top)).toList()) {
                Files.delete(f);
            }
        }
    }
}
