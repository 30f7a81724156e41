package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import dev.felix.offload.log.side.RunStateFile;
import dev.felix.offload.manifest.ManifestStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** fsck covers every file kind: authoritative damage is corrupt, derived damage is a repairable problem. */
class FsckSideFilesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path root;

    private Path shard() throws IOException {
        assertThat(CliRun.of("generate", "--data-dir", root.toString(), "--records", "50").exitCode()).isZero();
        try (var dirs = Files.list(root)) {
            return dirs.filter(Files::isDirectory).findFirst().orElseThrow();
        }
    }

    private JsonNode fsck(int exitCode) throws IOException {
        CliRun run = CliRun.of("fsck", "--data-dir", root.toString(), "--json");
        assertThat(run.exitCode()).as(run.out()).isEqualTo(exitCode);
        return JSON.readTree(run.out());
    }

    private static void flipLastByte(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 1] ^= 0x01;
        Files.write(file, bytes);
    }

    @Test
    void aDamagedReplicaMakesTheShardCorrupt() throws IOException {
        Path shard = shard();
        ReplicaFile.FILE.save(shard, new ReplicaState(3, 10));
        assertThat(fsck(0).get("shards").get(0).get("verdict").asText()).isEqualTo("ok");
        flipLastByte(ReplicaFile.FILE.fileIn(shard));
        JsonNode s = fsck(1).get("shards").get(0);
        assertThat(s.get("verdict").asText()).isEqualTo("corrupt");
        JsonNode p = s.get("problems").get(0);
        assertThat(p.get("file").asText()).isEqualTo("replica");
        assertThat(p.get("kind").asText()).isEqualTo("SideFileChecksum");
        assertThat(p.get("segment").isNull()).isTrue();
        assertThat(p.get("repairable").asBoolean()).isFalse();
    }

    @Test
    void aDamagedEpochsFileIsRepairableAndLeavesTheVerdictOk() throws IOException {
        Path shard = shard();
        Files.write(EpochsFile.FILE.fileIn(shard), new byte[] {'F', 'L', 'E', 'P', 0, 1});
        JsonNode s = fsck(0).get("shards").get(0);
        assertThat(s.get("verdict").asText()).isEqualTo("ok");
        assertThat(s.get("problems")).singleElement().satisfies(p -> {
            assertThat(p.get("file").asText()).isEqualTo("epochs");
            assertThat(p.get("kind").asText()).isEqualTo("Truncated");
            assertThat(p.get("repairable").asBoolean()).isTrue();
        });
    }

    @Test
    void aDamagedManifestMakesTheShardCorrupt() throws IOException {
        Path shard = shard();
        Files.write(ManifestStore.fileIn(shard), "FLOF but not really a manifest".getBytes());
        JsonNode s = fsck(1).get("shards").get(0);
        assertThat(s.get("verdict").asText()).isEqualTo("corrupt");
        assertThat(s.get("problems")).anySatisfy(p -> assertThat(p.get("file").asText()).isEqualTo("offload.manifest"));
    }

    @Test
    void aDamagedRootFileIsReportedAtTheRoot() throws IOException {
        shard();
        Files.write(RunStateFile.FILE.fileIn(root), new byte[28]);
        JsonNode report = fsck(1);
        assertThat(report.get("root").get("problems")).singleElement()
                .satisfies(p -> assertThat(p.get("file").asText()).isEqualTo("run-state"));
        assertThat(report.get("shards").get(0).get("verdict").asText()).isEqualTo("ok");
    }
}
