package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class DemoCommandTest {

    @TempDir
    Path tmp;

    @Test
    void runsTheMainJobAndCanRunAgain() throws Exception {
        Path dir = tmp.resolve("demo");
        for (int run = 0; run < 2; run++) {
            CliRun demo = CliRun.of("demo", "--dir", dir.toString());
            assertThat(demo.exitCode()).as(demo.out() + demo.err()).isZero();
            assertThat(demo.out()).contains("1. wrote 3 streams", "2. offload:", "3. retention:",
                    "4. where the data is now", "identical to what was written");
            // The filesystem store's proof is named for what it is: no server computed anything.
            assertThat(demo.out()).contains("proven: ", "by the CRC32 the filesystem store computed")
                    .doesNotContain("server-checksum", "server computed");
            // The table shows both ranges and where they overlap.
            assertThat(demo.out()).containsPattern("(?m)^   acme_default_stream-0_0-\\S+ +\\d+\\.\\.\\d+ .* \\d+\\.\\.\\d+ .* "
                    + "(\\d+\\.\\.\\d+|-)$");
            assertThat(demo.out()).doesNotContain("did not go as expected");
        }
        assertThat(dir.resolve("store/demo-node")).isDirectory();
    }

    @Test
    void refusesADirectoryItDidNotWrite(@TempDir Path other) throws Exception {
        Files.writeString(other.resolve("precious.txt"), "keep me");
        CliRun demo = CliRun.of("demo", "--dir", other.toString());
        assertThat(demo.exitCode()).isEqualTo(2);
        assertThat(demo.err()).contains("no demo wrote it");
        assertThat(other.resolve("precious.txt")).exists();
    }
}
