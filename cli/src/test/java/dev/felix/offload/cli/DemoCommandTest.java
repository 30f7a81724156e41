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
            assertThat(demo.out()).contains("1. wrote 3 streams", "2. offload:", "verified by", "3. retention:",
                    "4. where the data is now:", "identical to what was written");
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
