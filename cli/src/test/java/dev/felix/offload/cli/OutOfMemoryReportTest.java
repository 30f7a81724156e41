package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OutOfMemoryReportTest {
    @Test
    void oneLineNamesTheHeapAndTheSettingsThatHelp() {
        StringWriter text = new StringWriter();
        int code = FelixOffload.outOfMemory(new PrintWriter(text), 256L << 20);
        assertThat(code).isEqualTo(FelixOffload.EXIT_OUT_OF_MEMORY).isNotIn(FelixOffload.EXIT_OK,
                FelixOffload.EXIT_CORRUPT, FelixOffload.EXIT_USAGE, FelixOffload.EXIT_IO);
        assertThat(text.toString()).hasLineCount(1)
                .startsWith("felix-offload: out of memory:")
                .contains("(256 MiB)", "-Xmx", "--max-bytes-in-flight")
                .doesNotContain("Exception", "\tat ");
    }

    @Test
    void aThreadOutOfMemoryEndsTheProcessWithThatLine() throws Exception {
        Child run = Child.run("oom");
        assertThat(run.exit).as(run.output).isEqualTo(FelixOffload.EXIT_OUT_OF_MEMORY);
        assertThat(run.output).contains("[worker] felix-offload: out of memory:").doesNotContain("\tat ")
                .doesNotContain("still running");
    }

    @Test
    void otherFailuresOfAThreadEndOnlyThatThreadWithOneLine() throws Exception {
        Child run = Child.run("other");
        assertThat(run.exit).as(run.output).isZero();
        assertThat(run.output).contains("thread worker ended on an unexpected failure: java.lang.IllegalStateException: boom")
                .doesNotContain("\tat ").contains("still running");
    }

    /** A JVM with the CLI's handler and one thread that fails. */
    public static final class Child {
        final int exit;
        final String output;

        private Child(int exit, String output) {
            this.exit = exit;
            this.output = output;
        }

        static Child run(String mode) throws Exception {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), Child.class.getName(), mode)
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
            return new Child(p.exitValue(), output);
        }

        public static void main(String[] args) throws Exception {
            Thread.setDefaultUncaughtExceptionHandler(FelixOffload::uncaught);
            Thread worker = new Thread(() -> {
                if (args[0].equals("oom")) {
                    throw new OutOfMemoryError("Java heap space");
                }
                throw new IllegalStateException("boom");
            }, "worker");
            worker.start();
            worker.join();
            Thread.sleep(200);
            System.out.println("still running");
        }
    }
}
