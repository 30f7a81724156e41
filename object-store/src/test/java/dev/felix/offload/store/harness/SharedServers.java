package dev.felix.offload.store.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The S3 servers of one Maven build, each started once and shared by every test JVM of the build
 * (surefire and failsafe, of every module), where today's per-JVM servers would start some fifteen
 * times in a {@code mvn verify}.
 *
 * <p>The build is the Maven process the test JVM descends from, and its servers are registered in
 * {@code <felix.test.servers.dir>/build-<maven pid>-<maven start>/}: per server a lock file (a
 * {@link FileLock}, so two JVMs never start the same server), the processes it is made of
 * ({@code <name>.pids}, written as each is spawned) and, once it answers, its endpoint and keys
 * ({@code <name>.properties}). A later JVM reuses a registered server when all its processes are
 * alive and it answers; otherwise it stops whatever is left and starts it again.
 *
 * <p>No server outlives the build: the first JVM starts a {@link ServerKeeper}, which waits for the
 * Maven process to end (however it ends) and for the test JVMs that used the servers, then stops
 * every recorded process. A keeper that was itself killed leaves its build's directory behind;
 * the next build's first use stops what it recorded and deletes it.
 *
 * <p>Sharing only happens when the build asks for it (the parent pom sets
 * {@code felix.test.servers.dir}) and a Maven process is found among the JVM's ancestors; anywhere
 * else (an IDE, the benchmarks, a JVM a test starts) each JVM starts its own servers as before.
 */
final class SharedServers {
    static final String DIR_PROPERTY = "felix.test.servers.dir";
    /** The main class of every Maven 3 and 4 launch ({@code mvn}, {@code mvnw}). */
    private static final String MAVEN_MAIN = "org.codehaus.plexus.classworlds.launcher.Launcher";

    static final Duration STOP_GRACE = Duration.ofSeconds(15);
    private static final Map<Path, Object> MONITORS = new ConcurrentHashMap<>();
    private static Optional<SharedServers> thisBuild;

    private final Path root;
    private final ProcessHandle owner;
    private final long ownerStart;
    private final Path build;
    private boolean kept;

    /** How a server is started in {@code dir}, each of its processes added to {@code processes} as it is spawned. */
    interface Launch {
        S3Server start(Path dir, RecordedProcesses processes) throws IOException, InterruptedException;
    }

    SharedServers(Path root, ProcessHandle owner) {
        this.root = root.toAbsolutePath();
        this.owner = owner;
        this.ownerStart = RecordedProcesses.startMillis(owner)
                .orElseThrow(() -> new IllegalStateException("no start time for the build's process " + owner.pid()));
        this.build = this.root.resolve("build-" + owner.pid() + "-" + ownerStart);
    }

    /** The shared servers of the Maven build this JVM runs in, or empty where each JVM keeps its own. */
    static synchronized Optional<SharedServers> ofThisBuild() {
        if (thisBuild == null) {
            String dir = System.getProperty(DIR_PROPERTY);
            thisBuild = dir == null || dir.isBlank() ? Optional.empty()
                    : mavenAncestor().map(maven -> new SharedServers(Path.of(dir), maven));
        }
        return thisBuild;
    }

    /** The nearest ancestor that is Maven (surefire's fork is its child, or a shell's child in between). */
    static Optional<ProcessHandle> mavenAncestor() {
        Optional<ProcessHandle> p = ProcessHandle.current().parent();
        for (int depth = 0; p.isPresent() && depth < 8; depth++, p = p.get().parent()) {
            if (commandLine(p.get()).contains(MAVEN_MAIN)) {
                return p;
            }
        }
        return Optional.empty();
    }

    /** A process's whole command line from /proc (ProcessHandle.Info cuts it); empty where unreadable. */
    static String commandLine(ProcessHandle h) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(h.pid()), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    Path build() {
        return build;
    }

