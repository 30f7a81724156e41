package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A data root laid out as the spec does it, through the runnable jar against S3Proxy: stream shards at
 * the top level, under {@code groups/} and {@code dead-letters/} (one of them incarnated, one with
 * empty sealed segments, one a symbolic link to another disk), and a cache shard under
 * {@code caches/}. Every stream shard is offloaded under a key carrying its path, every record reads
 * back, the cache is left untouched and reported, and the orphan sweep sees the same shards the pass
 * saw (nothing of the linked shard is swept).
 */
class DataRootLayoutIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String INCARNATION = "0006411a0ccf2e40";

    @TempDir
    Path work;

    private static List<String> keys(S3Server s3, String bucket, String prefix) {
        return s3.admin().listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
                .map(S3Object::key).sorted().toList();
    }

    private FelixJar.Result ok(Map<String, String> env, String name, String... args) throws Exception {
        FelixJar.Result r = FelixJar.inside(work, env, name, args);
        assertThat(r.exitCode()).as(name + ": " + r.out() + r.err()).isZero();
        return r;
    }

    private void generate(String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("generate", "--data-dir", "data", "--records", "1200",
                "--payload-bytes", "100", "--segment-bytes", "16384"));
        args.addAll(List.of(extra));
        ok(Map.of(), "generate-" + String.join("-", extra).replace("/", "_"), args.toArray(String[]::new));
    }

    /** Every record of a shard from offset 0, as {@code read --json} prints it but without where it came from. */
    private List<String> records(Map<String, String> env, String store, String shard) throws Exception {
        FelixJar.Result r = ok(env, "read-" + shard.replace('/', '_') + "-" + System.nanoTime(), "read", "--data-dir",
                "data", "--store", store, "--shard", shard, "--from", "0", "--max-records", "100000", "--json");
        List<String> out = new ArrayList<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                out.add(line.replaceAll(",?\"source\":\"(local|remote)\"", ""));
            }
        }
        return out;
    }

    private static Map<String, String> digests(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                try {
                    out.put(dir.relativize(f).toString(), HexFormat.of().formatHex(
                            MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return out;
    }

    @Test
    void everyStreamShardOfTheLayoutIsOffloadedAndReadsBackWhileCachesAreLeftAlone() throws Exception {
        S3Server s3 = S3Servers.s3proxy();
        String bucket = s3.createBucket("layout-it");
        Map<String, String> env = DaemonIT.credentials(s3);
        String store = DaemonIT.storeUri(s3, bucket, "/tier");

        generate();
        generate("--under", "groups", "--empty-segments", "2", "--seed", "2");
        generate("--under", "dead-letters", "--seed", "3");
        generate("--under", "caches", "--seed", "4");
        Path data = work.resolve("data");
        // An incarnated dead-letter shard (the same stream created again) and a shard moved to another disk
        // and linked back.
        String top = "acme_default_stream-0_0-9517d90cb689619a";
        Path dead = data.resolve("dead-letters");
        Files.move(dead.resolve(top), dead.resolve(top + "-" + INCARNATION));
        generate("--under", "dead-letters", "--seed", "5");
        generate("--streams", "2", "--seed", "6"); // adds stream-1 at the top level
        String linked = "acme_default_stream-1_0-a1c6bc3733d8cbfd";
        Path elsewhere = Files.createDirectories(work.resolve("other-disk"));
        Files.move(data.resolve(linked), elsewhere.resolve(linked));
        Files.createSymbolicLink(data.resolve(linked), elsewhere.resolve(linked));
        // Never shards: dotted directories at every level.
        Files.createDirectories(data.resolve("groups/.deleted/acme_default_gone_0-0000000000000001"));
        Files.copy(data.resolve(top).resolve("00000000000000000000.log"),
                data.resolve("groups/.deleted/acme_default_gone_0-0000000000000001/00000000000000000000.log"));

        List<String> streamShards = List.of(top, linked, "dead-letters/" + top, "dead-letters/" + top + "-" + INCARNATION,
                "groups/" + top);
        Map<String, List<String>> before = new LinkedHashMap<>();
        for (String shard : streamShards) {
            before.put(shard, records(env, store, shard));
            assertThat(before.get(shard)).as(shard).hasSizeGreaterThanOrEqualTo(1200);
        }
        Map<String, String> cacheBefore = digests(data.resolve("caches"));

        Path config = work.resolve("felix.properties");
        Files.writeString(config, String.join("\n", "data-dir=data", "store=" + store, "node-id=node-a",
                "orphans.grace=0s", ""), StandardCharsets.UTF_8);
        // no broker rewrites the manifests here: an entry need not stand 5 s before its local segment goes
        FelixJar.Result offload = ok(env, "offload", "offload", "--data-dir", "data", "--store", store,
                "--keep-local-segments", "1", "--unlink-settle", "0s", "--json");
        JsonNode o = JSON.readTree(offload.out());
        assertThat(o.get("complete").asBoolean()).isTrue();
        List<String> dirs = new ArrayList<>();
        o.get("shards").forEach(s -> dirs.add(s.get("dir").asText()));
        assertThat(dirs).containsExactlyInAnyOrderElementsOf(streamShards);
        assertThat(o.get("cache_shards_left_alone").get("count").asInt()).isEqualTo(1);
        assertThat(o.get("cache_shards_left_alone").get("shards").get(0).asText())
                .isEqualTo("caches/" + top);
        String nodeId = o.get("node_id").asText();

        List<String> stored = keys(s3, bucket, "tier/" + nodeId + "/");
        for (String shard : streamShards) {
            assertThat(stored).as(shard).anyMatch(k -> k.startsWith("tier/" + nodeId + "/" + shard + "/")
                    && k.endsWith(".segment"));
        }
        assertThat(stored).as("root-level shards keep today's keys").contains(
                "tier/" + nodeId + "/" + top + "/00000000000000000000-00000000000000000000.segment");
        assertThat(stored).noneMatch(k -> k.contains("caches/") || k.contains(".deleted"));
        assertThat(digests(data.resolve("caches"))).as("caches untouched").isEqualTo(cacheBefore);
        for (String shard : streamShards) {
            // Empty sealed segments (groups/) never hold the local limit back: only the active segment stays.
            try (Stream<Path> files = Files.list(data.resolve(shard))) {
                assertThat(files.filter(f -> f.getFileName().toString().endsWith(".log")).count())
                        .as(shard + " reduced to its local limit").isEqualTo(1);
            }
        }

        FelixJar.Result text = ok(env, "offload-text", "offload", "--data-dir", "data", "--store", store);
        assertThat(text.out()).contains("left alone: 1 cache and counter shards (cache and counter shards are "
                + "compacted in place");

        // The sweep sees the same shards the pass saw: the linked one and those under containers keep
        // every object, with a grace period of nothing.
        FelixJar.Result retention = ok(env, "retention", "retention", "--config", config.toString(), "--json");
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("orphans").get("deleted")).isEmpty();
        assertThat(keys(s3, bucket, "tier/" + nodeId + "/")).isEqualTo(stored);

        for (String shard : streamShards) {
            assertThat(records(env, store, shard)).as(shard + " reads back, record for record")
                    .isEqualTo(before.get(shard));
        }
        FelixJar.Result fsck = ok(Map.of(), "fsck", "fsck", "--data-dir", "data");
        assertThat(fsck.out()).contains("caches/" + top + ": ok").contains("6 shards: 6 ok");
    }
}
