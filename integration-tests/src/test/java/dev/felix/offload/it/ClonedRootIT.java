package dev.felix.offload.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 32's first situation through the runnable jar: {@code cp -a} of a whole data root, the two
 * copies' logs diverging, both offloading to one store (the filesystem store, and S3Proxy, which
 * ignores {@code If-None-Match}). The copy that writes second is stopped before it writes or deletes
 * anything (exit 2, naming both copies and {@code reidentify}); once given its own identity both go
 * on, and each reads back every record it wrote.
 */
@Order(4) // the longest classes start first (see the pom): 91 s
class ClonedRootIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

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

    private static FelixJar.Result ok(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        return r;
    }

    private static FelixJar.Result refused(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).doesNotContain("\tat ");
        return r;
    }

    private String shardOf(String root) throws IOException {
        try (Stream<Path> dirs = Files.list(work.resolve(root))) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow();
        }
    }

    /** Every record of the root's shard from offset 0 as JSON lines, without where each came from. */
    private List<String> records(String root, Store store, String name) throws Exception {
        FelixJar.Result r = ok(FelixJar.inside(work, store.env(), name, "read", "--data-dir", root, "--store", store.uri(),
                "--shard", shardOf(root), "--from", "0", "--max-records", "100000", "--json"));
        return r.out().lines().map(l -> l.replaceAll(",\"source\":\"[a-z]+\"", "")).toList();
    }

    private Path config(String root, Store store) throws IOException {
        Path file = work.resolve(root + ".properties");
        Files.writeString(file, "data-dir=" + root + "\nstore=" + store.uri() + "\norphans.grace=0s\nhttp.port=0\n",
                StandardCharsets.UTF_8);
        return file;
    }

    private void cpA(String from, String to) throws Exception {
        Process p = new ProcessBuilder("cp", "-a", from, to).directory(work.toFile()).inheritIO().start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }

    /** The broker of {@code root} writes records of its own from here on. */
    private void brokerWrites(String root, int seed) throws Exception {
        ok(FelixJar.inside(work, Map.of(), "append-" + root + "-" + seed, "generate", "--data-dir", root, "--streams", "1",
                "--records", "1500", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "" + seed));
    }

    private FelixJar.Result offload(String root, Store store, String name) throws Exception {
        // No broker rewrites the manifests at the same time here: an entry need not stand 5 s before its
        // local segment goes.
        return FelixJar.inside(work, store.env(), name, "offload", "--data-dir", root, "--store", store.uri(),
                "--keep-local-segments", "2", "--unlink-settle", "0s");
    }

    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void aCopyOfAWholeRootIsStoppedBeforeItWritesAndGoesOnWithItsOwnIdentity(String kind) throws Exception {
        Store store = Store.of(kind, work, "clone-store");
        ok(FelixJar.inside(work, Map.of(), "generate-a", "generate", "--data-dir", "a", "--streams", "1", "--records",
                "3000", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "1"));
        ok(offload("a", store, "offload-a-1"));
        cpA("a", "b");
        brokerWrites("a", 11);
        brokerWrites("b", 22);
        List<String> aWritten = records("a", store, "read-a-before");
        List<String> bWritten = records("b", store, "read-b-before");
        assertThat(aWritten).hasSize(4500).isNotEqualTo(bWritten);
        assertThat(bWritten).hasSize(4500);
        assertThat(bWritten.subList(0, 3000)).isEqualTo(aWritten.subList(0, 3000));

        ok(offload("a", store, "offload-a-2"));
        Map<String, Long> afterA = store.objects();
        String aPath = work.resolve("a").toAbsolutePath().normalize().toString();
        String bPath = work.resolve("b").toAbsolutePath().normalize().toString();

        FelixJar.Result offloadB = refused(offload("b", store, "offload-b"));
        assertThat(offloadB.err()).contains("another copy of this data root").contains(aPath).contains(bPath)
                .contains("felix-offload reidentify --data-dir " + bPath).contains("--take-over-node-id");
        assertThat(offloadB.err().lines().filter(l -> l.startsWith("felix-offload:")).count()).isEqualTo(1);
        Path bConfig = config("b", store);
        refused(FelixJar.inside(work, store.env(), "retention-b", "retention", "--config", bConfig.toString()));
        FelixJar.Result daemonB = refused(FelixJar.inside(work, store.env(), "run-b", "run", "--config", bConfig.toString()));
        assertThat(daemonB.err()).contains("another copy of this data root");
        refused(FelixJar.inside(work, store.env(), "forget-b", "forget-shard", "--config", bConfig.toString(), "--shard",
                shardOf("b"), "--yes"));
        assertThat(store.objects()).as("the copy wrote and deleted nothing").isEqualTo(afterA);
        FelixJar.Result readB = FelixJar.inside(work, store.env(), "read-b-warned", "read", "--data-dir", "b", "--store",
                store.uri(), "--shard", shardOf("b"), "--from", "0", "--max-records", "1");
        assertThat(readB.exitCode()).isZero();
        assertThat(readB.err()).as("a reader is warned, not refused").contains("another copy of this data root");

        // the original goes on as before: retention with its sweep, and every record reads back
        Path aConfig = config("a", store);
        FelixJar.Result retentionA = ok(FelixJar.inside(work, store.env(), "retention-a", "retention", "--config",
                aConfig.toString(), "--json"));
        assertThat(JSON.readTree(retentionA.out()).get("orphans").get("deleted")).isEmpty();
        assertThat(records("a", store, "read-a-after")).isEqualTo(aWritten);

        // the copy gets its own identity, and both go on
        FelixJar.Result reid = ok(FelixJar.inside(work, store.env(), "reidentify-b", "reidentify", "--data-dir", "b",
                "--store", store.uri()));
        assertThat(reid.out()).contains("node id ").contains("manifest entries still name objects under node");
        String bNode = Files.readString(work.resolve("b/node-id")).trim();
        String aNode = Files.readString(work.resolve("a/node-id")).trim();
        assertThat(bNode).isNotEqualTo(aNode);
        ok(offload("b", store, "offload-b-own"));
        FelixJar.Result retentionB = ok(FelixJar.inside(work, store.env(), "retention-b-own", "retention", "--config",
                bConfig.toString(), "--json"));
        assertThat(JSON.readTree(retentionB.out()).get("orphans").get("deleted")).isEmpty();
        ok(offload("a", store, "offload-a-3"));
        ok(FelixJar.inside(work, store.env(), "retention-a-again", "retention", "--config", aConfig.toString()));
        assertThat(store.objects()).containsKey(aNode + "/node.claim").containsKey(bNode + "/node.claim");

        assertThat(records("a", store, "read-a-end")).isEqualTo(aWritten);
        assertThat(records("b", store, "read-b-end")).isEqualTo(bWritten);
        ok(FelixJar.inside(work, store.env(), "scrub-a", "scrub", "--data-dir", "a", "--store", store.uri()));
        FelixJar.Result scrubB = ok(FelixJar.inside(work, store.env(), "scrub-b", "scrub", "--data-dir", "b", "--store",
                store.uri()));
        assertThat(scrubB.out()).contains("keys under a node id this root had before reidentify");
    }

    /**
     * A daemon runs over a root while a copy of it takes the node over: the daemon's next pass finds
     * the lease gone to the copy, and the daemon ends, exit 2, naming the copy, instead of going on
     * uploading and sweeping beside it.
     */
    @org.junit.jupiter.api.Test
    void aRunningDaemonEndsWhenACopyOfItsRootTakesTheNode() throws Exception {
        Store store = Store.of("fs", work, "daemon-store");
        ok(FelixJar.inside(work, Map.of(), "generate-a", "generate", "--data-dir", "a", "--streams", "1", "--records",
                "2000", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "1"));
        Path config = work.resolve("a.yaml");
        Files.writeString(config, String.join("\n", "data-dir: a", "store: " + store.uri(),
                "offload.schedule: '* * * * * ?'", "retention.schedule: '* * * * * ?'", "orphans.grace: 0s",
                "http.port: 0", ""), StandardCharsets.UTF_8);
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, Map.of(), config)) {
            FelixJar.await("the daemon offloaded", java.time.Duration.ofSeconds(90), () -> {
                try {
                    return store.objects().keySet().stream().anyMatch(k -> k.endsWith(".segment"));
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            // As a volume snapshot of a live root: a temporary the daemon renames meanwhile can make cp fail;
            // then the copy is taken again.
            for (int attempt = 0; ; attempt++) {
                Process cp = new ProcessBuilder("cp", "-a", "a", "b").directory(work.toFile())
                        .redirectErrorStream(true).redirectOutput(work.resolve("cp.out").toFile()).start();
                assertThat(cp.waitFor(60, TimeUnit.SECONDS)).isTrue();
                if (cp.exitValue() == 0) {
                    break;
                }
                assertThat(attempt).as(FelixJar.read(work.resolve("cp.out"))).isLessThan(10);
                new ProcessBuilder("rm", "-rf", "b").directory(work.toFile()).start().waitFor(60, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(work.resolve("b/daemon.lock"));
            brokerWrites("b", 22);
            // The daemon advances the lease every second, so b's take-over may meet one of its passes at the
            // same moment: then both stop (or the daemon's pass goes on and b stops), and b takes it again.
            for (int attempt = 0; ; attempt++) {
                FelixJar.Result takeOver = FelixJar.inside(work, store.env(), "offload-b-" + attempt, "offload",
                        "--data-dir", "b", "--store", store.uri(), "--take-over-node-id");
                if (takeOver.exitCode() == 0) {
                    break;
                }
                assertThat(takeOver.exitCode()).as(takeOver.err()).isEqualTo(2);
                assertThat(takeOver.err()).contains("this data root");
                assertThat(attempt).as("attempts at taking the node over").isLessThan(10);
            }
            assertThat(daemon.process.waitFor(2, TimeUnit.MINUTES)).as("the daemon ends").isTrue();
            assertThat(daemon.process.exitValue()).as(daemon.stderr()).isEqualTo(2);
            assertThat(daemon.stderr()).contains("another copy of this data root")
                    .contains(work.resolve("b").toAbsolutePath().normalize().toString()).doesNotContain("\tat ");
        }
    }

    /** Both copies started at the same moment: at most one of them goes on, whatever the timing. */
    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void twoCopiesOffloadingAtTheSameMomentNeverBothGoOn(String kind) throws Exception {
        Store store = Store.of(kind, work, "race-store");
        ok(FelixJar.inside(work, Map.of(), "generate-a", "generate", "--data-dir", "a", "--streams", "1", "--records",
                "2000", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "1"));
        ok(offload("a", store, "offload-a-1"));
        cpA("a", "b");
        brokerWrites("a", 11);
        brokerWrites("b", 22);
        List<String> aWritten = records("a", store, "read-a-before");
        List<String> bWritten = records("b", store, "read-b-before");
        Map<String, String> env = new HashMap<>(store.env());
        Process pa = FelixJar.builder(work, env, "race-a", "offload", "--data-dir", "a", "--store", store.uri(),
                "--keep-local-segments", "2").start();
        Process pb = FelixJar.builder(work, env, "race-b", "offload", "--data-dir", "b", "--store", store.uri(),
                "--keep-local-segments", "2").start();
        assertThat(pa.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(pb.waitFor(2, TimeUnit.MINUTES)).isTrue();
        int a = pa.exitValue();
        int b = pb.exitValue();
        String errs = FelixJar.read(work.resolve("race-a.err")) + FelixJar.read(work.resolve("race-b.err"));
        assertThat(List.of(a, b)).as(errs).containsAnyOf(2).allMatch(code -> code == 0 || code == 2);
        assertThat(a == 0 && b == 0).as("never both").isFalse();
        if (a == 0) {
            assertThat(records("a", store, "read-a")).isEqualTo(aWritten);
        }
        if (b == 0) {
            assertThat(records("b", store, "read-b")).isEqualTo(bWritten);
        }
    }
}
