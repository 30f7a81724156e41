package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** fsck against data roots written by the independent Python implementation of the format. */
class FsckCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> CONTRACT_KEYS = List.of("file", "kind", "segment", "position", "repairable");

    static Stream<Path> goldenRoots() throws IOException {
        try (Stream<Path> entries = Files.list(CliRun.goldenDir().resolve("roots"))) {
            List<Path> roots = entries.filter(Files::isDirectory).sorted().toList();
            assertThat(roots).hasSizeGreaterThanOrEqualTo(7);
            return roots.stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("goldenRoots")
    void jsonReportMatchesTheIndependentWriter(Path root) throws Exception {
        check(root, root.resolveSibling(root.getFileName() + ".expected-fsck.json"), false);
    }

    @ParameterizedTest(name = "{0} --repair-checksum-tail")
    @MethodSource("goldenRoots")
    void jsonReportWithTheOptInMatches(Path root) throws Exception {
        Path expected = root.resolveSibling(root.getFileName() + ".expected-fsck-repair.json");
        if (Files.exists(expected)) {
            check(root, expected, true);
        } else {
            // Without an opt-in fixture, the opt-in may only turn corrupt shards repairable, never the reverse.
            CliRun plain = CliRun.of("fsck", "--data-dir", root.toString(), "--json");
            CliRun optIn = CliRun.of("fsck", "--data-dir", root.toString(), "--json", "--repair-checksum-tail");
            JsonNode a = JSON.readTree(plain.out()).get("shards");
            JsonNode b = JSON.readTree(optIn.out()).get("shards");
            for (int i = 0; i < a.size(); i++) {
                if (!a.get(i).get("verdict").asText().equals("corrupt")) {
                    assertThat(b.get(i).get("verdict")).isEqualTo(a.get(i).get("verdict"));
                }
            }
        }
    }

    private static void check(Path root, Path expectedFile, boolean optIn) throws Exception {
        Map<String, String> before = digestTree(root);
        CliRun run = optIn
                ? CliRun.of("fsck", "--data-dir", root.toString(), "--json", "--repair-checksum-tail")
                : CliRun.of("fsck", "--data-dir", root.toString(), "--json");
        assertThat(digestTree(root)).as("fsck never writes").isEqualTo(before);

        JsonNode expected = JSON.readTree(expectedFile.toFile());
        JsonNode actual = JSON.readTree(run.out());
        assertThat(contractView(actual)).isEqualTo(contractView(expected));

        boolean anyCorrupt = false;
        for (JsonNode shard : expected.get("shards")) {
            anyCorrupt |= shard.get("verdict").asText().equals("corrupt");
        }
        assertThat(run.exitCode()).isEqualTo(anyCorrupt ? FelixOffload.EXIT_CORRUPT : FelixOffload.EXIT_OK);
        for (JsonNode shard : actual.get("shards")) {
            for (JsonNode problem : shard.get("problems")) {
                assertThat(problem.path("message").asText()).as("every problem explains itself").isNotBlank();
            }
        }
    }

    /** The report reduced to the contract's keys (extra explanatory fields are allowed). */
    private static JsonNode contractView(JsonNode report) {
        ObjectNode out = JSON.createObjectNode();
        ArrayNode shards = out.putArray("shards");
        for (JsonNode s : report.get("shards")) {
            ObjectNode shard = shards.addObject();
            for (String key : List.of("dir", "verdict", "records", "first_offset", "next_offset")) {
                shard.set(key, s.get(key));
            }
            ArrayNode problems = shard.putArray("problems");
            for (JsonNode p : s.get("problems")) {
                ObjectNode problem = problems.addObject();
                CONTRACT_KEYS.forEach(k -> problem.set(k, p.get(k)));
            }
        }
        return out;
    }

    @Test
    void textReportSummarisesVerdicts() {
        Path root = CliRun.goldenDir().resolve("roots/torn-tail");
        CliRun run = CliRun.of("fsck", "--data-dir", root.toString());
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(run.out()).contains(": repairable, ", "Truncated at byte ", "repairable:")
                .containsPattern("\\d+ shards: \\d+ ok, \\d+ repairable, 0 corrupt");
    }

    @Test
    void anEmptyRootHasNoShards(@TempDir Path root) throws IOException {
        CliRun run = CliRun.of("fsck", "--data-dir", root.toString(), "--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(JSON.readTree(run.out()).get("shards")).isEmpty();
    }

    @Test
    void aMissingRootIsAUsageError(@TempDir Path dir) {
        CliRun run = CliRun.of("fsck", "--data-dir", dir.resolve("absent").toString(), "--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(run.err()).contains("no data root directory at");
    }

    @Test
    void aMissingOptionIsAUsageError() {
        assertThat(CliRun.of("fsck").exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
    }

    /** Content and modification time of every file under a root, so that any write shows. */
    static Map<String, String> digestTree(Path root) throws IOException, NoSuchAlgorithmException {
        Map<String, String> digests = new TreeMap<>();
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.toList()) {
                String key = root.relativize(p).toString();
                if (Files.isRegularFile(p)) {
                    FileTime mtime = Files.getLastModifiedTime(p);
                    digests.put(key, HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p))) + "@" + mtime);
                } else {
                    digests.put(key, "dir");
                }
            }
        }
        return digests;
    }
}
