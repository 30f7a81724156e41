package dev.felix.offload.cli;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import dev.felix.offload.manifest.ManifestCache;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.store.remote.Credentials;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

import java.io.BufferedWriter;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One command run inside the calling program's JVM instead of a process of its own: what the test
 * suites use where the process itself is not what a test looks at, since starting a JVM costs more than
 * most commands take. What an operator would see of the process goes to the streams given instead:
 * picocli's output and errors, binary output ({@code read --format raw}), and the log lines of the
 * threads the run starts, in the tool's own line format (threads of other runs, and the rest of the
 * JVM, log where they did). Several runs may go on at once.
 *
 * <p>What a process would take from its JVM is not taken from this one: the environment is the one
 * given (the node id; store keys in {@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY}, which the
 * AWS SDK would read from the process's environment, are handed to the stores the run opens), and the
 * process-wide cache of decoded manifests starts empty, as in a new process. A failure
 * that escapes the command is reported as the process's main thread would report it (one logged line,
 * exit 1); a heap that runs out in another of its threads writes the line a process writes before it
 * halts, and the run answers exit 4 when its main thread ends. What cannot be done without a process of
 * its own is not done: the daemon ({@code run}) is taken as far as its configuration (a file it refuses
 * ends here as in its process, exit 2), and a configuration it takes ends the run with {@link NeedsProcess}
 * before anything else happens, since the daemon hooks the JVM's shutdown, may exit it and sets its log
 * levels. A JVM given {@value StepHook#HALT_PROPERTY} would halt itself, and is refused. Such runs, and
 * everything a test asks of the JVM itself (exit on a signal, a heap limit, system properties), need the
 * runnable jar. So do two runs over one data root at the same time: its lock is held per process, and
 * two runs in one JVM would not meet it as two processes do.
 */
public final class EmbeddedRun {

    /** The run a thread belongs to: set on a run's main thread, inherited by every thread it starts. */
    private static final InheritableThreadLocal<Sink> RUN = new InheritableThreadLocal<>();
    private static boolean installed;

    private EmbeddedRun() {
    }

    /**
     * The run reached what needs a process of its own (the daemon's start); nothing beyond its
     * configuration was done, so the same command can be run as a process instead.
     */
    public static final class NeedsProcess extends Exception {
        private static final long serialVersionUID = 1L;

        NeedsProcess(String message) {
            super(message);
        }
    }

    /** Where one run's errors and log lines go, while it runs. */
    private static final class Sink {
        final PrintWriter err;
        /** The store keys of the run's environment, or null where the SDK's own chain finds them. */
        final Credentials storeKeys;
        volatile boolean open = true;
        /** Set when the run stopped before a change to the whole JVM. */
        volatile boolean needsProcess;
        /** Set when a thread of the run ran out of heap: the exit its process would have halted with. */
        volatile int halted = -1;

        Sink(PrintWriter err, Credentials storeKeys) {
            this.err = err;
            this.storeKeys = storeKeys;
        }
    }

    /**
     * Runs {@code felix-offload args} and answers its exit code.
     *
     * @param out         what the process would write to its standard output
     * @param err         what it would write to its standard error, its log lines included
     * @param environment the environment its commands read (the node id, the store keys); whatever else the
     *                    AWS SDK reads of an environment (an endpoint, a profile) it reads from this JVM's
     * @param timeout     how long the run may take; past it the run's thread is interrupted and this throws
     * @throws NeedsProcess when the command would change the whole JVM (the daemon would start): what it
     *                      wrote to {@code out} and {@code err} until then is to be thrown away
     */
    public static int run(OutputStream out, OutputStream err, Map<String, String> environment, Duration timeout,
                          String... args) throws InterruptedException, TimeoutException, NeedsProcess {
        if (System.getProperty(StepHook.HALT_PROPERTY) != null) {
            throw new IllegalStateException(StepHook.HALT_PROPERTY + " is set: a pass would halt this JVM");
        }
        install();
        // The writers a process's picocli makes for itself: its charset, buffered, flushed by println. What a
        // command leaves unflushed is not flushed after it either, as System.exit does not.
        Charset charset = Charset.defaultCharset();
        PrintWriter outWriter = new PrintWriter(new BufferedWriter(new OutputStreamWriter(out, charset)), true);
        PrintWriter errWriter = new PrintWriter(new BufferedWriter(new OutputStreamWriter(err, charset)), true);
        String access = environment.get("AWS_ACCESS_KEY_ID");
        String secret = environment.get("AWS_SECRET_ACCESS_KEY");
        // With a session token the SDK would sign with all three: such a run is the SDK's chain's to serve.
        Credentials keys = access != null && secret != null && !access.isBlank() && !secret.isBlank()
                && environment.get("AWS_SESSION_TOKEN") == null ? Credentials.ofKeys(access, secret) : null;
        Sink sink = new Sink(errWriter, keys);
        CommandLine cmd = FelixOffload.commandLine(new FelixOffload(environment, () -> out, () -> {
            sink.needsProcess = true;
            throw new IllegalStateException("a change to the whole JVM: the command needs a process of its own");
        }), args);
        cmd.setOut(outWriter);
        cmd.setErr(errWriter);
        int[] exit = {FelixOffload.EXIT_OK};
        // A thread of its own, named as a process's first thread: the threads it starts inherit the run.
        Thread main = new Thread(() -> {
            RUN.set(sink);
            try {
                exit[0] = FelixOffload.run(cmd, errWriter, args);
            } catch (Throwable e) {
                FelixOffload.uncaught(Thread.currentThread(), e, errWriter, () -> sink.halted = FelixOffload.EXIT_OUT_OF_MEMORY);
                exit[0] = 1; // the java launcher's exit when the main thread ends on a failure
            }
        }, "main");
        ManifestCache.shared().retainOnly(List.of());
        main.start();
        try {
            main.join(timeout.toMillis());
            if (main.isAlive()) {
                main.interrupt();
                main.join(TimeUnit.SECONDS.toMillis(10));
                throw new TimeoutException("felix-offload " + String.join(" ", args) + " did not finish within " + timeout);
            }
        } finally {
            sink.open = false;
        }
        if (sink.needsProcess) {
            throw new NeedsProcess("felix-offload " + String.join(" ", args) + " needs a process of its own");
        }
        return sink.halted >= 0 ? sink.halted : exit[0];
    }

    /**
     * The credentials a store opened by the calling thread takes: a run's keys when it runs inside a JVM
     * with them in its environment, else the AWS SDK's default chain, as for the tool's own process.
     */
    static Credentials storeCredentials() {
        Sink s = RUN.get();
        return s != null && s.open && s.storeKeys != null ? s.storeKeys : Credentials.defaultChain();
    }

    /**
     * Once per JVM: the tool's stderr appender hands the events of runs' threads to their runs' streams
     * instead of writing them itself, and a failure that ends a run's thread is reported to its run as
     * the tool's process reports it.
     */
    private static synchronized void install() {
        if (installed) {
            return;
        }
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            throw new IllegalStateException("this JVM logs through " + LoggerFactory.getILoggerFactory().getClass().getName()
                    + ", not logback: a run's log lines could not be told apart");
        }
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        Appender<ILoggingEvent> stderr = root.getAppender(StderrLogConfigurator.APPENDER);
        if (stderr == null) {
            throw new IllegalStateException("this JVM's logging is not the tool's own (a logback.configurationFile or"
                    + " logback-test.xml?): a run's log lines would not be the process's");
        }
        RunRouting routing = new RunRouting(StderrLogConfigurator.layout(context));
        routing.setContext(context);
        routing.start();
        stderr.addFilter(routing);
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            Sink s = RUN.get(); // the handler runs on the thread that ends
            if (s != null && s.open) {
                FelixOffload.uncaught(thread, e, s.err, () -> s.halted = FelixOffload.EXIT_OUT_OF_MEMORY);
            } else if (before != null) {
                before.uncaughtException(thread, e);
            } else {
                System.err.print("Exception in thread \"" + thread.getName() + "\" ");
                e.printStackTrace(System.err);
            }
        });
        installed = true;
    }

    /**
     * Before the stderr appender writes an event (on the thread that logs it): an event of a run's thread
     * is written to that run's standard error in the same layout, and the appender told to leave it.
     * Kept as the appender's filter rather than an appender beside it, so the JVM's logging keeps the
     * one appender the tool configures.
     */
    private static final class RunRouting extends Filter<ILoggingEvent> {
        private final PatternLayout layout;

        RunRouting(PatternLayout layout) {
            this.layout = layout;
        }

        @Override
        public FilterReply decide(ILoggingEvent event) {
            Sink s = RUN.get();
            if (s == null || !s.open) {
                return FilterReply.NEUTRAL;
            }
            s.err.print(layout.doLayout(event));
            s.err.flush(); // as the console appender flushes every event
            return FilterReply.DENY;
        }
    }
}
