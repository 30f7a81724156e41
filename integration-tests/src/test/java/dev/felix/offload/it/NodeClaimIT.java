package dev.felix.offload.it;

import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15's reproductions 3 and 4 through the runnable jar: two data roots given one node id, and a
 * root pointed at a store that does not hold its objects. Each ends with every record of every
 * shard read back byte for byte and scrub clean.
 */
@Order(3) // the longest classes start first (see the pom): 94 s
class NodeClaimIT {

    /**
     * No broker rewrites the manifests here: an entry need not stand before its local segment goes, so an
     * offload that unlinks does not wait the default 5 s for it.
     */
    private static final String NO_SETTLE = "0s";

    @TempDir
    Path work;

    /** A store for one test on the filesystem or S3Proxy (which ignores If-None-Match). */
    private record Store(String uri, Map<String, String> env, S3Server s3, String bucket, Path dir) {

        static Store of(String kind, Path work, String name) throws IOException {
            if (kind.equals("fs")) {
                Path dir = Files.createDirectories(work.resolve(name));
                return new Store(dir.toUri().toString(), Map.of(), null, null, dir);
            }
            S3Server s3 = S3Servers.s3proxy();
            String bucket = s3.createBucket(name);
            return new Store(DaemonIT.storeUri(s3, bucket), DaemonIT.credentials(s3), s3, bucket, null);
        }

