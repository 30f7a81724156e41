package dev.felix.offload.cli;

import dev.felix.offload.daemon.Daemon;
import dev.felix.offload.daemon.DaemonConfig;

import ch.qos.logback.classic.Level;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.store.ObjectStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code felix-offload run --config FILE}: the daemon. Its HTTP endpoint is up before the store is
 * asked anything, so {@code /health} says why it is not ready while the store keeps it waiting. It
 * runs until the process is told to stop (SIGTERM, SIGINT), at any moment, start-up included: then
 * it stops as {@link Daemon#stop} describes, within {@code shutdown.grace}, and exits 0. A
 * configuration that cannot be used exits 2 at start-up, naming the key.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run the daemon: offload, retention and scrub passes on cron schedules, and an HTTP "
                + "endpoint with /metrics (Prometheus), /health, /shards and /read.",
                "Every configuration key is described in docs/configuration.md. Store credentials come from the "
                        + "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the AWS SDK's default chain."})
final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The configuration file (.yaml, .yml or .properties).")
    Path config;

    @Option(names = "--probe-store", description = "Probe the store's server at start (what it does with checksums "
            + "and conditional puts), even where findings of an earlier probe are kept in the data root.")
    boolean probeStore;

    @Option(names = "--take-over-node-id", description = "At start, replace another data root's claim on this node "
            + "id in the store (its volume moved here); only once that root no longer runs (see docs/reliability.md).")
    boolean takeOver;

    @Override
    public Integer call() throws IOException, InterruptedException {
        DaemonConfig c = ConfigOption.load(config);
        FelixOffload.beforeJvmWideChange(spec); // the log levels, the shutdown hook, an exit on refusal
        setLogLevel(c.logLevel);
        warnIdleOverrides(c);
        // Not prepared ahead: the client is built once the HTTP endpoint answers (Daemon.connect), not
        // beside the endpoint's own start-up on the same cores.
        ObjectStore store = Stores.open(c.store, c.file + ": store", c.dataDir,
                probeStore ? Stores.Use.WRITER_PROBING : Stores.Use.WRITER);
        Daemon daemon = new Daemon(c, store, FelixOffload.environment(spec), PassClock.system(c.zone)).takeOverNodeId(takeOver)
                // A pass found another copy of this root (or another root) writing as this node: no pass can
                // do anything from now on, so the daemon ends, exit 2 (from a thread of its own: the pass's
                // thread is one the stop waits for).
                .onRefused(message -> new Thread(() -> System.exit(FelixOffload.EXIT_USAGE), "refused").start());

        // Registered before anything starts, so that a signal at any moment, while the store is
        // being waited for too, stops the daemon within shutdown.grace and exits 0.
        AtomicBoolean mainExits = new AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (mainExits.get()) {
                return; // start-up failed: main stopped the daemon and exits with its own code
            }
            daemon.stop(c.shutdownGrace);
            daemon.refused().ifPresent(message -> System.err.println("felix-offload: " + message));
            System.out.flush();
            System.err.flush();
            // A signal's exit status would be 128 + its number; a stop is a success, unless a pass found
            // that this root may no longer write (another copy of it holds the node's lease): a usage error.
            Runtime.getRuntime().halt(daemon.refused().isPresent() ? FelixOffload.EXIT_USAGE : FelixOffload.EXIT_OK);
        }, "shutdown"));
        try {
            daemon.open();
            if (!daemon.stopping()) {
                PrintWriter out = spec.commandLine().getOut();
                out.printf("felix-offload run: serving %s for data root %s and %s%n", daemon.httpUrl(), c.dataDir,
                        store.describe());
                daemon.statusUrl().ifPresent(url -> out.printf("felix-offload run: status (/metrics, /health) also on %s%n",
                        url));
                out.flush();
            }
            daemon.connect();
        } catch (IOException | RuntimeException e) {
            if (daemon.stopping()) {
                new CountDownLatch(1).await(); // a signal cut the start-up short: its hook ends the process
            }
            mainExits.set(true);
            daemon.stop(java.time.Duration.ofSeconds(5)); // no pass has started: this only closes what open() opened
            throw e;
        }
        new CountDownLatch(1).await(); // runs until a signal's hook ends the process
        return FelixOffload.EXIT_OK;
    }

    /**
     * Retention overrides that reach no shard take effect nowhere: said at start-up (and by every
     * retention pass), not refused, since the stream they name may yet be created.
     */
    private static void warnIdleOverrides(DaemonConfig c) {
        if (!java.nio.file.Files.isDirectory(c.dataDir)) {
            return; // refused by the daemon's start, naming data-dir
        }
        dev.felix.offload.log.DataRoot root = new dev.felix.offload.log.DataRoot(c.dataDir);
        // asked for here, not held in a static field: building the command tree (--version, help) sets up no logging
        Logger log = LoggerFactory.getLogger(RunCommand.class);
        try {
            for (String idle : dev.felix.offload.retention.OverrideReach.unmatched(c.rules, root)) {
                log.warn("{}: {}", c.file, dev.felix.offload.retention.OverrideReach.describe(idle, root));
            }
        } catch (IOException e) {
            log.warn("{}: the data root could not be listed to check the retention overrides: {}", c.file,
                    dev.felix.offload.log.IoProblem.describe(e));
        }
    }

    private static void setLogLevel(String level) {
        org.slf4j.Logger rootLogger = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        if (rootLogger instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(Level.toLevel(level, Level.INFO));
            // The AWS SDK and HTTP client are chatty at info; their warnings still show.
            for (String noisy : new String[] {"software.amazon", "org.apache.http", "io.netty", "okhttp3", "io.minio"}) {
                ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(noisy)).setLevel(
                        level.equals("debug") || level.equals("trace") ? Level.INFO : Level.WARN);
            }
        }
    }
}
