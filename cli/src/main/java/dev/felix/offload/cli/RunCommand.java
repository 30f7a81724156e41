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

/**
 * {@code felix-offload run --config FILE}: the daemon. It runs until the process is told to stop
 * (SIGTERM, SIGINT): then it stops as {@link Daemon#stop} describes and exits 0, or 1 when a pass
 * did not end within twice {@code shutdown.grace}. A configuration that cannot be used exits 2 at
 * start-up, naming the key.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run the daemon: offload, retention and scrub passes on cron schedules, and an HTTP "
                + "endpoint with /metrics (Prometheus), /health, /shards and /read.",
                "Every configuration key is described in docs/configuration.md. Store credentials come from the "
                        + "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the AWS SDK's default chain."})
final class RunCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    @Spec
    CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The configuration file (.yaml, .yml or .properties).")
    Path config;

    @Option(names = "--take-over-node-id", description = "At start, replace another data root's claim on this node "
            + "id in the store (its volume moved here); only once that root no longer runs (see docs/reliability.md).")
    boolean takeOver;

    @Override
    public Integer call() throws IOException, InterruptedException {
        DaemonConfig c = ConfigOption.load(config);
        setLogLevel(c.logLevel);
        ObjectStore store = Stores.open(c.store, c.file + ": store");
        Daemon daemon = new Daemon(c, store, System.getenv(), PassClock.system(c.zone)).takeOverNodeId(takeOver)
                // A pass found another copy of this root (or another root) writing as this node: no pass can
                // do anything from now on, so the daemon ends, exit 2 (from a thread of its own: the pass's
                // thread is one the stop waits for).
                .onRefused(message -> new Thread(() -> System.exit(FelixOffload.EXIT_USAGE), "refused").start());
        try {
            daemon.start();
        } catch (IOException | RuntimeException e) {
            daemon.stop(java.time.Duration.ZERO);
            throw e;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.printf("felix-offload run: serving http://%s:%d/ for data root %s and %s%n", c.httpBind, daemon.httpPort(),
                c.dataDir, store.describe());
        out.flush();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boolean ended = daemon.stop(c.shutdownGrace);
            stopped.countDown();
            daemon.refused().ifPresent(message -> System.err.println("felix-offload: " + message));
            System.out.flush();
            System.err.flush();
            // A signal's exit status would be 128 + its number; a clean stop is a success.
            Runtime.getRuntime().halt(daemon.refused().isPresent() ? FelixOffload.EXIT_USAGE
                    : ended ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT);
        }, "shutdown"));
        stopped.await();
        return FelixOffload.EXIT_OK;
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
