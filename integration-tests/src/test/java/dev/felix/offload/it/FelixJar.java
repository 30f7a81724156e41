package dev.felix.offload.it;

import dev.felix.offload.cli.EmbeddedRun;
import dev.felix.offload.root.NodeId;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runnable jar as a separate process ({@code java -jar cli/target/felix-offload.jar ...}), with
 * the environment a test gives it (store credentials, as an operator's would).
 *
 * <p>These runs are short and start-up dominates them, so each process starts with C1 only, the
 * serial collector and a class-data archive of the tool's classes, written once per test JVM by the
 * first command that exits 0 and moved into place only then (a process never maps half an archive).
 * JVM warnings go to stderr, never into the stdout a test parses. What the JVM itself does for an
 * operator (the launcher's archive, heap limits, signals) is tested elsewhere with the JVM's own
 * defaults ({@code LauncherIT}, {@code RunnableJarIT}).
 *
 * <p>Where the process itself is not what a case tests, {@link #inside} runs the same command inside the
 * test JVM, with the same result and without a JVM's start.
 */
final class FelixJar {

    /** One archive per test JVM: one from an earlier build of the jar would not match it. */
    private static final Path ARCHIVE = Path.of(System.getProperty("felix.it.cds.dir", "target/cds"))
            .resolve("felix-it-" + ProcessHandle.current().pid() + ".jsa").toAbsolutePath();
    private static boolean archiveTaken;

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
        return builder(workDir, env, name, archiveOptions(null), args);
    }

    private static ProcessBuilder builder(Path workDir, Map<String, String> env, String name, List<String> archive,
                                          String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xlog:disable",
                "-Xlog:all=warning:stderr"));
        command.addAll(archive);
        command.addAll(List.of("-jar", jar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(workDir.resolve(name + ".out").toFile())
                .redirectError(workDir.resolve(name + ".err").toFile());
        b.environment().remove("FELIX_NODE_ID");
        b.environment().remove("JAVA_TOOL_OPTIONS");
        b.environment().putAll(env);
        return b;
    }

    /** Runs a command to its end (two minutes at most). */
    static Result run(Path workDir, Map<String, String> env, String name, String... args)
            throws IOException, InterruptedException {
        Path dump = ARCHIVE.resolveSibling(ARCHIVE.getFileName() + ".part");
        List<String> archive = archiveOptions(dump);
        Process p = builder(workDir, env, name, archive, args).start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("felix-offload " + String.join(" ", args) + " did not finish in 2 minutes");
        }
        if (archive.stream().anyMatch(o -> o.startsWith("-XX:ArchiveClassesAtExit="))) {
            archiveWritten(p.exitValue() == 0, dump);
        }
        return new Result(p.exitValue(), read(workDir.resolve(name + ".out")), read(workDir.resolve(name + ".err")));
    }

    /**
     * Runs a command inside this JVM ({@link EmbeddedRun}), for a case where the process is not what is tested:
     * the same result as {@link #run} without a JVM's start, its output kept in the same two files. A daemon
     * whose configuration is taken needs a process of its own, and is run as {@link #run} runs it. {@code env}
     * is what {@link #run} adds to this JVM's environment; only what the tool reads through its own
     * environment can differ, so anything else is refused (see {@link #insideHonours}): such a case needs the
     * process. This JVM has one working directory: the relative paths the tool's path options take
     * ({@link #PATH_OPTIONS}) are resolved against {@code workDir}, where the process would have started, so
     * a message that repeats such a path names it in full.
     */
    static Result inside(Path workDir, Map<String, String> env, String name, String... args)
            throws IOException, InterruptedException {
        if (!insideHonours(env)) {
            throw new IllegalArgumentException("a run inside this JVM cannot be given " + env.keySet()
                    + ": run it as a process");
        }
        Map<String, String> environment = new HashMap<>(System.getenv());
        environment.remove(NodeId.ENV);
        environment.remove("JAVA_TOOL_OPTIONS");
        environment.putAll(env);
        String[] resolved = args.clone();
        for (int i = 1; i < resolved.length; i++) {
            if (PATH_OPTIONS.contains(resolved[i - 1])) {
                resolved[i] = workDir.resolve(resolved[i]).toString();
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try {
            exit = EmbeddedRun.run(out, err, environment, Duration.ofMinutes(2), resolved);
        } catch (TimeoutException e) {
            throw new AssertionError(e.getMessage() + "; stderr: " + err.toString(StandardCharsets.UTF_8));
        } catch (EmbeddedRun.NeedsProcess e) {
            return run(workDir, env, name, args);
        }
        Files.write(workDir.resolve(name + ".out"), out.toByteArray());
        Files.write(workDir.resolve(name + ".err"), err.toByteArray());
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The options whose values are paths (a relative one is taken from the working directory). */
    private static final java.util.Set<String> PATH_OPTIONS = java.util.Set.of("--data-dir", "--config", "--shard-dir",
            "--segment", "--dir");

    /**
     * Whether {@link #inside} can give a run what {@code env} adds to this JVM's environment: what the tool reads
     * through its own environment (the node id, the store keys; the region is always the store URI's or the
     * default) and what is as in this JVM's.
     */
    static boolean insideHonours(Map<String, String> env) {
        boolean keys = env.get("AWS_ACCESS_KEY_ID") != null && env.get("AWS_SECRET_ACCESS_KEY") != null;
        return env.entrySet().stream().allMatch(e -> e.getKey().equals(NodeId.ENV)
                || keys && STORE_KEYS.contains(e.getKey())
                || e.getValue().equals(System.getenv(e.getKey())));
    }

    /** The variables a run inside this JVM hands its stores (see {@link EmbeddedRun}), when both keys are given. */
    private static final java.util.Set<String> STORE_KEYS = java.util.Set.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION");

    /**
     * The class-data options for the next process: map the archive once it exists; else, for a run
     * whose end this class waits for ({@code dump} not null), write it if no other run is writing it.
     */
    private static synchronized List<String> archiveOptions(Path dump) {
        if (Files.isRegularFile(ARCHIVE)) {
            return List.of("-XX:SharedArchiveFile=" + ARCHIVE);
        }
        if (dump == null || archiveTaken) {
            return List.of();
        }
        try {
            Files.createDirectories(ARCHIVE.getParent());
        } catch (IOException e) {
            return List.of();
        }
        archiveTaken = true;
        return List.of("-XX:ArchiveClassesAtExit=" + dump);
    }

    /** A run that wrote the archive ended: a clean exit publishes it, any other lets a later run try. */
    private static synchronized void archiveWritten(boolean cleanExit, Path dump) throws IOException {
        if (cleanExit && Files.isRegularFile(dump)) {
            Files.move(dump, ARCHIVE, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } else {
            Files.deleteIfExists(dump);
            archiveTaken = false;
        }
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
