package dev.felix.offload.reliability;

import dev.felix.offload.cli.EmbeddedRun;
import dev.felix.offload.root.NodeId;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The runnable jar started as a separate process, as an operator starts it:
 * {@code java [-D...] -jar felix-offload.jar <command> ...}.
 *
 * <p>The jar is copied once per test JVM (from {@code felix.jar}, normally
 * {@code cli/target/felix-offload.jar}) so that a rebuild of {@code cli} during a run cannot swap it
 * under the suite. Processes start with C1 only and the serial collector (start-up dominates these
 * short runs) and share a class-data archive written by the first run that ends by itself.
 *
 * <p>Where the process itself is not what a case tests, {@link #inside} runs the same command inside the
 * test JVM, with the same result and without a JVM's start. Exit on signals, heap limits, system
 * properties, crashes and the daemon's life stay with processes.
 */
final class Felix {

    /** Exit value of a process ended by SIGKILL (128 + 9), and of {@code Runtime.halt(137)}. */
    static final int KILLED = 137;

    private static final AtomicLong RUNS = new AtomicLong();
    private static Path jar;
    /** A run is writing the class-data archive, or one has written it. */
    private static boolean archiveTaken;

    private Felix() {
    }

    /** The snapshot of the runnable jar this JVM's processes run. */
    static synchronized Path jar() throws IOException {
        if (jar == null) {
            Path built = Path.of(System.getProperty("felix.jar", "../cli/target/felix-offload.jar")).toAbsolutePath();
            if (!Files.isRegularFile(built)) {
                throw new IllegalStateException("the runnable jar is built before the reliability suite: no " + built);
            }
            Path dir = Files.createDirectories(Props.work().resolve("jar"));
            Path copy = dir.resolve("felix-offload-" + ProcessHandle.current().pid() + ".jar");
            Files.copy(built, copy, StandardCopyOption.REPLACE_EXISTING);
            jar = copy;
        }
        return jar;
    }

    private static Path archive() throws IOException {
        return jar().resolveSibling(jar().getFileName() + ".jsa");
    }

    /** A finished process: exit value, output, and how long it ran. */
    record Result(int exit, String out, String err, Duration took) {
        String describe() {
            return "exit " + exit + ", stdout: " + tail(out) + ", stderr: " + tail(err);
        }

        private static String tail(String s) {
            return s.length() <= 2000 ? s : "..." + s.substring(s.length() - 2000);
        }
    }

    /** A started process and the files its output goes to. */
    static final class Running implements AutoCloseable {
        final Process process;
        final Path out;
        final Path err;
        final long startedNanos = System.nanoTime();

        Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        /** Waits for the exit, at most {@code timeout}; a process still running then is killed and this fails. */
        Result await(Duration timeout, String what) throws IOException, InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
                throw new AssertionError(what + " did not finish within " + timeout + "; stderr: "
                        + read(err));
            }
            return result();
        }

        /**
         * Its stdout once it holds {@code text}, waiting at most {@code timeout}: a daemon says some things
         * after it serves (the store's first answer comes on its own thread); what it printed so far
         * when the text never came, for the assertion to show.
         */
        String outputOnce(String text, Duration timeout) throws IOException, InterruptedException {
            long limit = System.nanoTime() + timeout.toNanos();
            String seen = read(out);
            while (!seen.contains(text) && process.isAlive() && System.nanoTime() < limit) {
                Thread.sleep(50);
                seen = read(out);
            }
            return read(out);
        }

        /** SIGKILL, and waits until it is gone. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError("pid " + process.pid() + " survived SIGKILL for 30 s");
            }
        }

        Result result() throws IOException {
            return new Result(process.exitValue(), read(out), read(err),
                    Duration.ofNanos(System.nanoTime() - startedNanos));
        }

        /** Kills the process if it still runs: for finally blocks, so no test leaves one behind. */
        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroyForcibly();
                try {
                    process.waitFor(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    /**
     * Starts {@code felix-offload args} in {@code dir} with extra JVM options and environment
     * variables (a null value unsets one). {@code normalExit} marks a run expected to end by itself:
     * the first such run writes the class-data archive the others map.
     */
    static Running start(Path dir, Map<String, String> env, List<String> jvmOptions, boolean normalExit,
                         List<String> args) throws IOException {
        return start(dir, env, List.of(), jvmOptions, normalExit, args);
    }

    /**
     * As above, the java command run through {@code wrapper} (say {@code setpriv --reuid=65534 ...}, to run
     * the jar as another user); an empty wrapper runs java itself.
     */
    static Running start(Path dir, Map<String, String> env, List<String> wrapper, List<String> jvmOptions,
                         boolean normalExit, List<String> args) throws IOException {
        List<String> command = new ArrayList<>(wrapper);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // JVM warnings (class-data sharing ones, say) go to stderr: stdout is the tool's parsed output.
        command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xshare:auto",
                "-Xlog:disable", "-Xlog:all=warning:stderr"));
        List<String> archive = archiveOptions(normalExit);
        command.addAll(archive);
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(args);
        long n = RUNS.incrementAndGet();
        Path logs = Files.createDirectories(dir.resolve("process-output"));
        Path out = logs.resolve(n + ".out");
        Path err = logs.resolve(n + ".err");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().remove("FELIX_NODE_ID");
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        // A null value removes the variable, so a test can start a process without credentials it inherited.
        env.forEach((name, value) -> {
            if (value == null) {
                pb.environment().remove(name);
            } else {
                pb.environment().put(name, value);
            }
        });
        Process process = pb.start();
        if (archive.stream().anyMatch(o -> o.startsWith("-XX:ArchiveClassesAtExit="))) {
            // Any exit of its own writes the archive (a refusal's exit code too); a signal or a halt does not.
            process.onExit().thenAccept(ended -> archiveWritten(ended.exitValue() < 128));
        }
        return new Running(process, out, err);
    }

    /** Runs {@code felix-offload args} to its end, at most {@code timeout}. */
    static Result run(Path dir, Map<String, String> env, Duration timeout, String... args)
            throws IOException, InterruptedException {
        try (Running r = start(dir, env, List.of(), true, List.of(args))) {
            return r.await(timeout, "felix-offload " + String.join(" ", args));
        }
    }

    /**
     * Runs {@code felix-offload args} inside this JVM ({@link EmbeddedRun}), for a case where the process is not
     * what is tested: the same exit code and output as {@link #run}, without a JVM's start. A daemon whose
     * configuration is taken needs a process of its own: it is started as {@link #run} starts it, from the
     * beginning. {@code env} is what {@link #start} would change of this JVM's environment; only what the
     * tool reads through its own environment can differ here, so any other change is refused (see
     * {@link #insideHonours}): such a case needs the process. Output is kept under
     * {@code dir/process-output} as a process's is.
     */
    static Result inside(Path dir, Map<String, String> env, Duration timeout, String... args)
            throws IOException, InterruptedException {
        Map<String, String> environment = new HashMap<>(System.getenv());
        environment.remove(NodeId.ENV);
        environment.remove("JAVA_TOOL_OPTIONS");
        if (!insideHonours(env)) {
            throw new IllegalArgumentException("a run inside this JVM cannot be given " + env.keySet() + ": run it as a process");
        }
        env.forEach((name, value) -> {
            if (value == null) {
                environment.remove(name);
            } else {
                environment.put(name, value);
            }
        });
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long started = System.nanoTime();
        int exit;
        try {
            exit = EmbeddedRun.run(out, err, environment, timeout, args);
        } catch (TimeoutException e) {
            throw new AssertionError(e.getMessage() + "; stderr: " + err.toString(StandardCharsets.UTF_8));
        } catch (EmbeddedRun.NeedsProcess e) {
            return run(dir, env, timeout, args);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        long n = RUNS.incrementAndGet();
        Path logs = Files.createDirectories(dir.resolve("process-output"));
        Files.write(logs.resolve(n + ".out"), out.toByteArray());
        Files.write(logs.resolve(n + ".err"), err.toByteArray());
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8), took);
    }

    /**
     * Whether {@link #inside} can give a run the environment {@code env} describes: what the tool reads through
     * its own environment (the node id, the store keys; the region is always the store URI's or the default)
     * and what is as in this JVM's.
     */
    static boolean insideHonours(Map<String, String> env) {
        boolean keys = env.get("AWS_ACCESS_KEY_ID") != null && env.get("AWS_SECRET_ACCESS_KEY") != null;
        return env.entrySet().stream().allMatch(e -> e.getKey().equals(NodeId.ENV)
                || keys && STORE_KEYS.contains(e.getKey())
                || Objects.equals(e.getValue(), System.getenv(e.getKey())));
    }

    /** The variables a run inside this JVM hands its stores (see {@link EmbeddedRun}), when both keys are given. */
    private static final java.util.Set<String> STORE_KEYS = java.util.Set.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION");

    /**
     * The class-data options for the next process: map the archive once it is whole; else, for a run expected to
     * end by itself, write it if no other run is writing it. It is written beside the archive's name and
     * published when its writer ends by itself, since the JVM writes it in place at exit: a process started meanwhile
     * (test classes run side by side) would otherwise map half a file.
     */
    private static synchronized List<String> archiveOptions(boolean normalExit) throws IOException {
        Path archive = archive();
        if (Files.isRegularFile(archive)) {
            return List.of("-XX:SharedArchiveFile=" + archive);
        }
        if (normalExit && !archiveTaken) {
            archiveTaken = true;
            return List.of("-XX:ArchiveClassesAtExit=" + archivePart());
        }
        return List.of();
    }

    private static Path archivePart() throws IOException {
        return archive().resolveSibling(archive().getFileName() + ".part");
    }

    /** The run writing the archive ended: an exit of its own publishes it, any other end lets a later run try. */
    private static synchronized void archiveWritten(boolean exitedByItself) {
        try {
            Path part = archivePart();
            if (exitedByItself && Files.isRegularFile(part)) {
                Files.move(part, archive(), StandardCopyOption.ATOMIC_MOVE);
            } else {
                Files.deleteIfExists(part);
                archiveTaken = false;
            }
        } catch (IOException e) {
            archiveTaken = false; // no archive: later runs start without one, or a later run writes it
        }
    }
}
