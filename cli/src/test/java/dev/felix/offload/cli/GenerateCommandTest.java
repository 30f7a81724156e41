package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class GenerateCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void generatedRootPassesFsckWithEveryShardOk(@TempDir Path dir) throws IOException {
        CliRun gen = CliRun.of("generate", "--data-dir", dir.toString(), "--streams", "2", "--shards-per-stream", "3",
                "--records", "3000", "--payload-bytes", "100", "--segment-bytes", "65536", "--producers", "4");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        assertThat(gen.out()).contains("wrote 18000 records");

        CliRun fsck = CliRun.of("fsck", "--data-dir", dir.toString(), "--json");
        assertThat(fsck.exitCode()).isZero();
        JsonNode shards = JSON.readTree(fsck.out()).get("shards");
        assertThat(shards).hasSize(6);
        for (JsonNode shard : shards) {
            assertThat(shard.get("verdict").asText()).isEqualTo("ok");
            assertThat(shard.get("problems")).as("no index or data problem in %s", shard.get("dir")).isEmpty();
            assertThat(shard.get("records").asLong()).isEqualTo(3000);
        }
    }

    @Test
    void producersWriteTaggedBatches(@TempDir Path dir) throws IOException {
        CliRun.of("generate", "--data-dir", dir.toString(), "--records", "500", "--producers", "2", "--payload-bytes", "8");
        Path segment = firstSegment(dir);
        String dump = CliRun.of("dump", "--segment", segment.toString(), "--json").out();
        assertThat(dump).contains("\"kind\":\"batch-open\"", "\"producer_id\":100", "\"kind\":\"plain\"");
    }

    @Test
    void theSameSeedWritesTheSameRecords(@TempDir Path dir) throws IOException {
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        Path c = dir.resolve("c");
        for (Path p : List.of(a, b)) {
            CliRun.of("generate", "--data-dir", p.toString(), "--records", "300", "--producers", "2", "--seed", "42");
        }
        CliRun.of("generate", "--data-dir", c.toString(), "--records", "300", "--producers", "2", "--seed", "43");
        String dumpA = CliRun.of("dump", "--segment", firstSegment(a).toString(), "--json").out();
        assertThat(CliRun.of("dump", "--segment", firstSegment(b).toString(), "--json").out()).isEqualTo(dumpA);
        assertThat(CliRun.of("dump", "--segment", firstSegment(c).toString(), "--json").out()).isNotEqualTo(dumpA);
    }

    @Test
    void badOptionsAreUsageErrors(@TempDir Path dir) {
        assertThat(CliRun.of("generate", "--data-dir", dir.toString(), "--streams", "0").exitCode())
                .isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(CliRun.of("generate", "--data-dir", dir.toString(), "--payload-bytes", "67108865").exitCode())
                .isEqualTo(FelixOffload.EXIT_USAGE);
        CliRun tooMany = CliRun.of("generate", "--data-dir", dir.toString(), "--streams", "100000", "--shards-per-stream", "100000");
        assertThat(tooMany.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(tooMany.err()).contains("10000000000 shards; at most 10000");
        CliRun tooBig = CliRun.of("generate", "--data-dir", dir.resolve("new").toString(), "--records", "1000000000000",
                "--payload-bytes", "65536");
        assertThat(tooBig.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(tooBig.err()).contains("--data-dir: 1 shards of 1000000000000 records of 65536 bytes need about");
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void aRootGenerateDidNotWriteIsRefusedUnlessAppendIsGivenAndThenTimeMovesOn(@TempDir Path dir) throws IOException {
        Path live = dir.resolve("live");
        CliRun.of("generate", "--data-dir", live.toString(), "--records", "200", "--payload-bytes", "8");
        Files.delete(live.resolve(GenerateCommand.MARKER)); // now a root like a broker's: shards, no marker
        Path segment = firstSegment(live);
        byte[] before = Files.readAllBytes(segment);

        CliRun refused = CliRun.of("generate", "--data-dir", live.toString(), "--records", "10", "--payload-bytes", "8");
        assertThat(refused.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(refused.err()).contains("--data-dir: " + live.toAbsolutePath() + " is not empty and was not written by"
                + " generate").contains("--append").doesNotContain("\tat ");
        assertThat(Files.readAllBytes(segment)).isEqualTo(before);

        CliRun added = CliRun.of("generate", "--data-dir", live.toString(), "--records", "10", "--payload-bytes", "8",
                "--append");
        assertThat(added.exitCode()).as(added.err()).isZero();
        long grown = Files.size(segment) - before.length;
        assertThat(grown).isPositive();
        // The bytes this run wrote, not the shard's total.
        assertThat(added.out()).contains("offsets 200 to 210").contains("wrote 10 records (" + grown + " bytes)");

        List<JsonNode> records = CliRun.of("dump", "--segment", segment.toString(), "--json").out().lines()
                .map(l -> {
                    try {
                        return JSON.readTree(l);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                })
                .filter(n -> n.has("offset")).toList();
        assertThat(records).hasSize(210);
        for (int i = 1; i < records.size(); i++) {
            assertThat(records.get(i).get("timestamp_micros").asLong()).as("timestamp of offset %d", i)
                    .isGreaterThan(records.get(i - 1).get("timestamp_micros").asLong());
        }
    }

    @Test
    void aRootGenerateWroteTakesMoreWithoutAppend(@TempDir Path dir) throws IOException {
        Path root = dir.resolve("gen");
        assertThat(CliRun.of("generate", "--data-dir", root.toString(), "--records", "50").exitCode()).isZero();
        assertThat(root.resolve(GenerateCommand.MARKER)).exists();
        CliRun again = CliRun.of("generate", "--data-dir", root.toString(), "--records", "5", "--payload-bytes", "8");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("offsets 50 to 55").contains("wrote 5 records");
    }

    private static Path firstSegment(Path root) throws IOException {
        try (Stream<Path> shards = Files.list(root)) {
            Path shard = shards.filter(Files::isDirectory).sorted().findFirst().orElseThrow();
            return shard.resolve("00000000000000000000.log");
        }
    }
}