        /** Every key with its size, the store's reserved dot-folders left out. */
        TreeMap<String, Long> objects() throws IOException {
            TreeMap<String, Long> out = new TreeMap<>();
            if (s3 != null) {
                for (S3Object o : s3.admin().listObjectsV2Paginator(b -> b.bucket(bucket)).contents()) {
                    if (!o.key().startsWith(".")) {
                        out.put(o.key(), o.size());
                    }
                }
                return out;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    String key = dir.relativize(f).toString();
                    if (!key.startsWith(".")) {
                        out.put(key, Files.size(f));
                    }
                }
            }
            return out;
        }
    }

    private void generate(String root, String tenant, int seed) throws Exception {
        ok(FelixJar.inside(work, Map.of(), "generate-" + root, "generate", "--data-dir", root, "--tenant", tenant,
                "--streams", "1", "--records", "3000", "--payload-bytes", "200", "--segment-bytes", "65536",
                "--seed", "" + seed));
    }

    private String shardOf(String root) throws IOException {
        try (Stream<Path> dirs = Files.list(work.resolve(root))) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow();
        }
    }

    /** Every record of the shard from offset 0 as JSON lines, without where each came from. */
    private List<String> records(String root, Map<String, String> env, String store, String name) throws Exception {
        FelixJar.Result r = ok(FelixJar.inside(work, env, name, "read", "--data-dir", root, "--store", store, "--shard",
                shardOf(root), "--from", "0", "--max-records", "100000", "--format", "json"));
        return r.out().lines().map(l -> l.replaceAll(",\"source\":\"[a-z]+\"", "")).toList();
    }

    private Path config(String name, String root, String store, String... more) throws IOException {
        Path file = work.resolve(name);
        StringBuilder b = new StringBuilder("data-dir=" + root + "\nstore=" + store + "\norphans.grace=0s\nhttp.port=0\n");
        for (String line : more) {
            b.append(line).append('\n');
        }
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
        return file;
    }

    private static FelixJar.Result ok(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        return r;
    }

    private static FelixJar.Result refused(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).doesNotContain("\tat ");
        return r;
    }

    private static Map<String, String> env(Store store, String nodeId) {
        Map<String, String> env = new HashMap<>(store.env());
        env.put("FELIX_NODE_ID", nodeId);
        return env;
    }

    /**
     * Reproduction 3: {@code FELIX_NODE_ID=broker} on two data roots offloading into one store. The
     * second is refused by offload, retention (whose sweep would have taken the first one's objects
     * for orphans) and the daemon, naming the node id and the first root; with its own node id it
     * goes on, and nothing of either is lost.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void twoRootsWithOneNodeIdLoseNothing(String kind) throws Exception {
        Store store = Store.of(kind, work, "claim-shared");
        Map<String, String> broker = env(store, "broker");
        generate("a", "alpha", 1);
        generate("b", "beta", 2);
        List<String> aWritten = records("a", broker, store.uri(), "read-a-before");
        List<String> bWritten = records("b", broker, store.uri(), "read-b-before");
        assertThat(aWritten).hasSize(3000);

        ok(FelixJar.inside(work, broker, "offload-a", "offload", "--data-dir", "a", "--store", store.uri(),
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE));
        assertThat(store.objects()).containsKey("broker/node.claim");
        Map<String, Long> afterA = store.objects();

        FelixJar.Result offloadB = refused(FelixJar.inside(work, broker, "offload-b", "offload", "--data-dir", "b",
                "--store", store.uri(), "--keep-local-segments", "2"));
        assertThat(offloadB.err()).contains("node id 'broker'").contains("FELIX_NODE_ID").contains("node-id")
                .contains("--store").contains(work.resolve("a").toAbsolutePath().normalize().toString())
                .contains("--take-over-node-id");
        Path bConfig = config("b.properties", "b", store.uri());
        FelixJar.Result retentionB = refused(FelixJar.inside(work, broker, "retention-b", "retention", "--config",
                bConfig.toString()));
        assertThat(retentionB.err()).contains("b.properties: store").contains("claimed");
        FelixJar.Result daemonB = refused(FelixJar.inside(work, broker, "run-b", "run", "--config", bConfig.toString()));
        assertThat(daemonB.err()).contains("node id 'broker'");
        assertThat(store.objects()).as("nothing written or deleted by b").isEqualTo(afterA);
        assertThat(Files.exists(work.resolve("b/offload-root-id"))).isFalse();

        FelixJar.Result scrubB = FelixJar.inside(work, broker, "scrub-b", "scrub", "--data-dir", "b", "--store", store.uri());
        assertThat(scrubB.out() + scrubB.err()).as("a reader is warned, not refused").contains("claimed");

        // b gets its own node id; both go on, and both sweep with no grace period
        Map<String, String> brokerB = env(store, "broker-b");
        ok(FelixJar.inside(work, brokerB, "offload-b-own", "offload", "--data-dir", "b", "--store", store.uri(),
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE));
        ok(FelixJar.inside(work, brokerB, "retention-b-own", "retention", "--config", bConfig.toString()));
        Path aConfig = config("a.properties", "a", store.uri());
        FelixJar.Result retentionA = ok(FelixJar.inside(work, broker, "retention-a", "retention", "--config",
                aConfig.toString(), "--json"));
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(retentionA.out()).get("orphans")
                .get("deleted")).as("the sweep deletes nothing, not the claim either").isEmpty();
        assertThat(store.objects()).containsKey("broker/node.claim").containsKey("broker-b/node.claim");

        assertThat(records("a", broker, store.uri(), "read-a-after")).isEqualTo(aWritten);
        assertThat(records("b", brokerB, store.uri(), "read-b-after")).isEqualTo(bWritten);
        ok(FelixJar.inside(work, broker, "scrub-a", "scrub", "--data-dir", "a", "--store", store.uri()));
        ok(FelixJar.inside(work, brokerB, "scrub-b-own", "scrub", "--data-dir", "b", "--store", store.uri()));
    }

    /**
     * Reproduction 4: a root whose store setting changed to a new, empty bucket. Offload, retention
     * and the daemon exit 2 naming the store setting and write nothing there; pointed back, every
     * record reads back and scrub is clean.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void aRootPointedAtAnotherStoreWritesNothingThere(String kind) throws Exception {
        Store first = Store.of(kind, work, "claim-first");
        Store second = Store.of(kind, work, "claim-second");
        Map<String, String> env = env(first, "broker");
        generate("data", "acme", 3);
        List<String> written = records("data", env, first.uri(), "read-before");
        ok(FelixJar.inside(work, env, "offload", "offload", "--data-dir", "data", "--store", first.uri(),
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE));

        FelixJar.Result moved = refused(FelixJar.inside(work, env, "offload-second", "offload", "--data-dir", "data",
                "--store", second.uri(), "--keep-local-segments", "2"));
        assertThat(moved.err()).contains("--store").contains("holds no node claim").contains("is absent");
        assertThat(moved.out()).doesNotContain("every eligible segment is offloaded");
        Path changed = config("felix.properties", "data", second.uri());
        FelixJar.Result retention = refused(FelixJar.inside(work, env, "retention-second", "retention", "--config",
                changed.toString()));
        assertThat(retention.err()).contains("felix.properties: store");
        FelixJar.Result daemon = refused(FelixJar.inside(work, env, "run-second", "run", "--config", changed.toString()));
        assertThat(daemon.err()).contains("felix.properties: store");
        assertThat(second.objects()).as("nothing written to the other store").isEmpty();

        // scrub, a reader, warns and goes on (and finds every entry missing there)
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub-second", "scrub", "--config", changed.toString());
        assertThat(scrub.out() + scrub.err()).contains("holds no node claim");

        Path back = config("felix.properties", "data", first.uri());
        ok(FelixJar.inside(work, env, "retention-first", "retention", "--config", back.toString()));
        assertThat(records("data", env, first.uri(), "read-after")).isEqualTo(written);
        FelixJar.Result clean = ok(FelixJar.inside(work, env, "scrub-first", "scrub", "--config", back.toString()));
        assertThat(clean.out()).contains("node claim: held by this root");
    }

    /** A store that cannot be reached without credentials fails at once, even with nothing to upload. */
    @Test
    void aStoreWithoutCredentialsFailsAtOnceWithNothingToUpload() throws Exception {
        Files.createDirectories(work.resolve("empty"));
        Map<String, String> env = Map.of("FELIX_NODE_ID", "broker", "AWS_CONFIG_FILE", work.resolve("none").toString(),
                "AWS_SHARED_CREDENTIALS_FILE", work.resolve("none").toString());
        String nowhere = "s3://nobucket?endpoint=http://127.0.0.1:9&region=us-east-1&path-style=true";
        FelixJar.Result r = FelixJar.run(work, env, "offload-nowhere", "offload", "--data-dir", "empty", "--store", nowhere);
        assertThat(r.exitCode()).as("a store failure is offload's exit 1: " + r.out() + r.err()).isEqualTo(1);
        // The first request fails (the bucket check, before the claim's read), naming the store and why.
        assertThat(r.err()).contains("nobucket").contains("no credentials").doesNotContain("\tat ");
        if (System.getenv("AWS_ACCESS_KEY_ID") == null) {
            assertThat(r.err()).as("the credential hint").contains("AWS_ACCESS_KEY_ID");
        }
        assertThat(r.out()).doesNotContain("every eligible segment is offloaded");
    }
}
