package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ScrubCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;
    Path root;
    Path storeDir;
    String store;

    @BeforeEach
    void offloadedRoot() throws Exception {
        root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "1", "--shards-per-stream", "2",
                "--records", "1000", "--payload-bytes", "100", "--segment-bytes", "32768");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        storeDir = Files.createDirectories(tmp.resolve("store"));
        store = storeDir.toUri().toString();
        CliRun offload = CliRun.of("offload", "--data-dir", root.toString(), "--store", store);
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
    }

    private List<ManifestEntry> entries() throws Exception {
        List<ManifestEntry> out = new ArrayList<>();
        try (var dirs = Files.list(root)) {
            for (Path d : dirs.filter(Files::isDirectory).sorted().toList()) {
                out.addAll(ManifestStore.read(d).entries());
            }
        }
        return out;
    }

    @Test
    void aCleanStoreHasNoAnomalies() throws Exception {
        CliRun scrub = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
        JsonNode r = JSON.readTree(scrub.out());
        assertThat(r.get("clean").asBoolean()).isTrue();
        assertThat(r.get("entries_checked").asInt()).isEqualTo(entries().size()).isPositive();
        assertThat(r.get("orphans_listed").asBoolean()).isTrue();
        assertThat(r.get("anomalies")).isEmpty();

        CliRun text = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store);
        assertThat(text.exitCode()).isZero();
        assertThat(text.out()).contains("checked " + entries().size() + " entries in 2 shards", "no anomalies");
    }

    @Test
    void aStoreDirectoryThatIsNotThereIsAUsageErrorAndIsNotCreated() throws Exception {
        Path typo = tmp.resolve("stroe");
        for (List<String> command : List.of(
                List.of("scrub", "--data-dir", root.toString(), "--store", typo.toUri().toString()),
                List.of("read", "--data-dir", root.toString(), "--store", typo.toUri().toString(),
                        "--shard", entries().get(0).objectKey().split("/")[1], "--from", "0"))) {
            CliRun run = CliRun.of(command.toArray(String[]::new));
            assertThat(run.exitCode()).as(command + ": " + run.err()).isEqualTo(FelixOffload.EXIT_USAGE);
            assertThat(run.err()).contains("--store: no store directory at " + typo);
            assertThat(typo).doesNotExist();
        }
    }

    @Test
    void readRefusesAnythingButAShardDirectoryOfTheRoot() throws Exception {
        String shard = entries().get(0).objectKey().split("/")[1];
        Files.createDirectories(root.resolve("no-segments"));
        Files.createDirectories(root.resolve(".deleted"));
        for (String bad : List.of("", ".", "..", "../root", shard + "/..", "/etc", ".deleted", "no-segments", "node-id",
                "nosuch", "a\\b")) {
            CliRun run = CliRun.of("read", "--data-dir", root.toString(), "--store", store, "--shard", bad, "--from", "0");
            assertThat(run.exitCode()).as("'" + bad + "': " + run.out() + run.err()).isEqualTo(FelixOffload.EXIT_USAGE);
            assertThat(run.err()).contains("no shard directory '" + bad + "' under " + root);
            assertThat(run.out()).isEmpty();
        }
    }

    @Test
    void reportsMissingSizeAndCrcMismatchesAndOrphans() throws Exception {
        List<ManifestEntry> entries = entries();
        assertThat(entries).hasSizeGreaterThanOrEqualTo(3);
        ManifestEntry missing = entries.get(0);
        ManifestEntry shorter = entries.get(1);
        ManifestEntry changed = entries.get(2);
        // An upload's leftover of offsets the shard still holds: an orphan (one of offsets nothing holds
        // would be unrecorded history, kept and reported as such).
        String orphan = missing.objectKey().substring(0, missing.objectKey().lastIndexOf('/') + 1)
                + "00000000000000000005-00000000000000099999.segment";
        try (ObjectStore s = FilesystemStore.open(storeDir)) {
            s.delete(missing.objectKey());
            s.put(shorter.objectKey(), UploadBody.ofBytes(new byte[(int) shorter.sizeBytes() - 1]));
            byte[] other = new byte[(int) changed.sizeBytes()];
            other[0] = 1;
            s.put(changed.objectKey(), UploadBody.ofBytes(other));
            s.put(orphan, UploadBody.ofBytes("left behind".getBytes(StandardCharsets.UTF_8)));
        }
        CliRun scrub = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--json",
                "--read-bandwidth", "0");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        JsonNode r = JSON.readTree(scrub.out());
        assertThat(r.get("clean").asBoolean()).isFalse();
        List<String> found = new ArrayList<>();
        r.get("anomalies").forEach(a -> found.add(a.get("kind").asText() + " " + a.get("key").asText()));
        assertThat(found).containsExactlyInAnyOrder("missing " + missing.objectKey(),
                "size-mismatch " + shorter.objectKey(), "crc-mismatch " + changed.objectKey(), "orphan " + orphan);

        CliRun text = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store);
        assertThat(text.exitCode()).isEqualTo(1);
        assertThat(text.out()).contains("missing shard=", "orphan shard=", "4 anomalies");
    }

    /**
     * One byte flipped in place in a filesystem-store object, its CRC32 attribute left as the upload
     * wrote it: scrub reads the bytes (the attribute proves nothing about rot) and finds it.
     */
    @Test
    void rotInAFilesystemStoreObjectIsFoundByReadingTheBytes() throws Exception {
        ManifestEntry rotten = entries().get(1);
        Path file = storeDir.resolve(rotten.objectKey());
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer one = java.nio.ByteBuffer.allocate(1);
            long at = ch.size() / 2;
            ch.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x01)).rewind();
            ch.write(one, at);
        }
        CliRun scrub = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--json", "--read-bandwidth", "0");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        JsonNode r = JSON.readTree(scrub.out());
        assertThat(r.get("checked_by").get("read-back").asInt()).isEqualTo(entries().size());
        assertThat(r.get("checked_by").has("server-checksum")).isFalse();
        List<String> found = new ArrayList<>();
        r.get("anomalies").forEach(a -> found.add(a.get("kind").asText() + " " + a.get("key").asText()));
        assertThat(found).containsExactly("crc-mismatch " + rotten.objectKey());

        CliRun full = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--full", "--read-bandwidth", "0");
        assertThat(full.exitCode()).as(full.out() + full.err()).isEqualTo(1);
        assertThat(full.out()).contains("crc-mismatch", "1 anomal");
    }

    @Test
    void aCopiedShardDirectorysEntriesAreForeignKeysNamingBothShards() throws Exception {
        Path original;
        try (var dirs = Files.list(root)) {
            original = dirs.filter(d -> Files.exists(ManifestStore.fileIn(d))).sorted().findFirst().orElseThrow();
        }
        int copied = ManifestStore.read(original).size();
        assertThat(copied).isPositive();
        Path copy = root.resolve(original.getFileName() + ".bak");
        try (var files = Files.walk(original)) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(original.relativize(f).toString()));
            }
        }

        CliRun scrub = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        JsonNode r = JSON.readTree(scrub.out());
        List<JsonNode> foreign = new ArrayList<>();
        r.get("anomalies").forEach(foreign::add);
        assertThat(foreign).hasSize(copied).allSatisfy(a -> {
            assertThat(a.get("kind").asText()).isEqualTo("foreign-key");
            assertThat(a.get("shard").asText()).isEqualTo(copy.getFileName().toString());
            assertThat(a.get("key_shard").asText()).isEqualTo(original.getFileName().toString());
            assertThat(a.get("detail").asText()).contains(original.getFileName().toString());
        });

        CliRun text = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store);
        assertThat(text.out()).contains("foreign-key shard=" + copy.getFileName(), copied + " anomalies");
    }

    @Test
    void takesItsSettingsFromAConfigurationFile() throws Exception {
        Path config = tmp.resolve("felix.yaml");
        Files.writeString(config, "data-dir: root\nstore: " + store + "\nscrub.read-bandwidth: 0\n");
        CliRun scrub = CliRun.of("scrub", "--config", config.toString());
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
        CliRun both = CliRun.of("scrub", "--config", config.toString(), "--data-dir", root.toString());
        assertThat(both.exitCode()).isEqualTo(2);
        CliRun neither = CliRun.of("scrub", "--json");
        assertThat(neither.exitCode()).isEqualTo(2);
    }
}
