package dev.felix.offload.store.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A one-node Ceph cluster with the RADOS Gateway in front: a production S3 implementation, run as
 * plain processes from Debian's packages ({@code radosgw ceph-mon ceph-osd ceph-common}).
 *
 * <p>One monitor, one OSD on the memstore backend (the data lives in the OSD's memory, so start-up
 * takes seconds and nothing large is written to disk), cephx off, and every file the daemons write
 * under {@code target/rgw/} of the module (property {@code felix.rgw.dir}). The gateway listens on
 * a free 127.0.0.1 port and knows one user, with keys made up for this run.
 *
 * <p>In a Maven build that sets {@code felix.test.servers.dir} (the parent pom does) the cluster is
 * the build's: started by the first test JVM that needs it, in {@code rgw/} of the build's
 * directory there, shared by all the others and stopped when the build ends ({@link SharedServers}).
 * Elsewhere it starts on first use, once per JVM, and a shutdown hook stops every daemon it started,
 * by pid. A JVM killed outright cannot run that hook; the pids are written to {@code pids} in the
 * cluster's directory as each daemon starts, and the next start stops whatever a killed run left
 * there (and any process still naming this directory's configuration) before it begins.
 *
 * <p>Where the packages are missing, {@link #missingPackages()} says so and {@link RgwAvailable}
 * skips the test class with one line on how to install them, except under {@code CI=true}, where
 * a missing RGW fails the run.
 */
public final class CephRgw {
    /** The Debian packages the cluster needs, as {@code .ci/run} installs them. */
    public static final String PACKAGES = "radosgw ceph-mon ceph-osd ceph-common";

    static final List<String> COMMANDS =
            List.of("ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "ceph", "monmaptool", "ceph-authtool");
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static S3Server server;
    private static CephRgw running;
    private static RuntimeException startFailure;

    private final Path dir;
    private final Path conf;
    private final Consumer<ProcessHandle> spawned;
    private final List<Process> daemons = new ArrayList<>();

    private CephRgw(Path dir, Consumer<ProcessHandle> spawned) {
        this.dir = dir;
        this.conf = dir.resolve("ceph.conf");
        this.spawned = spawned;
    }

    /** The running gateway, started on first call; it stays up until the build (or this JVM) ends. */
    public static synchronized S3Server server() {
        if (server != null) {
            return server;
        }
        if (startFailure != null) {
            throw startFailure;
        }
        Optional<String> missing = missingPackages();
        if (missing.isPresent()) {
            throw new IllegalStateException(missing.get());
        }
        try {
            Optional<SharedServers> shared = SharedServers.ofThisBuild();
            if (shared.isPresent()) {
                server = shared.get().obtain("rgw", (build, processes) -> {
                    CephRgw cluster = new CephRgw(build.resolve("rgw"), processes::add);
                    try {
                        return cluster.start();
                    } catch (IOException | InterruptedException | RuntimeException e) {
                        cluster.stop();
                        throw e;
                    }
                }, CephRgw::answers);
                return server;
            }
            Path dir = Path.of(System.getProperty("felix.rgw.dir", "target/rgw")).toAbsolutePath();
            CephRgw cluster = new CephRgw(dir, p -> {});
            Runtime.getRuntime().addShutdownHook(new Thread(cluster::stop, "stop-ceph-rgw"));
            running = cluster;
            server = cluster.start();
            return server;
        } catch (IOException | RuntimeException e) {
            shutdown();
            startFailure = new IllegalStateException("Ceph RGW did not start: " + e.getMessage(), e);
            throw startFailure;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shutdown();
            throw new IllegalStateException("interrupted while starting Ceph RGW", e);
        }
    }

    /**
     * Stops this JVM's cluster now rather than at JVM exit (the benchmarks run one server at a
     * time); the next {@link #server()} starts a fresh one. A build's shared cluster is left to the
     * build.
     */
    public static synchronized void shutdown() {
        if (running != null) {
            running.stop();
            running = null;
        }
        server = null;
    }

    /**
     * Starts the cluster in {@code felix.rgw.dir}, prints {@code ready <endpoint>} and waits until it
     * is killed: for the test that kills a JVM holding a cluster and checks the next start cleans up.
     */
    public static void main(String[] args) throws InterruptedException {
        S3Server s = server();
        System.out.println("ready " + s.endpoint());
        System.out.flush();
        new java.util.concurrent.CountDownLatch(1).await(); // until killed: the test's signal is the point
    }

    /** The pids of the daemons started in {@code dir} (the cluster's record of them). */
    static List<Long> recordedPids(Path dir) throws IOException {
        List<Long> pids = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("pids"), StandardCharsets.US_ASCII)) {
            if (!line.isBlank()) {
                pids.add(Long.parseLong(line.trim()));
            }
        }
        return pids;
    }

    /** Why the cluster cannot run here (a command missing from the PATH), or empty when it can. */
    public static Optional<String> missingPackages() {
        return missingPackages(System.getenv("PATH"));
    }

    /** {@link #missingPackages()} for a given search path. */
    static Optional<String> missingPackages(String path) {
        List<String> absent = new ArrayList<>();
        for (String command : COMMANDS) {
            if (onPath(command, path).isEmpty()) {
                absent.add(command);
            }
        }
        if (absent.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("Ceph RGW is not installed (" + String.join(", ", absent) + " not on the PATH); install it with "
                + "`apt-get install --no-install-recommends " + PACKAGES + "` (as .ci/run does)");
    }

    private static Optional<Path> onPath(String command, String path) {
        if (path == null) {
            return Optional.empty();
        }
        for (String entry : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(entry, command);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private S3Server start() throws IOException, InterruptedException {
        stopLeftovers();
        freshDirectory(dir);
        for (String sub : List.of("mon", "osd", "log", "run", "crash")) {
            Files.createDirectories(dir.resolve(sub));
        }
        String fsid = UUID.randomUUID().toString();
        int monPort = ServerProcess.freePort();
        int rgwPort = ServerProcess.freePort();
        Files.writeString(conf, configuration(fsid, monPort, rgwPort), StandardCharsets.UTF_8);

        Path keyring = dir.resolve("keyring");
        tool("ceph-authtool", "--create-keyring", keyring.toString(), "--gen-key", "-n", "mon.", "--cap", "mon", "allow *");
        tool("ceph-authtool", keyring.toString(), "--gen-key", "-n", "client.admin",
                "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *");
        Path monmap = dir.resolve("monmap");
        tool("monmaptool", "--create", "--fsid", fsid, "--addv", "a", "[v2:127.0.0.1:" + monPort + "]", monmap.toString());
        tool("ceph-mon", "-c", conf.toString(), "--mkfs", "-i", "a", "--monmap", monmap.toString(), "--keyring", keyring.toString());
        Process mon = daemon("mon", "ceph-mon", "-c", conf.toString(), "-f", "-i", "a");
        waitFor("the monitor to answer", mon, () -> quietly("ceph", "--connect-timeout", "3", "mon", "stat"));

        String osdUuid = UUID.randomUUID().toString();
        String osdId = tool("ceph", "osd", "new", osdUuid).trim();
        if (!osdId.matches("\\d+")) {
            throw new IOException("`ceph osd new` answered '" + osdId + "', not an OSD id");
        }
        Files.createDirectories(dir.resolve("osd").resolve("ceph-" + osdId));
        tool("ceph-osd", "-c", conf.toString(), "--mkfs", "-i", osdId, "--osd-uuid", osdUuid);
        Process osd = daemon("osd", "ceph-osd", "-c", conf.toString(), "-f", "-i", osdId);
        waitFor("the OSD to be up", osd, () -> {
            Optional<String> stat = quietlyOutput("ceph", "osd", "stat", "-f", "json");
            return stat.isPresent() && stat.get().replace(" ", "").contains("\"num_up_osds\":1");
        });

        Process rgw = daemon("rgw", "radosgw", "-c", conf.toString(), "-f", "-n", "client.rgw.a");
        URI endpoint = URI.create("http://127.0.0.1:" + rgwPort);
        waitFor("the gateway to answer HTTP", rgw, () -> answers(endpoint));

        SecureRandom random = new SecureRandom();
        String access = "FELIX" + HexFormat.of().withUpperCase().formatHex(random.generateSeed(7));
        String secret = HexFormat.of().formatHex(random.generateSeed(20));
        tool("radosgw-admin", "user", "create", "--uid", "felix-ci", "--display-name", "felix ci",
                "--access-key", access, "--secret-key", secret);
        S3Server s = new S3Server("RGW", endpoint, access, secret, "us-east-1");
        // the user is known to the gateway at once, but give a signed request a few tries anyway
        String bucket = "felix-ready-" + Long.toHexString(System.nanoTime());
        waitFor("a signed request to succeed", rgw, () -> {
            try {
                s.admin().createBucket(b -> b.bucket(bucket));
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        });
        return s;
    }

    private String configuration(String fsid, int monPort, int rgwPort) {
        String d = dir.toString();
        return String.join("\n",
                "[global]",
                "fsid = " + fsid,
                "mon host = [v2:127.0.0.1:" + monPort + "]",
                "public addr = 127.0.0.1",
                "ms bind msgr1 = false",
                "auth cluster required = none",
                "auth service required = none",
                "auth client required = none",
                "run dir = " + d + "/run",
                // no admin sockets: nothing here uses them, and a deep checkout would overflow a socket path
                "admin socket =",
                "pid file = " + d + "/run/$cluster-$name.pid",
                "log file = " + d + "/log/$cluster-$name.log",
                "crash dir = " + d + "/crash",
                "osd pool default size = 1",
                "osd pool default min size = 1",
                "osd pool default pg num = 8",
                "osd pool default pgp num = 8",
                "osd pool default pg autoscale mode = off",
                "osd crush chooseleaf type = 0",
                "mon allow pool size one = true",
                "mon max pg per osd = 1000",
                "mon warn on pool no redundancy = false",
                // the default (1 s) makes each of the gateway's pool creations wait; start-up triples
                "paxos propose interval = 0.2",
                quietLogs(System.getProperty("felix.rgw.debug", "0/0")),
                "[mon]",
                "mon data = " + d + "/mon/$cluster-$id",
                "[osd]",
                "osd data = " + d + "/osd/$cluster-$id",
                "osd objectstore = memstore",
                // a cap, not a reservation: the OSD's memory grows with what is stored. The benchmark's
                // runs store a GiB each and delete it after, and deleted data is freed only by the
                // gateway's garbage collection (below), so 4 GiB filled up within a few runs.
                "memstore device bytes = " + memstoreBytes(),
                "[client.rgw.a]",
                gatewayLogs(System.getProperty("felix.rgw.debug", "0/0")),
                // tcp_nodelay: without it beast answered small ranged GETs (a segment header, a run of
                // index entries) some 40 ms late, held back by Nagle's algorithm (47 ms against 6.8 ms)
                "rgw frontends = beast endpoint=127.0.0.1:" + rgwPort + " tcp_nodelay=1",
                // deleted objects (and overwritten or aborted parts) wait two hours for the collector by
                // default, for readers still on the old tail; nothing here reads that long, and a run
                // that deletes what it wrote should get the memory back while the cluster lives
                "rgw gc obj min wait = 5",
                "rgw gc processor period = 10",
                // radosgw asks for cephx and a secure monitor session on its own; without these two it
                // cannot fetch its configuration from a cluster with authentication off
                "auth client required = none",
                "ms mon client mode = crc secure",
                "");
    }

    /**
     * Ceph's subsystems whose default debug level (mostly {@code 1/5}) makes a daemon format log
     * entries on every request: the first number is what goes to the log file, the second what is
     * kept in memory for a crash dump, and both cost CPU whether or not anything reads them.
     */
    private static final List<String> DEBUG_SUBSYSTEMS = List.of("rgw", "rgw_sync", "ms", "osd", "mon", "paxos",
            "objecter", "rados", "monc", "auth", "memstore", "finisher", "throttle", "optracker", "heartbeatmap",
            "perfcounter", "context", "timer", "buffer", "objclass", "crush", "asok", "mgrc");

    /**
     * Every daemon's and command's debug levels, {@code 0/0} (errors are logged at level 0 and still
     * reach the logs), unless {@code felix.rgw.debug} is {@code default}: Ceph's own levels, with which
     * the benchmarks measure the gateway as deployed. Measured with 5,080 puts of 64 KiB through the
     * launcher: the cluster's CPU 22.5-23.9 s at Ceph's defaults, 18.0-18.5 s at 0/0, the run 15%
     * shorter; the gateway's log had been 12 MB.
     */
    static String quietLogs(String setting) {
        if (debugSetting(setting).equals("default")) {
            return "";
        }
        return DEBUG_SUBSYSTEMS.stream().map(s -> "debug " + s + " = 0/0").collect(Collectors.joining("\n"));
    }

    /**
     * The gateway's own level, where {@code felix.rgw.debug} names one: {@code 1/5} logs a line per
     * request. Only the gateway's section takes it; at {@code [global]} the {@code ceph} commands the
     * start runs would print their own log lines into the answers it reads.
     */
    static String gatewayLogs(String setting) {
        String level = debugSetting(setting);
        return level.equals("default") || level.equals("0/0") ? "" : "debug rgw = " + level;
    }

    private static String debugSetting(String setting) {
        String level = setting.trim();
        if (!level.equals("default") && !level.matches("\\d{1,2}(/\\d{1,2})?")) {
            throw new IllegalArgumentException("felix.rgw.debug is a Ceph debug level such as 0/0 or 1/5, or default: " + level);
        }
        return level;
    }

    /** The memstore's cap: {@code felix.rgw.memstore.bytes}, 4 GiB unless set (the benchmark sets more). */
    static long memstoreBytes() {
        String v = System.getProperty("felix.rgw.memstore.bytes");
        if (v == null || v.isBlank()) {
            return 4L << 30;
        }
        try {
            long bytes = Long.parseLong(v.trim());
            if (bytes < (1L << 30)) {
                throw new IllegalArgumentException("felix.rgw.memstore.bytes must be at least 1 GiB (1073741824): " + v);
            }
            return bytes;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("felix.rgw.memstore.bytes is a number of bytes: " + v, e);
        }
    }

    private Process daemon(String name, String... command) throws IOException {
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("log").resolve(name + ".out").toFile())
                .start();
        synchronized (daemons) {
            daemons.add(p);
        }
        spawned.accept(p.toHandle());
        Files.writeString(dir.resolve("pids"), p.pid() + "\n", StandardCharsets.US_ASCII,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        return p;
    }

    /** Runs a ceph tool to its end within {@link #TOOL_TIMEOUT}; its output, or an IOException with it. */
    private String tool(String... command) throws IOException, InterruptedException {
        Result r = run(command);
        if (r.exit != 0) {
            throw new IOException("`" + String.join(" ", command) + "` exited with " + r.exit + ":\n" + r.output);
        }
        return r.output;
    }

    private boolean quietly(String... command) {
        return quietlyOutput(command).isPresent();
    }

    private Optional<String> quietlyOutput(String... command) {
        try {
            Result r = run(command);
            return r.exit == 0 ? Optional.of(r.output) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private record Result(int exit, String output) {}

    private Result run(String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir.resolve("run"), "tool", ".out");
        try {
            ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile());
            pb.environment().put("CEPH_CONF", conf.toString());
            Process p = pb.start();
            if (!p.waitFor(TOOL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                return new Result(-1, "(timed out after " + TOOL_TIMEOUT + ")\n" + Files.readString(out));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private void waitFor(String what, Process daemon, java.util.function.BooleanSupplier ready)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
        while (true) {
            if (!daemon.isAlive()) {
                throw new IOException("a Ceph daemon exited with " + daemon.exitValue() + " while waiting for " + what
                        + "; logs under " + dir.resolve("log") + ":\n" + logTails());
            }
            if (ready.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("timed out after " + STEP_TIMEOUT + " waiting for " + what + "; logs under "
                        + dir.resolve("log") + ":\n" + logTails());
            }
            Thread.sleep(200);
        }
    }

    private String logTails() {
        StringBuilder sb = new StringBuilder();
        try (Stream<Path> logs = Files.list(dir.resolve("log"))) {
            for (Path log : (Iterable<Path>) logs.sorted()::iterator) {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                sb.append("--- ").append(log.getFileName()).append('\n');
                lines.subList(Math.max(0, lines.size() - 15), lines.size()).forEach(l -> sb.append(l).append('\n'));
            }
        } catch (IOException | UncheckedIOException e) {
            sb.append("(logs unreadable: ").append(e).append(")");
        }
        return sb.toString();
    }

    private static boolean answers(URI endpoint) {
        try {
            HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(2)).GET().build(),
                    HttpResponse.BodyHandlers.discarding());
            return r.statusCode() > 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Stops every daemon this JVM started: TERM to all at once, KILL to any still there after 15 s. */
    private void stop() {
        List<Process> all;
        synchronized (daemons) {
            all = new ArrayList<>(daemons);
            daemons.clear();
        }
        all.forEach(Process::destroy);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (Process p : all) {
            try {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stops what a run killed before its shutdown hook left: the pids it recorded, and any process
     * whose command line names this directory's configuration. A recorded pid the system has since
     * given to an unrelated process is left alone, since it does not name the configuration.
     */
    private void stopLeftovers() throws IOException, InterruptedException {
        String marker = conf.toString();
        List<ProcessHandle> stale = new ArrayList<>();
        Path pids = dir.resolve("pids");
        if (Files.isRegularFile(pids)) {
            for (String line : Files.readAllLines(pids, StandardCharsets.US_ASCII)) {
                try {
                    ProcessHandle.of(Long.parseLong(line.trim())).filter(h -> names(h, marker)).ifPresent(stale::add);
                } catch (NumberFormatException e) {
                    // a line torn by a kill mid-write names nothing
                }
            }
        }
        ProcessHandle.allProcesses().filter(h -> names(h, marker) && !stale.contains(h)).forEach(stale::add);
        if (stale.isEmpty()) {
            return;
        }
        System.err.println("[CephRgw] stopping " + stale.size() + " daemon(s) a killed run left under " + dir);
        stale.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (ProcessHandle h : stale) {
            while (h.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            if (h.isAlive()) {
                h.destroyForcibly();
            }
        }
    }

    /** Whether a process's command line holds {@code marker}. */
    private static boolean names(ProcessHandle h, String marker) {
        return SharedServers.commandLine(h).contains(marker);
    }

    private static void freshDirectory(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(dir);
    }
}