    /**
     * The server registered as {@code name} in this build if it is up and {@code answers}; otherwise
     * one started now by {@code launch}, after stopping whatever a JVM killed mid-start left.
     */
    S3Server obtain(String name, Launch launch, Predicate<URI> answers) throws IOException, InterruptedException {
        keep();
        return locked(build.resolve(name + ".lock"), () -> {
            Path recordFile = build.resolve(name + ".properties");
            RecordedProcesses processes = new RecordedProcesses(build.resolve(name + ".pids"));
            Optional<S3Server> registered = read(recordFile);
            if (registered.isPresent()) {
                if (processes.allAlive() && answers.test(registered.get().endpoint())) {
                    note("reused " + registered.get());
                    return registered.get();
                }
                note("found " + registered.get() + " registered but not answering; starting it again");
            }
            int left = processes.stopAll(STOP_GRACE);
            if (left > 0) {
                note("stopped " + left + " process(es) of " + name + " a killed JVM left");
            }
            Files.deleteIfExists(recordFile);
            Files.deleteIfExists(processes.file());
            long started = System.nanoTime();
            S3Server server;
            try {
                server = launch.start(build, processes);
            } catch (IOException | InterruptedException | RuntimeException e) {
                processes.stopAll(STOP_GRACE);
                throw e;
            }
            write(recordFile, server);
            note("started " + server + " in " + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms");
            return server;
        });
    }

    /**
     * Once per JVM: notes this JVM among the build's users, clears what dead builds left, and makes
     * sure a keeper watches this build.
     */
    private synchronized void keep() throws IOException, InterruptedException {
        if (kept) {
            return;
        }
        Files.createDirectories(build);
        locked(root.resolve("registry.lock"), () -> {
            new RecordedProcesses(build.resolve("users")).add(ProcessHandle.current());
            clearDeadBuilds();
            Path keeperFile = build.resolve("keeper");
            if (new RecordedProcesses(keeperFile).alive().isEmpty()) {
                Files.deleteIfExists(keeperFile);
                new RecordedProcesses(keeperFile).add(ServerKeeper.launch(owner.pid(), ownerStart, build));
            }
            return null;
        });
        kept = true;
    }

    /** Stops what the builds whose Maven process is gone still run (their keeper was killed), and deletes their directories. */
    private void clearDeadBuilds() throws IOException {
        List<Path> dead = new ArrayList<>();
        try (DirectoryStream<Path> builds = Files.newDirectoryStream(root, "build-*")) {
            for (Path b : builds) {
                if (!b.equals(build) && !alive(b.getFileName().toString())) {
                    dead.add(b);
                }
            }
        }
        for (Path b : dead) {
            List<ProcessHandle> left = ServerKeeper.serverProcesses(b);
            if (!left.isEmpty()) {
                note("stopping " + left.size() + " server process(es) an ended build left in " + b);
                RecordedProcesses.stop(left, STOP_GRACE);
            }
            deleteQuietly(b);
        }
    }

    /** Whether the Maven process a {@code build-<pid>-<start>} directory names is still running. */
    private static boolean alive(String buildDirName) {
        String[] parts = buildDirName.split("-");
        if (parts.length != 3) {
            return false;
        }
        try {
            long pid = Long.parseLong(parts[1]);
            long start = Long.parseLong(parts[2]);
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .flatMap(RecordedProcesses::startMillis).map(s -> s == start).orElse(false);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private interface Locked<T> {
        T run() throws IOException, InterruptedException;
    }

    /** Runs {@code body} holding {@code lockFile}'s lock, against other JVMs and other threads of this one. */
    private static <T> T locked(Path lockFile, Locked<T> body) throws IOException, InterruptedException {
        Files.createDirectories(lockFile.getParent());
        synchronized (MONITORS.computeIfAbsent(lockFile, k -> new Object())) {
            try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock lock = channel.lock()) {
                return body.run();
            }
        }
    }

    private static Optional<S3Server> read(Path recordFile) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(recordFile)) {
            p.load(in);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        return Optional.of(new S3Server(p.getProperty("name"), URI.create(p.getProperty("endpoint")),
                p.getProperty("access-key"), p.getProperty("secret-key"), p.getProperty("region")));
    }

    private static void write(Path recordFile, S3Server server) throws IOException {
        Properties p = new Properties();
        p.setProperty("name", server.name());
        p.setProperty("endpoint", server.endpoint().toString());
        p.setProperty("access-key", server.credentials().accessKey().orElseThrow());
        p.setProperty("secret-key", server.credentials().secretKey().orElseThrow());
        p.setProperty("region", server.region());
        Path tmp = recordFile.resolveSibling(recordFile.getFileName() + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp)) {
            p.store(out, "an S3 server of this build, shared by its test JVMs");
        }
        Files.move(tmp, recordFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * One line in the build's {@code servers.log} (how many starts a build made is counted there)
     * and on this JVM's standard error, naming the module.
     */
    private void note(String what) {
        String module = Path.of(System.getProperty("user.dir")).getFileName().toString();
        String line = Instant.now() + " " + module + " (pid " + ProcessHandle.current().pid() + "): " + what;
        System.err.println("[SharedServers] " + line);
        try {
            Files.writeString(build.resolve("servers.log"), line + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("[SharedServers] could not delete " + dir + " (an ended build's): " + e);
        }
    }
}
