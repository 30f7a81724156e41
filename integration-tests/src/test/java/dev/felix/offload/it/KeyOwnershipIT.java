package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15's reproductions through the runnable jar: shards meeting at one key never lose records,
 * whoever uploads or deletes.
 */
class KeyOwnershipIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * No broker rewrites the manifests here: an entry need not stand before its local segment goes, so an
     * offload that unlinks does not wait the default 5 s for it.
     */
    private static final String NO_SETTLE = "0s";

    @TempDir
    Path work;

    private String shardDirectory() throws Exception {
        try (var dirs = Files.list(work.resolve("data"))) {
            return dirs.map(d -> d.getFileName().toString()).filter(n -> n.startsWith("acme")).sorted().findFirst()
                    .orElseThrow();
        }
    }

    private void generate(String name, int seed) throws Exception {
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), name, "generate", "--data-dir", "data", "--streams", "1",
                "--records", "3000", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "" + seed);
        assertThat(gen.exitCode()).as(gen.err()).isZero();
    }

    /** Every record of the shard from offset 0, without where it came from. */
    private List<String> readAll(Map<String, String> env, String store, String shard, String name) throws Exception {
        FelixJar.Result read = FelixJar.inside(work, env, name, "read", "--data-dir", "data", "--store", store, "--shard", shard,
                "--from", "0", "--max-records", "100000", "--json");
        assertThat(read.exitCode()).as(read.out() + read.err()).isZero();
        return read.out().lines().map(l -> l.replaceAll(",\"source\":\"[a-z]+\"", "")).toList();
    }

    /**
     * Reproduction 1 on S3Proxy, which ignores If-None-Match (so a head guards each put): a stream
     * deleted into {@code .deleted/} and created again under the same directory name.
     */
    @Test
    void aStreamCreatedAgainUnderTheSameNameLosesNothing() throws Exception {
        S3Server s3 = S3Servers.s3proxy();
        String bucket = s3.createBucket("ownership-it");
        String store = DaemonIT.storeUri(s3, bucket);
        Map<String, String> env = new HashMap<>(DaemonIT.credentials(s3));
        env.put("FELIX_NODE_ID", "n1");
        generate("generate-old", 1);
        String shard = shardDirectory();
        FelixJar.Result first = FelixJar.inside(work, env, "offload-old", "offload", "--data-dir", "data", "--store", store,
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE);
        assertThat(first.exitCode()).as(first.out() + first.err()).isZero();
        Files.createDirectories(work.resolve("data/.deleted"));
        Files.move(work.resolve("data").resolve(shard), work.resolve("data/.deleted").resolve(shard));
        generate("generate-new", 2);
        assertThat(shardDirectory()).isEqualTo(shard);
        List<String> written = readAll(env, store, shard, "read-before");
        assertThat(written).hasSize(3000);

        FelixJar.Result collided = FelixJar.inside(work, env, "offload-new", "offload", "--data-dir", "data", "--store", store,
                "--keep-local-segments", "2", "--json");
        assertThat(collided.exitCode()).as(collided.out() + collided.err()).isEqualTo(1);
        JsonNode c = JSON.readTree(collided.out()).get("shards").get(0).get("collision");
        assertThat(c.get("key").asText()).startsWith("n1/" + shard + "/");
        assertThat(c.get("found_crc32").asText()).matches("[0-9a-f]{8}").isNotEqualTo(c.get("expected_crc32").asText());
        assertThat(JSON.readTree(collided.out()).get("segments_unlinked").asInt()).isZero();

        Path config = work.resolve("felix.properties");
        Files.writeString(config, "data-dir=data\nstore=" + store + "\nnode-id=n1\n", StandardCharsets.UTF_8);
        FelixJar.Result retention = FelixJar.inside(work, env, "retention", "retention", "--config", config.toString(),
                "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isZero();
        assertThat(JSON.readTree(retention.out()).get("deleted_stream_directories_finished").asInt()).isEqualTo(1);
        assertThat(readAll(env, store, shard, "read-after-retention")).isEqualTo(written);

        FelixJar.Result again = FelixJar.inside(work, env, "offload-again", "offload", "--data-dir", "data", "--store", store,
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE);
        assertThat(again.exitCode()).as(again.out() + again.err()).isZero();
        assertThat(readAll(env, store, shard, "read-after")).isEqualTo(written);
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub", "scrub", "--config", config.toString());
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
    }

    /** Reproduction 2 on the filesystem store: {@code cp -a SHARD SHARD.bak}, then retention on the copy. */
    @Test
    void retentionOnACopiedShardDirectoryLosesNothing() throws Exception {
        Map<String, String> env = Map.of("FELIX_NODE_ID", "n1");
        Path storeDir = Files.createDirectories(work.resolve("store"));
        String store = storeDir.toUri().toString();
        generate("generate", 3);
        String shard = shardDirectory();
        List<String> written = readAll(env, store, shard, "read-before");
        FelixJar.Result offload = FelixJar.inside(work, env, "offload", "offload", "--data-dir", "data", "--store", store,
                "--keep-local-segments", "2", "--unlink-settle", NO_SETTLE);
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        Path original = work.resolve("data").resolve(shard);
        Path copy = work.resolve("data").resolve(shard + ".bak");
        try (var files = Files.walk(original)) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(original.relativize(f).toString()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub-copy", "scrub", "--data-dir", "data", "--store", store);
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        assertThat(scrub.out()).contains("foreign-key shard=" + shard + ".bak");

        Path config = work.resolve("felix.properties");
        // the same settle time as the offload's: with the default the copy's newest entry, recorded just now,
        // would still be settling, and its expiry held back
        Files.writeString(config, "data-dir=data\nstore=" + store + "\nnode-id=n1\nretention.shards." + shard
                + ".bak.retention.bytes=0\noffload.unlink-settle=" + NO_SETTLE + "\n", StandardCharsets.UTF_8);
        FelixJar.Result retention = FelixJar.inside(work, env, "retention", "retention", "--config", config.toString(),
                "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isZero();
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("remote_segments_deleted").asInt()).as("the copy's entries expire").isPositive();
        assertThat(r.get("remote_objects_deleted").asInt()).isZero();
        assertThat(r.get("remote_objects_kept").asInt()).isPositive();

        assertThat(readAll(env, store, shard, "read-after")).isEqualTo(written);
        FelixJar.Result clean = FelixJar.inside(work, env, "scrub-after", "scrub", "--data-dir", "data", "--store", store);
        assertThat(clean.exitCode()).as(clean.out() + clean.err()).isZero();
    }
}
