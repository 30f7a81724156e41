package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** dump against segments written by the independent Python implementation of the format. */
class DumpCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    static Stream<Path> goldenSegments() throws IOException {
        try (Stream<Path> files = Files.list(CliRun.goldenDir().resolve("segments"))) {
            List<Path> logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
            assertThat(logs).hasSizeGreaterThan(20);
            return logs.stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("goldenSegments")
    void jsonDumpMatchesTheIndependentWriter(Path segment) throws IOException {
        String name = segment.getFileName().toString();
        Path expectedFile = segment.resolveSibling(name.substring(0, name.length() - 4) + ".expected-dump.jsonl");
        List<JsonNode> expected = readLines(Files.readString(expectedFile));

        CliRun run = CliRun.of("dump", "--segment", segment.toString(), "--json");
        List<JsonNode> actual = readLines(run.out());

        assertThat(actual).as("lines of " + name).hasSameSizeAs(expected);
        boolean corrupt = !expected.isEmpty() && expected.get(expected.size() - 1).has("error");
        for (int i = 0; i < expected.size(); i++) {
            JsonNode want = expected.get(i);
            JsonNode got = actual.get(i);
            if (want.has("error")) {
                assertThat(i).as("the error line is the last").isEqualTo(expected.size() - 1);
                assertThat(got.path("error").asText()).isEqualTo(want.get("error").asText());
                assertThat(got.path("position").asLong()).isEqualTo(want.get("position").asLong());
                assertThat(got.path("message").asText()).contains("byte " + want.get("position").asLong());
            } else {
                // Record lines carry exactly the contract's keys, with u64 values unsigned.
                assertThat(got).as("record line %d of %s", i, name).isEqualTo(want);
            }
        }
        assertThat(run.exitCode()).isEqualTo(corrupt ? FelixOffload.EXIT_CORRUPT : FelixOffload.EXIT_OK);
    }

    @Test
    void textDumpPrintsOneLinePerRecordAndAnErrorLine() {
        Path segment = CliRun.goldenDir().resolve("segments/payload-bitflip.log");
        CliRun run = CliRun.of("dump", "--segment", segment.toString());
        List<String> lines = run.out().lines().toList();
        assertThat(lines.get(0)).startsWith("offset=").contains("kind=plain", "position=32", "payload_base64=");
        assertThat(lines.get(lines.size() - 1)).startsWith("error: RecordChecksum at ")
                .contains("stored crc32 0x", "computed 0x");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
    }

    @Test
    void aMissingFileIsAUsageError(@TempDir Path dir) {
        CliRun run = CliRun.of("dump", "--segment", dir.resolve("nope.log").toString(), "--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(run.err()).contains("no segment file at");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        assertThat(CliRun.of("dump", "--bogus").exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
    }

    private static List<JsonNode> readLines(String text) {
        return text.lines().filter(l -> !l.isBlank()).map(l -> {
            try {
                return JSON.readTree(l);
            } catch (IOException e) {
                throw new AssertionError("not a JSON line: " + l, e);
            }
        }).toList();
    }
}
