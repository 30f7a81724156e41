package dev.felix.offload.it;

import dev.felix.offload.root.SegmentKeys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 32's second situation through the runnable jar: two data roots (replicas of one shard on two
 * brokers) whose manifests name the same keys without a node id, as 0.6.0-preview.3 wrote them.
 * Retention on either must never delete what the other still needs.
 */
class LegacyKeysIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    /** The store a test runs against, and what the test does in it behind the commands' back. */
    private record Store(String uri, Map<String, String> env, S3Server s3, String bucket, FilesystemStore fs) {

        static Store of(String kind, Path work) throws Exception {
            if (kind.equals("fs")) {
                Path dir = Files.createDirectories(work.resolve("store"));
                return new Store(dir.toUri().toString(), Map.of(), null, null, FilesystemStore.open(dir));
            }
            S3Server s3 = S3Servers.s3proxy();
            String bucket = s3.createBucket("legacy-keys");
            return new Store(DaemonIT.storeUri(s3, bucket), DaemonIT.credentials(s3), s3, bucket, null);
        }

        byte[] read(String key) throws Exception {
            if (fs != null) {
                return fs.readAll(key, Integer.MAX_VALUE - 16, OptionalLong.empty());
            }
            return s3.admin().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
        }

        void put(String key, byte[] bytes) throws Exception {
            if (fs != null) {
                java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                crc.update(bytes);
                fs.put(key, UploadBody.ofBytes(bytes), PutOptions.defaults().withCrc32(crc.getValue()));
                return;
            }
            s3.admin().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(bytes));
        }

        void delete(String key) throws Exception {
            if (fs != null) {
                fs.delete(key);
                return;
            }
            s3.admin().deleteObject(b -> b.bucket(bucket).key(key));
        }

        long size(String key) throws Exception {
            if (fs != null) {
                return fs.head(key).size();
            }
            try {
                return s3.admin().headObject(b -> b.bucket(bucket).key(key)).contentLength();
            } catch (NoSuchKeyException e) {
                throw new ObjectNotFoundException("no " + key, key, dev.felix.offload.store.StoreAnswer.NONE, e);
            } catch (software.amazon.awssdk.services.s3.model.S3Exception e) {
                if (e.statusCode() == 404) {
                    throw new ObjectNotFoundException("no " + key, key, dev.felix.offload.store.StoreAnswer.NONE, e);
                }
                throw e;
            }
        }

        Map<String, String> env(String nodeId) {
            Map<String, String> out = new java.util.HashMap<>(env);
            out.put("FELIX_NODE_ID", nodeId);
            return out;
        }
    }

    private String shardOf(String root) throws Exception {
        try (Stream<Path> dirs = Files.list(work.resolve(root))) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow();
        }
    }

    private static FelixJar.Result ok(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        return r;
    }

    /** Every record of the root's shard from offset 0, without where it came from. */
    private List<String> records(String root, String node, Store store, String name) throws Exception {
        FelixJar.Result r = ok(FelixJar.inside(work, store.env(node), name, "read", "--data-dir", root,
                "--store", store.uri(), "--shard", shardOf(root), "--from", "0", "--max-records", "100000",
                "--json"));
        return r.out().lines().map(l -> l.replaceAll(",\"source\":\"[a-z]+\"", "")).toList();
    }

    /**
     * Makes {@code root}'s offloaded history what 0.6.0-preview.3 left: each entry's object (and its
     * index) copied to the key without the node id, the entry naming that key, the node's copy gone.
     */
    private static void asPreview3(Path root, String shard, Store store) throws Exception {
        Path dir = root.resolve(shard);
        Manifest manifest = ManifestStore.read(dir);
        List<ManifestEntry> legacy = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            String key = e.objectKey().substring(e.objectKey().indexOf('/') + 1);
            List<String[]> moves = SegmentKeys.hasIndexObject(e.sizeBytes())
                    ? List.of(new String[] {e.objectKey(), key}, new String[] {index(e.objectKey()), index(key)})
                    : List.<String[]>of(new String[] {e.objectKey(), key}); // no index object below 4 MiB
            for (String[] pair : moves) {
                store.put(pair[1], store.read(pair[0]));
                store.delete(pair[0]);
            }
            legacy.add(new ManifestEntry(e.segmentId(), e.baseOffset(), e.lastOffset(), e.sizeBytes(),
                    e.oldestTimestampMicros(), e.newestTimestampMicros(), e.objectCrc32(), key));
        }
        ManifestStore.open(dir).save(Manifest.of(legacy));
        Files.deleteIfExists(dir.resolve("offload.proofs"));
    }

    private static String index(String segmentKey) {
        return segmentKey.substring(0, segmentKey.length() - ".segment".length()) + ".index";
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private Path config(String name, String root, Store store, String node, String... more) throws Exception {
        Path file = work.resolve(name);
        // the offload's settle time (none: no broker rewrites the manifests here), so that retention right after
        // it finds every entry settled
        StringBuilder b = new StringBuilder("data-dir=" + root + "\nstore=" + store.uri() + "\nnode-id=" + node
                + "\norphans.grace=0s\noffload.unlink-settle=0s\n");
        for (String line : more) {
            b.append(line).append('\n');
        }
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
        return file;
    }

    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void sharedKeysWithoutANodeIdSurviveEitherRootsRetention(String kind) throws Exception {
        Store store = Store.of(kind, work);
        Store storeDir = store;
        ok(FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "a", "--streams", "1", "--records", "3000",
                "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "7"));
        String shard = shardOf("a");
        // no broker rewrites the manifests here: an entry need not stand 5 s before its local segment goes
        ok(FelixJar.inside(work, store.env("n1"), "offload-a", "offload", "--data-dir", "a", "--store", store.uri(),
                "--keep-local-segments", "2", "--unlink-settle", "0s"));
        {
            asPreview3(work.resolve("a"), shard, store);
            // The other replica: the same shard on another broker, its own identity, the same keys named.
            copyTree(work.resolve("a"), work.resolve("b"));
            Files.delete(work.resolve("b/offload-root-id"));
            Files.deleteIfExists(work.resolve("b/node-id"));
            List<String> legacyKeys = ManifestStore.read(work.resolve("a").resolve(shard)).entries().stream()
                    .map(ManifestEntry::objectKey).toList();
            assertThat(legacyKeys).isNotEmpty().allMatch(k -> k.startsWith(shard + "/"));
            List<String> written = records("a", "n1", storeDir, "read-a-before");
            assertThat(records("b", "n2", storeDir, "read-b-before")).isEqualTo(written);

            // a's retention expires everything it offloaded; b still needs all of it
            Path aConfig = config("a.properties", "a", storeDir, "n1", "retention.bytes=0");
            FelixJar.Result ra = ok(FelixJar.inside(work, store.env(), "retention-a", "retention", "--config",
                    aConfig.toString(), "--json"));
            JsonNode r = JSON.readTree(ra.out());
            assertThat(r.get("remote_segments_deleted").asInt()).as("a's entries expire: %s", ra.out()).isPositive();
            assertThat(r.get("remote_objects_deleted").asInt()).as("and no object goes").isZero();
            // one object each: these segments are below 4 MiB, so they have no index object
            assertThat(r.get("remote_objects_kept").asInt()).isEqualTo(r.get("remote_segments_deleted").asInt());
            JsonNode kept = r.get("shards").get(0).get("objects_kept");
            assertThat(kept.get(legacyKeys.get(0)).asText()).isEqualTo("legacy-key");
            for (String key : legacyKeys) {
                assertThat(store.size(key)).as(key).isPositive();
            }
            assertThat(records("b", "n2", storeDir, "read-b-after-a")).as("b loses nothing").isEqualTo(written);

            // b's retention keeps them too, and its entries leave its manifest as they expire
            Path bLimited = config("b-limited.properties", "b", storeDir, "n2", "retention.bytes=1000000");
            FelixJar.Result rb = ok(FelixJar.inside(work, store.env(), "retention-b", "retention", "--config",
                    bLimited.toString(), "--json"));
            assertThat(JSON.readTree(rb.out()).get("remote_objects_deleted").asInt()).isZero();
            for (String key : legacyKeys) {
                try {
                    store.size(key);
                } catch (ObjectNotFoundException e) {
                    throw new AssertionError("legacy key " + key + " was deleted", e);
                }
            }
            List<String> bKeeps = ManifestStore.read(work.resolve("b").resolve(shard)).entries().stream()
                    .map(ManifestEntry::objectKey).toList();
            assertThat(bKeeps).isNotEmpty().allMatch(k -> k.startsWith(shard + "/"));

            // The operator's commands. a names none of them any more: list shows them unnamed there.
            FelixJar.Result listA = ok(FelixJar.inside(work, store.env(), "list-a", "legacy-keys", "list", "--config",
                    aConfig.toString()));
            assertThat(listA.out()).contains("unnamed legacy-key shard=" + shard + " key=" + bKeeps.get(0));
            FelixJar.Result listB = ok(FelixJar.inside(work, store.env(), "list-b", "legacy-keys", "list", "--config",
                    bLimited.toString()));
            assertThat(listB.out()).contains("named legacy-key shard=" + shard).contains("key=" + bKeeps.get(0));
            // Without the operator's word nothing goes; b's own manifest names the key, so b never deletes it.
            FelixJar.Result dry = ok(FelixJar.inside(work, store.env(), "delete-dry", "legacy-keys", "delete", "--config",
                    aConfig.toString(), "--shard", shard));
            assertThat(dry.out()).contains("would delete " + bKeeps.get(0)).contains("nothing deleted");
            assertThat(store.size(bKeeps.get(0))).isPositive();
            FelixJar.Result named = FelixJar.inside(work, store.env(), "delete-named", "legacy-keys", "delete", "--config",
                    bLimited.toString(), "--key", bKeeps.get(0), "--key", "n1/node.claim", "--no-other-replica-needs-them");
            assertThat(named.exitCode()).as(named.out() + named.err()).isEqualTo(1);
            assertThat(named.out()).contains("refused " + bKeeps.get(0) + ": named by the manifest of [" + shard + "]")
                    .contains("refused n1/node.claim: not a shard's key without a node id");
            assertThat(store.size(bKeeps.get(0))).isPositive();

            // b gives its entries keys of its own: copied, proven, re-recorded; the old objects stay
            FelixJar.Result migrate = ok(FelixJar.inside(work, store.env(), "migrate-b", "legacy-keys", "migrate",
                    "--config", bLimited.toString()));
            assertThat(migrate.out()).contains("migrated shard=" + shard + " " + bKeeps.get(0) + " -> n2/" + bKeeps.get(0))
                    .contains(bKeeps.size() + " entries re-recorded");
            assertThat(ManifestStore.read(work.resolve("b").resolve(shard)).entries()).allMatch(
                    e -> e.objectKey().startsWith("n2/" + shard + "/"));
            assertThat(store.size(bKeeps.get(0))).as("the old object stays").isPositive();
            List<String> bNow = records("b", "n2", storeDir, "read-b-migrated");
            assertThat(bNow).isEqualTo(written.subList(written.size() - bNow.size(), written.size()));

            // Now no replica needs the keys without a node id: the operator deletes them by shard.
            FelixJar.Result deleted = ok(FelixJar.inside(work, store.env(), "delete-a", "legacy-keys", "delete", "--config",
                    aConfig.toString(), "--shard", shard, "--no-other-replica-needs-them"));
            assertThat(deleted.out()).contains("deleted " + bKeeps.get(0));
            assertThat(records("b", "n2", storeDir, "read-b-end")).isEqualTo(bNow);
            // and b's own copies are its retention's to delete like any other
            Path bNone = config("b-none.properties", "b", storeDir, "n2", "retention.bytes=0");
            FelixJar.Result last = ok(FelixJar.inside(work, store.env(), "retention-b-end", "retention", "--config",
                    bNone.toString(), "--json"));
            assertThat(JSON.readTree(last.out()).get("remote_objects_deleted").asInt()).isPositive();
            ok(FelixJar.inside(work, store.env(), "scrub-b", "scrub", "--config", bNone.toString()));
        }
    }
}
