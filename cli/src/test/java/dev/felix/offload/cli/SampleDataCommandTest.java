package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class SampleDataCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void sampleRootChecksAsTwoHealthyShardsAndOneTornTail(@TempDir Path dir) throws IOException {
        Path root = dir.resolve("sample");
        assertThat(CliRun.of("sample-data", "--data-dir", root.toString()).exitCode()).isZero();

        CliRun fsck = CliRun.of("fsck", "--data-dir", root.toString(), "--json");
        assertThat(fsck.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        JsonNode shards = JSON.readTree(fsck.out()).get("shards");
        assertThat(shards).hasSize(3); // .deleted/ is not a shard
        assertThat(shards.get(0).get("dir").asText()).isEqualTo("acme_default_orders_0-0d3aed4b998d2798");
        assertThat(shards.get(0).get("verdict").asText()).isEqualTo("ok");
        assertThat(shards.get(0).get("records").asLong()).isEqualTo(600);
        assertThat(shards.get(1).get("verdict").asText()).isEqualTo("repairable");
        assertThat(shards.get(1).get("first_offset").asLong()).isEqualTo(500);
        assertThat(shards.get(1).get("problems").get(0).get("kind").asText()).isEqualTo("Truncated");
        assertThat(shards.get(2).get("verdict").asText()).isEqualTo("ok");
        assertThat(shards.get(2).get("records").asLong()).isEqualTo(201);
    }

    @Test
    void rerunningReplacesItsOwnSample(@TempDir Path dir) {
        Path root = dir.resolve("sample");
        assertThat(CliRun.of("sample-data", "--data-dir", root.toString()).exitCode()).isZero();
        assertThat(CliRun.of("sample-data", "--data-dir", root.toString(), "--records-per-segment", "5").exitCode())
                .isZero();
        CliRun fsck = CliRun.of("fsck", "--data-dir", root.toString());
        assertThat(fsck.out()).contains("acme_default_orders_0-0d3aed4b998d2798: ok, 15 records");
    }

    @Test
    void refusesADirectoryItDidNotWrite(@TempDir Path dir) throws IOException {
        Path precious = Files.writeString(dir.resolve("precious.txt"), "operator data");
        CliRun run = CliRun.of("sample-data", "--data-dir", dir.toString());
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(run.err()).contains("refusing to touch it");
        assertThat(Files.readString(precious)).isEqualTo("operator data");
    }
}
