package dev.felix.offload.log.format;

import dev.felix.offload.log.Golden;
import dev.felix.offload.log.TestJson;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Every {@code golden/indexes/*.index} loaded with {@link SegmentIndex#read} and compared with its
 * {@code .expected.json}: version, base offset and every entry, or the error kind.
 */
class IndexGoldenFilesTest {

    private static final String SHARD = "golden-indexes";

    static List<Path> indexes() {
        return Golden.files("indexes", ".index");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("indexes")
    void indexLoadsAsExpected(Path file) throws IOException {
        Path json = file.resolveSibling(Golden.stem(file, ".index") + ".expected.json");
        assertThat(json).exists();
        Map<String, Object> expected = TestJson.object(Golden.read(json));

        if (expected.containsKey("error")) {
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> SegmentIndex.read(file, SHARD, 3));
            assertThat(e).as("expected %s", expected.get("error")).isNotNull();
            assertThat(e.kind().specName()).isEqualTo(expected.get("error"));
            assertThat(e.site().shard()).isEqualTo(SHARD);
            assertThat(e.site().segmentId()).isEqualTo(3);
            assertThat(e.site().position()).isZero();
            return;
        }
        SegmentIndex index;
        try {
            index = SegmentIndex.read(file, SHARD, 3);
        } catch (CorruptionException e) {
            throw new AssertionError("expected a readable index, got " + e.getMessage(), e);
        }
        assertThat(index.version()).isEqualTo(((BigInteger) expected.get("version")).intValueExact());
        assertThat(Long.toUnsignedString(index.baseOffset())).isEqualTo(expected.get("base_offset").toString());
        @SuppressWarnings("unchecked")
        List<List<Object>> entries = (List<List<Object>>) expected.get("entries");
        assertThat(index.size()).isEqualTo(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            assertThat(Long.toUnsignedString(index.offsetAt(i))).as("entry %d offset", i)
                    .isEqualTo(entries.get(i).get(0).toString());
            assertThat(Long.toUnsignedString(index.positionAt(i))).as("entry %d position", i)
                    .isEqualTo(entries.get(i).get(1).toString());
            assertThat(index.seekPosition(index.offsetAt(i))).isEqualTo(index.positionAt(i));
        }
    }
}
