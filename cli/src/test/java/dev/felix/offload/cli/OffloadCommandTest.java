package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.root.RootLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class OffloadCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private Path root() throws IOException {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "1", "--shards-per-stream", "2",
                "--records", "2000", "--payload-bytes", "100", "--segment-bytes", "32768", "--producers", "2");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        return root;
    }

    private String storeUri() throws IOException {
        return Files.createDirectories(tmp.resolve("store")).toUri().toString();
    }

    @Test
    void offloadsEveryShardAndReadsBackAcrossTheLocalBase() throws Exception {
        Path root = root();
        String store = storeUri();
        CliRun run = CliRun.of("offload", "--data-dir", root.toString(), "--store", store, "--keep-local-segments", "1",
                "--json");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode report = JSON.readTree(run.out());
        assertThat(report.get("complete").asBoolean()).isTrue();
        assertThat(report.get("segments_uploaded").asInt()).isPositive();
        assertThat(report.get("segments_unlinked").asInt()).isEqualTo(report.get("segments_uploaded").asInt());
        // The filesystem store keeps the CRC32 it computed while writing, where the filesystem has user
        // attributes; elsewhere the copy is read back. No server checked anything, so never server-checksum.
        assertThat(report.get("verified_by").fieldNames()).toIterable().isNotEmpty()
                .isSubsetOf("store-checksum", "read-back");

        String shard = report.get("shards").get(0).get("dir").asText();
        CliRun read = CliRun.of("read", "--data-dir", root.toString(), "--store", store, "--shard", shard,
                "--from", "0", "--max-records", "5000", "--json");
        assertThat(read.exitCode()).as(read.out()).isZero();
        List<JsonNode> lines = read.out().lines().map(l -> {
            try {
                return JSON.readTree(l);
            } catch (IOException e) {
                throw new AssertionError(l, e);
            }
        }).toList();
        assertThat(lines).hasSize(2000);
        for (int i = 0; i < lines.size(); i++) {
            assertThat(lines.get(i).get("offset").asLong()).isEqualTo(i);
        }
        assertThat(lines.get(0).get("source").asText()).isEqualTo("remote");
        assertThat(lines.get(lines.size() - 1).get("source").asText()).isEqualTo("local");

        // The same records a local dump printed before offload would: compare one remote record with fsck's view.
        CliRun again = CliRun.of("offload", "--data-dir", root.toString(), "--store", store, "--keep-local-segments", "1");
        assertThat(again.exitCode()).isZero();
        assertThat(again.out()).contains("offloaded 0 segments", "every eligible segment is offloaded");
        assertThat(CliRun.of("fsck", "--data-dir", root.toString()).exitCode()).isZero();
    }

    @Test
    void aRunningOffloaderMakesTheSecondFail() throws Exception {
        Path root = root();
        try (RootLock held = RootLock.acquire(root)) {
            CliRun run = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeUri());
            assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
            assertThat(run.err()).contains("another offloader holds", "pid ");
        }
    }

    @Test
    void usageErrorsNameWhatIsWrong() throws Exception {
        Path root = root();
        CliRun badUri = CliRun.of("offload", "--data-dir", root.toString(), "--store", "ftp://nowhere");
        assertThat(badUri.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(badUri.err()).contains("--store");
        CliRun badVerify = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeUri(), "--verify", "maybe");
        assertThat(badVerify.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(badVerify.err()).contains("verify mode");
        CliRun both = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeUri(),
                "--keep-local-segments", "1", "--keep-local-bytes", "10");
        assertThat(both.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        CliRun tiny = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeUri(),
                "--max-bytes-in-flight", "256");
        assertThat(tiny.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(tiny.err()).contains("--max-bytes-in-flight").contains("expected at least 1MiB").contains("'256'");
    }

    @Test
    void aBoundOnBytesInFlightOffloadsEverything() throws Exception {
        Path root = root();
        CliRun run = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeUri(),
                "--max-bytes-in-flight", "1MiB", "--parallelism", "1", "--json");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("\"complete\":true");
    }

    @Test
    void readBelowWhatIsKeptIsTrimmed() throws Exception {
        Path root = root();
        String store = storeUri();
        CliRun.of("offload", "--data-dir", root.toString(), "--store", store, "--keep-local-segments", "1");
        String shard;
        try (Stream<Path> dirs = Files.list(root)) {
            shard = dirs.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(n -> !n.startsWith(".")).sorted().findFirst().orElseThrow();
        }
        // Forget the manifest's oldest entry, as remote retention would.
        Path manifest = root.resolve(shard).resolve("offload.manifest");
        CliRun show = CliRun.of("manifest", "show", "--shard-dir", root.resolve(shard).toString(), "--json");
        long secondBase = JSON.readTree(show.out()).get("entries").get(1).get("base").asLong();
        dev.felix.offload.manifest.ManifestStore store2 = dev.felix.offload.manifest.ManifestStore.open(root.resolve(shard));
        store2.save(store2.manifest().withoutEntriesThrough(secondBase - 1));
        assertThat(manifest).exists();
        CliRun read = CliRun.of("read", "--data-dir", root.toString(), "--store", store, "--shard", shard, "--from", "0",
                "--json");
        assertThat(read.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
        JsonNode line = JSON.readTree(read.out());
        assertThat(line.get("error").asText()).isEqualTo("Trimmed");
        assertThat(line.get("next_available").asLong()).isEqualTo(secondBase);
    }
}
