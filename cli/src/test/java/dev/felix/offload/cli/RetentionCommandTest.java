package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The one-shot commands given a configuration file: offload --config, then retention --config. */
class RetentionCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void offloadThenRetentionFromOneConfigurationFile() throws Exception {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "2", "--shards-per-stream", "1",
                "--records", "1500", "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        String store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        Path config = tmp.resolve("felix.properties");
        Files.writeString(config, String.join("\n", "data-dir=root", "store=" + store, "node-id=test-node",
                "local.retention.bytes=40KiB",
                "offload.unlink-settle=0s", // no broker rewrites the manifest: entries need not stand first
                "retention.streams.acme/default/stream-1.retention.bytes=64KiB", ""));

        CliRun offload = CliRun.of("offload", "--config", config.toString(), "--json");
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        JsonNode o = JSON.readTree(offload.out());
        assertThat(o.get("node_id").asText()).isEqualTo("test-node");
        assertThat(o.get("segments_uploaded").asInt()).isPositive();
        assertThat(o.get("segments_unlinked").asInt()).as("with --config, local copies go by retention").isZero();

        CliRun retention = CliRun.of("retention", "--config", config.toString(), "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isZero();
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("succeeded").asBoolean()).isTrue();
        assertThat(r.get("local_segments_deleted").asInt()).isPositive();
        assertThat(r.get("remote_segments_deleted").asInt()).as("stream-1 keeps 64 KiB in all").isPositive();
        for (JsonNode s : r.get("shards")) {
            assertThat(s.get("local_bytes_after").asLong()).as(s.toString()).isLessThanOrEqualTo(40 * 1024);
            if (s.get("dir").asText().contains("stream-1")) {
                assertThat(s.get("total_bytes_after").asLong()).isLessThanOrEqualTo(64 * 1024);
            }
        }

        CliRun text = CliRun.of("retention", "--config", config.toString());
        assertThat(text.exitCode()).isZero();
        assertThat(text.out()).contains("retention as node test-node", "retention done");
    }

    @Test
    void configurationErrorsExitTwoNamingTheKey() throws Exception {
        Path config = tmp.resolve("felix.yaml");
        Files.writeString(config, "data-dir: root\nstore: file:///tmp/x\nretention:\n  bites: 5\n");
        CliRun r = CliRun.of("retention", "--config", config.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("retention.bites: unknown key");
        CliRun o = CliRun.of("offload", "--config", config.toString());
        assertThat(o.exitCode()).isEqualTo(2);
        assertThat(o.err()).contains("retention.bites: unknown key");
        CliRun missing = CliRun.of("retention", "--config", tmp.resolve("nope.yaml").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("no configuration file at");
        CliRun mixed = CliRun.of("offload", "--config", config.toString(), "--store", "file:///tmp/x");
        assertThat(mixed.exitCode()).isEqualTo(2);
    }
}
