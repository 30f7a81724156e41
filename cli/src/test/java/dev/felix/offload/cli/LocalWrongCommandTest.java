package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Issue 21's cases 1 and 2 through the commands: rot with a proven copy, and a clock that stepped back. */
class LocalWrongCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void rotWithAProvenCopyIsScrubbedFsckedAndRemovedByRetentionWhichFails() throws Exception {
        Path root = tmp.resolve("root");
        assertThat(CliRun.of("generate", "--data-dir", root.toString(), "--records", "2000", "--payload-bytes", "200",
                "--segment-bytes", "40000").exitCode()).isZero();
        String store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        assertThat(CliRun.of("offload", "--data-dir", root.toString(), "--store", store).exitCode()).isZero();
        Path shard = onlyShard(root);
        Path segment0 = shard.resolve("00000000000000000000.log");
        long at = Files.size(segment0) / 2;
        flip(segment0, at);

        CliRun scrub = CliRun.of("scrub", "--data-dir", root.toString(), "--store", store, "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        JsonNode anomaly = JSON.readTree(scrub.out()).get("anomalies").get(0);
        assertThat(anomaly.get("kind").asText()).isEqualTo("local-mismatch");
        assertThat(anomaly.get("segment").asLong()).isZero();
        assertThat(anomaly.get("byte").asLong()).isBetween(32L, at);
        assertThat(anomaly.get("shard").asText()).isEqualTo(shard.getFileName().toString());

        CliRun fsck = CliRun.of("fsck", "--data-dir", root.toString(), "--json");
        assertThat(fsck.exitCode()).isEqualTo(1);
        JsonNode problem = JSON.readTree(fsck.out()).get("shards").get(0).get("problems").get(0);
        assertThat(problem.get("proven_copy").asText()).endsWith("00000000000000000000-00000000000000000000.segment");

        Path config = tmp.resolve("felix.yaml");
        Files.writeString(config, "data-dir: " + root + "\nstore: " + store
                + "\nlocal.retention.bytes: 0\nretention.bytes: 100000\n"
                // no broker rewrites the manifest here: entries need not stand before their segments go
                + "offload.unlink-settle: 0s\n");
        CliRun retention = CliRun.of("retention", "--config", config.toString(), "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isEqualTo(1);
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("succeeded").asBoolean()).isFalse();
        JsonNode s = r.get("shards").get(0);
        assertThat(s.get("problems").get(0).get("kind").asText()).isEqualTo("local-damaged");
        assertThat(s.get("total_bytes_after").asLong()).as("the limit holds again").isLessThanOrEqualTo(100_000);
        assertThat(Files.exists(segment0)).isFalse();

        CliRun again = CliRun.of("retention", "--config", config.toString(), "--json");
        assertThat(again.exitCode()).as(again.out()).isZero();
    }

    @Test
    void timeRetentionKeepsASegmentWhoseEarlyRecordsAreTheNewest() throws Exception {
        Path root = tmp.resolve("root");
        Instant now = Instant.now();
        long tenDays = micros(now.minus(Duration.ofDays(10)));
        long thirtyDays = micros(now.minus(Duration.ofDays(30)));
        assertThat(CliRun.of("generate", "--data-dir", root.toString(), "--records", "100", "--payload-bytes", "200",
                "--segment-bytes", "200000", "--start-micros", Long.toString(tenDays)).exitCode()).isZero();
        assertThat(CliRun.of("generate", "--data-dir", root.toString(), "--records", "2000", "--payload-bytes", "200",
                "--segment-bytes", "200000", "--start-micros", Long.toString(thirtyDays)).exitCode()).isZero();
        String store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        assertThat(CliRun.of("offload", "--data-dir", root.toString(), "--store", store).exitCode()).isZero();
        Path shard = onlyShard(root);
        Path config = tmp.resolve("felix.yaml");
        Files.writeString(config, "data-dir: " + root + "\nstore: " + store + "\nlocal.retention.ms: 20d\nretention.ms: 20d\n");

        CliRun retention = CliRun.of("retention", "--config", config.toString(), "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isZero();
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("local_segments_deleted").asInt()).isZero();
        assertThat(r.get("remote_segments_deleted").asInt()).isZero();
        CliRun read = CliRun.of("read", "--data-dir", root.toString(), "--store", store, "--shard",
                shard.getFileName().toString(), "--from", "0", "--max-records", "1", "--json");
        assertThat(read.exitCode()).as(read.out() + read.err()).isZero();
        assertThat(JSON.readTree(read.out()).get("offset").asLong()).isZero();
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    private static Path onlyShard(Path root) throws Exception {
        try (Stream<Path> dirs = Files.list(root)) {
            return dirs.filter(Files::isDirectory).filter(p -> p.getFileName().toString().startsWith("acme"))
                    .findFirst().orElseThrow();
        }
    }

    private static void flip(Path file, long at) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x20));
            one.rewind();
            ch.write(one, at);
        }
    }
}
