package dev.felix.offload.it;

import dev.felix.offload.root.SegmentKeys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
import java.util.OptionalLong;
import java.util.stream.Stream;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Through the runnable jar: the store holds another history at a key a manifest entry names (what a
 * second copy of the data root offloading under the same node id leaves: same keys, same sizes, other
 * records, each passing its own checksum). {@code read} and the daemon's {@code /read} refuse it with
 * {@code ObjectMismatch} instead of serving the other history's records, {@code /health} says so, and
 * {@code scrub} lists it.
 */
class ObjectCheckIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path work;

    private static FelixJar.Result ok(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        return r;
    }

    private String shardOf(String root) throws Exception {
        try (Stream<Path> dirs = Files.list(work.resolve(root))) {
            return dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().findFirst().orElseThrow();
        }
    }

    private void generateAndOffload(String root, int seed, Path store) throws Exception {
        ok(FelixJar.inside(work, Map.of(), "generate-" + root, "generate", "--data-dir", root, "--streams", "1",
                "--records", "3000", "--payload-bytes", "200", "--segment-bytes", "65536", "--seed", "" + seed));
        // no broker rewrites the manifests here: an entry need not stand 5 s before its local segment goes
        ok(FelixJar.inside(work, Map.of("FELIX_NODE_ID", "n1"), "offload-" + root, "offload", "--data-dir", root,
                "--store", store.toUri().toString(), "--keep-local-segments", "2", "--unlink-settle", "0s"));
    }

    @Test
    void anotherHistoryAtAnEntrysKeyIsNeverServed() throws Exception {
        Path storeA = Files.createDirectories(work.resolve("store-a"));
        Path storeB = Files.createDirectories(work.resolve("store-b"));
        generateAndOffload("a", 1, storeA);
        generateAndOffload("b", 2, storeB);
        String shard = shardOf("a");
        List<ManifestEntry> entries = ManifestStore.read(work.resolve("a").resolve(shard)).entries();
        ManifestEntry second = entries.get(1);
        ManifestEntry theirs = ManifestStore.read(work.resolve("b").resolve(shard)).entries().get(1);
        assertThat(theirs.objectKey()).isEqualTo(second.objectKey());
        assertThat(theirs.sizeBytes()).as("same key, same size, other bytes").isEqualTo(second.sizeBytes());
        assertThat(theirs.objectCrc32()).isNotEqualTo(second.objectCrc32());
        try (FilesystemStore a = FilesystemStore.open(storeA); FilesystemStore b = FilesystemStore.open(storeB)) {
            // the segment, and its index where one was made (segments of at most 4 MiB have none)
            List<String> keys = SegmentKeys.hasIndexObject(second.sizeBytes())
                    ? List.of(second.objectKey(), SegmentKeys.indexKeyFor(second.objectKey())) : List.of(second.objectKey());
            for (String key : keys) {
                byte[] bytes = b.readAll(key, Integer.MAX_VALUE - 16, OptionalLong.empty());
                CRC32 crc = new CRC32();
                crc.update(bytes);
                a.delete(key);
                a.put(key, UploadBody.ofBytes(bytes), PutOptions.defaults().withCrc32(crc.getValue()));
            }
        }
        // b's records of that segment: what a read must never print as a's
        FelixJar.Result bRecords = ok(FelixJar.inside(work, Map.of("FELIX_NODE_ID", "n1"), "read-b", "read", "--data-dir",
                "b", "--store", storeB.toUri().toString(), "--shard", shard, "--from",
                Long.toUnsignedString(second.baseOffset()), "--max-records", "3", "--json"));
        String firstOfTheirs = bRecords.out().lines().findFirst().orElseThrow();

        FelixJar.Result read = FelixJar.inside(work, Map.of("FELIX_NODE_ID", "n1"), "read-a", "read", "--data-dir", "a",
                "--store", storeA.toUri().toString(), "--shard", shard, "--from",
                Long.toUnsignedString(second.baseOffset()), "--max-records", "3", "--json");
        assertThat(read.exitCode()).as(read.out() + read.err()).isEqualTo(1);
        assertThat(read.out()).doesNotContain(firstOfTheirs);
        JsonNode error = JSON.readTree(read.out().lines().reduce((x, y) -> y).orElseThrow());
        assertThat(error.toString()).contains("ObjectMismatch").contains(second.objectKey());
        assertThat(read.err()).doesNotContain("\tat ");

        FelixJar.Result scrub = FelixJar.inside(work, Map.of("FELIX_NODE_ID", "n1"), "scrub", "scrub", "--data-dir", "a",
                "--store", storeA.toUri().toString());
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        assertThat(scrub.out()).contains("crc-mismatch").contains(second.objectKey());

        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n", "data-dir: a", "store: " + storeA.toUri(), "node-id: n1",
                "http.port: 0", ""), StandardCharsets.UTF_8);
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, Map.of(), config)) {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(daemon.base + "/read?shard=" + shard
                    + "&from=" + Long.toUnsignedString(second.baseOffset()) + "&format=json")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(500);
            assertThat(r.body()).contains("ObjectMismatch").doesNotContain(firstOfTheirs);
            HttpResponse<String> health = HTTP.send(HttpRequest.newBuilder(URI.create(daemon.base + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
            assertThat(health.body()).contains("read: " + shard).contains(second.objectKey());
            assertThat(daemon.terminate()).isZero();
        }
    }
}
