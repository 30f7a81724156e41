package dev.felix.offload.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code felix-offload} as an operator runs it: {@code java [flags] -jar felix-offload.jar ...} in a
 * process of its own, timed from its start to its exit (or, for the daemon, to its first answer on
 * {@code /health}); and the distribution's launcher ({@link Launcher}), which brings its own JVM flags
 * and class-data-sharing archive.
 */
final class JarRuns {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final BenchConfig config;
    private final Path java = Path.of(System.getProperty("java.home"), "bin", "java");

    JarRuns(BenchConfig config) {
        this.config = config;
    }

    /** The jar's command with {@code jvmFlags} and {@code args}. */
    List<String> command(List<String> jvmFlags, String... args) {
        List<String> c = new ArrayList<>();
        c.add(java.toString());
        c.addAll(jvmFlags);
        c.add("-jar");
        c.add(config.cliJar.toString());
        c.addAll(List.of(args));
        return c;
    }

    /** The launcher's command with {@code args} (its own JVM flags and archive). */
    List<String> launcherCommand(String... args) {
        List<String> c = new ArrayList<>();
        c.add(config.launcher.toString());
        c.addAll(List.of(args));
        return c;
    }

    /** Runs {@code command} to its end (10 minutes at most); its exit code, output in {@code log}. */
    static int run(List<String> command, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 10 minutes");
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** Seconds from the start of {@code command} to its exit; a non-zero exit fails with its output. */
    static double timed(List<String> command, Map<String, String> env, Path log) throws IOException {
        long start = System.nanoTime();
        int exit = run(command, env, log);
        double seconds = (System.nanoTime() - start) / 1e9;
        if (exit != 0) {
            throw new IOException(String.join(" ", command) + " exited with " + exit + ": " + tail(log));
        }
        return seconds;
    }

    /**
     * Seconds from the start of {@code command} (a daemon) until {@code GET health} is answered at all
     * (any status: the endpoint is up); then the daemon is stopped with SIGTERM and waited for.
     */
    static double untilAnswered(List<String> command, Map<String, String> env, Path log, URI health)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        try {
            long deadline = start + TimeUnit.MINUTES.toNanos(2);
            while (true) {
                try {
                    HTTP.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build(),
                            HttpResponse.BodyHandlers.discarding());
                    return (System.nanoTime() - start) / 1e9;
                } catch (IOException notYet) {
                    if (!p.isAlive()) {
                        throw new IOException("the daemon exited with " + p.exitValue() + " before answering: " + tail(log));
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IOException("the daemon did not answer " + health + " within 2 minutes");
                    }
                    Thread.sleep(5);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } finally {
            stop(p);
        }
    }

    /** Ends a process it started: SIGTERM, then SIGKILL if it has not exited within a minute. */
    /** Waits for {@code p} to exit; one still running after {@code timeoutNanos} is killed and named. */
    static void awaitExit(Process p, long timeoutNanos, String what) throws IOException {
        try {
            if (!p.waitFor(timeoutNanos, TimeUnit.NANOSECONDS)) {
                p.destroyForcibly();
                throw new IOException(what + " did not finish in " + TimeUnit.NANOSECONDS.toMinutes(timeoutNanos)
                        + " minutes");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    static void stop(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(1, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join(" ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }
}
