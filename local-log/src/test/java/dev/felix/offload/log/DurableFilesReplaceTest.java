package dev.felix.offload.log;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link DurableFiles#replace}: the target ends whole with the new content and no temporary stays behind. */
class DurableFilesReplaceTest {

    @TempDir
    Path dir;

    private Path target() {
        return dir.resolve("replica");
    }

    private Path temp() {
        return dir.resolve("replica" + DurableFiles.TEMP_SUFFIX);
    }

    private String listing() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return String.join(",", s.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    @ParameterizedTest
    @EnumSource(DurableFiles.Sync.class)
    void replaceCreatesTheTargetAndLeavesNoTemporary(DurableFiles.Sync sync) throws IOException {
        DurableFiles.replace(target(), "first".getBytes(StandardCharsets.UTF_8), sync);
        assertThat(target()).hasContent("first");
        assertThat(temp()).doesNotExist();
        assertThat(listing()).isEqualTo("replica");
    }

    @ParameterizedTest
    @EnumSource(DurableFiles.Sync.class)
    void replaceOverwritesAnExistingTarget(DurableFiles.Sync sync) throws IOException {
        Files.writeString(target(), "an older and much longer content");
        DurableFiles.replace(target(), "new".getBytes(StandardCharsets.UTF_8), sync);
        assertThat(Files.readAllBytes(target())).containsExactly("new".getBytes(StandardCharsets.UTF_8));
        assertThat(listing()).isEqualTo("replica");
    }

    @ParameterizedTest
    @EnumSource(DurableFiles.Sync.class)
    void replaceOverwritesALeftoverTemporaryFromACrash(DurableFiles.Sync sync) throws IOException {
        Files.writeString(target(), "old");
        Files.writeString(temp(), "half-written garbage left by a crash, longer than the new content");
        DurableFiles.replace(target(), "new".getBytes(StandardCharsets.UTF_8), sync);
        assertThat(Files.readAllBytes(target())).as("no tail of the leftover")
                .containsExactly("new".getBytes(StandardCharsets.UTF_8));
        assertThat(temp()).doesNotExist();
        assertThat(listing()).isEqualTo("replica");
    }

    @ParameterizedTest
    @EnumSource(DurableFiles.Sync.class)
    void replaceWithEmptyContentLeavesAnEmptyTarget(DurableFiles.Sync sync) throws IOException {
        Files.writeString(target(), "old");
        DurableFiles.replace(target(), new byte[0], sync);
        assertThat(Files.size(target())).isZero();
        assertThat(listing()).isEqualTo("replica");
    }
}
