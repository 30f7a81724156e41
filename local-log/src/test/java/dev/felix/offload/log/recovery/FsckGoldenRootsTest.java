package dev.felix.offload.log.recovery;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.Golden;
import dev.felix.offload.log.TestJson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code golden/roots/<name>/} data root inspected shard by shard with {@link ShardInspector}
 * and compared with the independent implementation's fsck report: {@code <name>.expected-fsck.json}
 * under {@link RecoveryOptions#DEFAULT}, and {@code <name>.expected-fsck-repair.json}, where present,
 * with repairChecksumTail on. The shard list itself comes from {@link DataRoot#shards()}.
 */
class FsckGoldenRootsTest {

    static List<Arguments> reports() {
        List<Arguments> out = new ArrayList<>();
        for (Path root : Golden.dirs("roots")) {
            String name = root.getFileName().toString();
            Path defaults = root.resolveSibling(name + ".expected-fsck.json");
            assertThat(defaults).as("every golden root has a default fsck report").exists();
            out.add(Arguments.of(name, RecoveryOptions.DEFAULT, defaults));
            Path repair = root.resolveSibling(name + ".expected-fsck-repair.json");
            if (Files.exists(repair)) {
                out.add(Arguments.of(name, new RecoveryOptions(true), repair));
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0} with {1}")
    @MethodSource("reports")
    @SuppressWarnings("unchecked")
    void inspectionMatchesTheExpectedFsckReport(String name, RecoveryOptions options, Path report) throws IOException {
        Path root = Golden.dir().resolve("roots").resolve(name);
        List<Map<String, Object>> expectedShards =
                (List<Map<String, Object>>) TestJson.object(Golden.read(report)).get("shards");

        List<Path> shardDirs = new DataRoot(root).shards().stream().map(DataRoot.Shard::directory).toList();
        assertThat(shardDirs).extracting(p -> p.getFileName().toString())
                .containsExactlyElementsOf(expectedShards.stream().map(s -> (String) s.get("dir")).toList());

        for (int i = 0; i < shardDirs.size(); i++) {
            Map<String, Object> expected = expectedShards.get(i);
            String dir = (String) expected.get("dir");
            ShardInspection actual = ShardInspector.inspect(shardDirs.get(i), options);

            assertThat(actual.name()).isEqualTo(dir);
            assertThat(actual.verdict().label()).as(dir + " verdict; problems " + actual.problems())
                    .isEqualTo(expected.get("verdict"));
            assertThat(actual.records()).as(dir + " records").isEqualTo(((BigInteger) expected.get("records")).longValueExact());
            assertThat(Long.toUnsignedString(actual.firstOffset())).as(dir + " first_offset")
                    .isEqualTo(expected.get("first_offset").toString());
            assertThat(Long.toUnsignedString(actual.nextOffset())).as(dir + " next_offset")
                    .isEqualTo(expected.get("next_offset").toString());

            List<Map<String, Object>> expectedProblems = (List<Map<String, Object>>) expected.get("problems");
            List<String> actualRows = actual.problems().stream().map(FsckGoldenRootsTest::row).toList();
            List<String> expectedRows = expectedProblems.stream().map(FsckGoldenRootsTest::row).toList();
            assertThat(actualRows).as(dir + " problems").containsExactlyElementsOf(expectedRows);
        }
    }

    private static String row(Problem p) {
        return p.file() + " " + p.kind() + " segment=" + Long.toUnsignedString(p.segmentId()) + " position="
                + p.position() + " repairable=" + p.repairable();
    }

    private static String row(Map<String, Object> p) {
        return p.get("file") + " " + p.get("kind") + " segment=" + p.get("segment") + " position=" + p.get("position")
                + " repairable=" + p.get("repairable");
    }
}
