package dev.felix.offload.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The runnable jar, started as a user starts it: {@code java -jar cli/target/felix-offload.jar ...}. */
class RunnableJarIT {

    record Result(int exitCode, String out, String err) {
    }

    static Result felixOffload(Path workDir, String... args) throws IOException, InterruptedException {
        Path jar = Path.of(System.getProperty("felix.jar", "../cli/target/felix-offload.jar")).toAbsolutePath();
        assertThat(jar).as("the runnable jar is built before the integration tests").isRegularFile();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar.toString()));
        command.addAll(List.of(args));
        Path out = workDir.resolve("stdout");
        Path err = workDir.resolve("stderr");
        Process p = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("felix-offload " + String.join(" ", args) + " did not finish in 2 minutes");
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void writesASampleRootAndChecksIt(@TempDir Path dir) throws Exception {
        Result sample = felixOffload(dir, "sample-data", "--data-dir", "root");
        assertThat(sample.exitCode()).as(sample.err()).isZero();

        Result fsck = felixOffload(dir, "fsck", "--data-dir", "root", "--json");
        assertThat(fsck.exitCode()).as(fsck.err()).isZero();
        assertThat(fsck.out()).contains("\"verdict\":\"repairable\"", "\"kind\":\"Truncated\"");
        assertThat(fsck.err()).as("no log noise on a clean run").isEmpty();
    }

    @Test
    void dumpsASegmentAsJsonLines(@TempDir Path dir) throws Exception {
        felixOffload(dir, "sample-data", "--data-dir", "root", "--records-per-segment", "4");
        Result dump = felixOffload(dir, "dump", "--json", "--segment",
                "root/acme_default_orders_0-0d3aed4b998d2798/00000000000000000000.log");
        assertThat(dump.exitCode()).as(dump.err()).isZero();
        assertThat(dump.out().lines()).hasSize(4).allMatch(l -> l.startsWith("{\"offset\":"));
    }

    @Test
    void reportsUsageErrorsWithExitTwo(@TempDir Path dir) throws Exception {
        Result r = felixOffload(dir, "fsck", "--data-dir", "does-not-exist");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("no data root directory");
    }
}
