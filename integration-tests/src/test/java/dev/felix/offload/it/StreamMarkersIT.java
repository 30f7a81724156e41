package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.side.StreamMarker;
import dev.felix.offload.log.side.StreamMarkerFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 32's third situation through the runnable jar: one damaged {@code .streams} marker of an
 * unrelated stream, beside a configuration whose {@code acme/*}{@code /*} override expires history
 * and whose {@code acme_eu/*}{@code /*} override keeps tenant {@code acme_eu}'s for ever. Read by
 * rendered names, tenant {@code acme_eu}'s directories ({@code acme_eu_default_stream-0_0-...}) match
 * both; the damaged marker must cost exactly its own stream its exact names, be named as a failure,
 * and never shorten anyone's limits.
 */
class StreamMarkersIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    private void generate(String tenant, int seed) throws Exception {
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate-" + tenant, "generate", "--data-dir", "data",
                "--tenant", tenant, "--streams", "1", "--records", "2000", "--payload-bytes", "100",
                "--segment-bytes", "16384", "--seed", "" + seed);
        assertThat(gen.exitCode()).as(gen.out() + gen.err()).isZero();
    }

    private static void marker(Path root, String tenant) throws Exception {
        StreamMarkerFile.save(root, new StreamMarker(tenant, "default", "stream-0", OptionalLong.of(0), false,
                OptionalLong.empty()));
    }

    private static Path markerFile(Path root, String tenant) {
        return StreamMarkerFile.fileIn(root, tenant, "default", "stream-0");
    }

    private static void flipOneByte(Path file, int at) throws Exception {
        byte[] bytes = Files.readAllBytes(file);
        bytes[at] ^= 0x01;
        Files.write(file, bytes);
    }

    private static JsonNode shard(JsonNode report, String dir) {
        for (JsonNode s : report.get("shards")) {
            if (s.get("dir").asText().equals(dir)) {
                return s;
            }
        }
        throw new AssertionError("no shard " + dir + " in " + report);
    }

    @Test
    void aDamagedMarkerExpiresNothingASoundOneWouldHaveKept() throws Exception {
        generate("acme", 1);
        generate("acme_eu", 2);
        generate("globex", 3);
        Path root = work.resolve("data");
        for (String tenant : List.of("acme", "acme_eu", "globex")) {
            marker(root, tenant);
        }
        String acme = new ShardKey("acme", "default", "stream-0", 0).directoryName();
        String acmeEu = new ShardKey("acme_eu", "default", "stream-0", 0).directoryName();
        String globex = new ShardKey("globex", "default", "stream-0", 0).directoryName();
        Path store = Files.createDirectories(work.resolve("store"));
        Path config = work.resolve("felix.properties");
        Files.writeString(config, String.join("\n",
                "data-dir=data",
                "store=" + store.toUri(),
                "node-id=n1",
                "local.retention.bytes=40KiB",
                // no broker rewrites the manifests here: entries need not stand before their local files go, so
                // retention's remote expiry is not held back by local segments still settling (timing-free)
                "offload.unlink-settle=0s",
                // acme/*/* first: among equally specific patterns the first in the file wins
                "retention.streams.acme/*/*.retention.bytes=64KiB",
                "retention.streams.acme_eu/*/*.retention.bytes=-1",
                ""), StandardCharsets.UTF_8);
        FelixJar.Result offload = FelixJar.inside(work, Map.of(), "offload", "offload", "--config", config.toString());
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();

        // One flipped byte in the marker of an unrelated stream (globex's), past its first line.
        flipOneByte(markerFile(root, "globex"), 30);
        FelixJar.Result retention = FelixJar.inside(work, Map.of(), "retention", "retention", "--config",
                config.toString(), "--json");
        JsonNode r = JSON.readTree(retention.out());
        assertThat(shard(r, acmeEu).get("remote_segments_expired").asInt())
                .as("tenant acme_eu is kept for ever: %s", retention.out()).isZero();
        assertThat(shard(r, acme).get("remote_segments_expired").asInt()).as("acme/*/* still applies to acme")
                .isPositive();
        assertThat(shard(r, acme).get("total_bytes_after").asLong()).isLessThanOrEqualTo(64 * 1024);
        assertThat(shard(r, globex).get("remote_segments_expired").asInt()).isZero();
        String damaged = ".streams/" + markerFile(root, "globex").getFileName();
        assertThat(r.get("failures").has(damaged)).as("the damaged marker is named: %s", r.get("failures")).isTrue();
        assertThat(r.get("failures").get(damaged).asText()).contains("SideFileChecksum");
        assertThat(retention.exitCode()).as("a damaged marker fails the pass: " + retention.err()).isEqualTo(1);
        assertThat(retention.err()).doesNotContain("\tat ");

        // acme_eu's own marker written by a newer broker (a version this build does not read): its stream
        // is unknown now, and takes the longest limits its name allows, and says so.
        Path euMarker = markerFile(root, "acme_eu");
        String text = Files.readString(euMarker, StandardCharsets.UTF_8);
        Files.writeString(euMarker, text.replaceFirst("felix-stream-marker 1", "felix-stream-marker 2"),
                StandardCharsets.UTF_8);
        FelixJar.Result again = FelixJar.inside(work, Map.of(), "retention-again", "retention", "--config",
                config.toString(), "--json");
        JsonNode a = JSON.readTree(again.out());
        assertThat(shard(a, acmeEu).get("remote_segments_expired").asInt()).as(again.out()).isZero();
        assertThat(a.get("failures").get(".streams/" + euMarker.getFileName()).asText()).contains("SideFileVersion");
        assertThat(a.get("uncertain_streams").get(acmeEu).asText()).contains("acme/*/*").contains("acme_eu/*/*")
                .contains("retention.bytes=-1");
        FelixJar.Result text1 = FelixJar.inside(work, Map.of(), "retention-text", "retention", "--config",
                config.toString());
        assertThat(text1.out()).contains(acmeEu + ": the stream of " + acmeEu + " is not known for certain")
                .contains(".streams/" + euMarker.getFileName());

        // Every record of acme_eu still reads back from offset 0.
        FelixJar.Result read = FelixJar.inside(work, Map.of("FELIX_NODE_ID", "n1"), "read", "read", "--data-dir", "data",
                "--store", store.toUri().toString(), "--shard", acmeEu, "--from", "0", "--max-records", "100000",
                "--json");
        assertThat(read.exitCode()).as(read.out() + read.err()).isZero();
        assertThat(read.out().lines().count()).isEqualTo(2000);
    }
}
