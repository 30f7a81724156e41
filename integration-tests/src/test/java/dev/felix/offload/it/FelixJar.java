package dev.felix.offload.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runnable jar as a separate process ({@code java -jar cli/target/felix-offload.jar ...}), with
 * the environment a test gives it (store credentials, as an operator's would).
 */
final class FelixJar {

    record Result(int exitCode, String out, String err) {
    }

    private FelixJar() {
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("felix.jar", "../cli/target/felix-offload.jar")).toAbsolutePath();
        assertThat(jar).as("the runnable jar is built before the integration tests").isRegularFile();
        return jar;
    }

    static ProcessBuilder builder(Path workDir, Map<String, String> env, String name, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", jar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(workDir.resolve(name + ".out").toFile())
                .redirectError(workDir.resolve(name + ".err").toFile());
        b.environment().remove("FELIX_NODE_ID");
        b.environment().putAll(env);
        return b;
    }

    /** Runs a command to its end (two minutes at most). */
    static Result run(Path workDir, Map<String, String> env, String name, String... args)
            throws IOException, InterruptedException {
        Process p = builder(workDir, env, name, args).start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("felix-offload " + String.join(" ", args) + " did not finish in 2 minutes");
        }
        return new Result(p.exitValue(), read(workDir.resolve(name + ".out")), read(workDir.resolve(name + ".err")));
    }

    static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    /** Waits for {@code condition}, checking every 200 ms, failing after {@code limit}. */
    static void await(String what, Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("gave up waiting (" + limit + ") until " + what);
            }
            Thread.sleep(200);
        }
    }

    /** A running daemon: {@code run --config FILE}. */
    static final class Daemon implements AutoCloseable {
        private static final Pattern SERVING = Pattern.compile("serving (https?)://([^/\\s]+)/");

        final Process process;
        final Path workDir;
        final String base;

        private Daemon(Process process, Path workDir, String base) {
            this.process = process;
            this.workDir = workDir;
            this.base = base;
        }

        static Daemon start(Path workDir, Map<String, String> env, Path config) throws Exception {
            Process p = builder(workDir, env, "daemon", "run", "--config", config.toString()).start();
            String[] address = new String[2];
            await("the daemon says where it serves", Duration.ofSeconds(60), () -> {
                try {
                    Matcher m = SERVING.matcher(read(workDir.resolve("daemon.out")));
                    if (m.find()) {
                        address[0] = m.group(1);
                        address[1] = m.group(2);
                        return true;
                    }
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
                if (!p.isAlive()) {
                    throw new AssertionError("the daemon exited with " + p.exitValue() + ": " + stderr(workDir));
                }
                return false;
            });
            return new Daemon(p, workDir, address[0] + "://" + address[1]);
        }

        String stdout() throws IOException {
            return read(workDir.resolve("daemon.out"));
        }

        String stderr() {
            return FelixJar.Daemon.stderr(workDir);
        }

        private static String stderr(Path workDir) {
            try {
                return read(workDir.resolve("daemon.err"));
            } catch (IOException e) {
                return e.toString();
            }
        }

        /** Sends SIGTERM and waits for the exit code. */
        int terminate() throws InterruptedException {
            process.destroy(); // SIGTERM
            if (!process.waitFor(2, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("the daemon did not exit within 2 minutes of SIGTERM");
            }
            return process.exitValue();
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }
}
