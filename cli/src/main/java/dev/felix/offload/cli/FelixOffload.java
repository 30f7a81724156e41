package dev.felix.offload.cli;

import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code felix-offload} command. Exit codes are part of its contract: 0 success, 1 the data is
 * corrupt (or a check failed), 2 a usage error (bad option, or a path that does not exist),
 * 3 an I/O error while reading.
 */
@Command(name = "felix-offload",
        mixinStandardHelpOptions = true,
        versionProvider = FelixOffload.Version.class,
        description = "Tiered storage for the Felix streaming broker.")
public final class FelixOffload {

    /**
     * The subcommands, in the order help lists them. They are registered by {@link #commandLine(FelixOffload,
     * String...)} rather than by the annotation, so that a run builds the model of the one command it runs.
     */
    private static final List<Class<?>> COMMANDS = List.of(DumpCommand.class, FsckCommand.class,
            GenerateCommand.class, SampleDataCommand.class, ManifestCommand.class, OffloadCommand.class,
            ReadCommand.class, ShardDirCommand.class, RunCommand.class, RetentionCommand.class, ScrubCommand.class,
            ForgetShardCommand.class, RestoreCommand.class, DemoCommand.class, ReidentifyCommand.class,
            LegacyKeysCommand.class, CommandLine.HelpCommand.class);

    public static final int EXIT_OK = 0;
    public static final int EXIT_CORRUPT = 1;
    public static final int EXIT_USAGE = 2;
    public static final int EXIT_IO = 3;
    public static final int EXIT_OUT_OF_MEMORY = 4;

    /** The environment commands read (node id, store settings): the process's own, or an embedding run's. */
    private final java.util.Map<String, String> environment;
    /** Where binary output goes ({@code read --format raw}): file descriptor 1, or an embedding run's stream. */
    private final java.util.function.Supplier<java.io.OutputStream> binaryOut;
    /**
     * Told before a command changes its whole JVM (the daemon hooks its shutdown and sets its log levels):
     * nothing in a process of its own; an embedding run, which shares its JVM, ends the command there.
     */
    private final Runnable beforeJvmWideChange;

    FelixOffload() {
        this(System.getenv(), () -> new java.io.FileOutputStream(java.io.FileDescriptor.out), () -> { });
    }

    FelixOffload(java.util.Map<String, String> environment, java.util.function.Supplier<java.io.OutputStream> binaryOut,
                 Runnable beforeJvmWideChange) {
        this.environment = java.util.Map.copyOf(environment);
        this.binaryOut = binaryOut;
        this.beforeJvmWideChange = beforeJvmWideChange;
    }

    /** The environment of the command {@code spec} belongs to. */
    static java.util.Map<String, String> environment(CommandLine.Model.CommandSpec spec) {
        return ((FelixOffload) spec.root().userObject()).environment;
    }

    /** The unbuffered binary standard output of the command {@code spec} belongs to. */
    static java.io.OutputStream binaryOut(CommandLine.Model.CommandSpec spec) {
        return ((FelixOffload) spec.root().userObject()).binaryOut.get();
    }

    /** Called by a command of {@code spec} before it changes its whole JVM; see {@link EmbeddedRun}. */
    static void beforeJvmWideChange(CommandLine.Model.CommandSpec spec) {
        ((FelixOffload) spec.root().userObject()).beforeJvmWideChange.run();
    }

    public static void main(String[] args) {
        Thread.setDefaultUncaughtExceptionHandler(FelixOffload::uncaught);
        System.exit(run(args));
    }

    /**
     * A thread other than main that runs out of heap (a daemon's pass, say) would end alone with a
     * trace and leave the process up without it; it ends the process instead, as {@link #run} ends a
     * command: one line, exit 4, for a supervisor to restart it. Halting is safe: nothing is recorded
     * before its copy is proven, and the root lock is the operating system's. Anything else is a bug
     * that ends only its thread: one error line names the thread and the failure, the trace is kept
     * at debug.
     */
    static void uncaught(Thread thread, Throwable e) {
        uncaught(thread, e, new java.io.PrintWriter(System.err, true), () -> Runtime.getRuntime().halt(EXIT_OUT_OF_MEMORY));
    }

    /** As above, the out-of-memory line written to {@code err} before {@code halt} (which an embedding run records). */
    static void uncaught(Thread thread, Throwable e, java.io.PrintWriter err, Runnable halt) {
        if (e instanceof OutOfMemoryError) {
            err.print("[" + thread.getName() + "] ");
            outOfMemory(err, Runtime.getRuntime().maxMemory());
            halt.run();
            return;
        }
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FelixOffload.class);
        log.error("thread {} ended on an unexpected failure: {}: {}", thread.getName(), e.getClass().getName(),
                String.valueOf(e.getMessage()).replace('\n', ' '));
        log.debug("thread {} ended", thread.getName(), e);
    }

    /** Runs the command line and answers the exit code, without exiting. */
    public static int run(String... args) {
        return run(commandLine(new FelixOffload(), args), new java.io.PrintWriter(System.err, true), args);
    }

    /** Runs {@code cmd} (with its own streams, set by the caller); an exhausted heap is told on {@code err}. */
    static int run(CommandLine cmd, java.io.PrintWriter err, String... args) {
        try {
            return cmd.execute(args);
        } catch (OutOfMemoryError e) {
            return outOfMemory(err, Runtime.getRuntime().maxMemory());
        }
    }

    /** Writes a command's JSON form of an error. */
    @FunctionalInterface
    interface JsonError {
        void write() throws java.io.IOException;
    }

    /**
     * Ends a command that met corrupt bytes: the error as JSON ({@code asJson}) or as an
     * {@code error:} line, then exit 1.
     */
    static int endedCorrupt(java.io.PrintWriter out, boolean json,
                            dev.felix.offload.log.format.CorruptionException e, JsonError asJson) throws java.io.IOException {
        if (json) {
            asJson.write();
        } else {
            out.println("error: " + e.getMessage());
        }
        out.flush();
        return EXIT_CORRUPT;
    }

    /**
     * Prints {@code felix-offload: <message>} and answers exit 1: how a command ends on a store that
     * failed before its pass began, or a data root another process holds, as when an upload fails.
     */
    static int failedBeforePass(java.io.PrintWriter err, Exception e) {
        err.println("felix-offload: " + e.getMessage());
        err.flush();
        return EXIT_CORRUPT;
    }

    /**
     * The JVM's heap ran out (picocli lets errors through, and the JVM would print a trace). Nothing
     * half-done is recorded by any command: an entry is written only after its copy is proven.
     */
    static int outOfMemory(java.io.PrintWriter err, long maxHeapBytes) {
        err.println("felix-offload: out of memory: the JVM's heap (" + (maxHeapBytes >> 20) + " MiB) ran out; "
                + "nothing unfinished was recorded. Give it more with java -Xmx..., or lower --max-bytes-in-flight "
                + "(offload.max-bytes-in-flight)");
        err.flush();
        return EXIT_OUT_OF_MEMORY;
    }

    static CommandLine commandLine() {
        return commandLine(new FelixOffload());
    }

    /** The whole command tree over {@code top}, which holds what the commands take from their process. */
    static CommandLine commandLine(FelixOffload top) {
        return commandLine(top, COMMANDS);
    }

    /**
     * The command tree to run {@code args} with: where the first argument names a command, that command
     * alone; else (no arguments, an option such as {@code --help}, {@code help}, a misspelt name) every command,
     * for the usage, the version or the suggestions picocli prints. Picocli reads every option of every
     * command it is given by reflection, at every start: with all seventeen a launcher {@code fsck} of a small
     * root took 0.61 s of CPU, with one 0.53 s. The tree a run sees is otherwise the same: no command reaches
     * another through its parent.
     */
    static CommandLine commandLine(FelixOffload top, String... args) {
        if (args.length > 0 && !args[0].equals("help")) {
            for (Class<?> command : COMMANDS) {
                Command annotation = command.getAnnotation(Command.class);
                if (annotation.name().equals(args[0]) || Arrays.asList(annotation.aliases()).contains(args[0])) {
                    return commandLine(top, List.of(command));
                }
            }
        }
        return commandLine(top, COMMANDS);
    }

    private static CommandLine commandLine(FelixOffload top, List<Class<?>> commands) {
        CommandLine cmd = new CommandLine(top);
        // Added before any setting below, which picocli hands to the subcommands present when it is set.
        commands.forEach(cmd::addSubcommand);
        cmd.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof UsageException || ex instanceof dev.felix.offload.daemon.StartRefusedException) {
                commandLine.getErr().println("felix-offload: " + ex.getMessage());
                return EXIT_USAGE;
            }
            if (ex instanceof dev.felix.offload.root.NodeId.InvalidNodeIdException) {
                // It names where the id came from: FELIX_NODE_ID or the node-id file.
                commandLine.getErr().println("felix-offload: " + ex.getMessage());
                return EXIT_USAGE;
            }
            if (ex instanceof dev.felix.offload.root.NodeClaimCheck.RefusedException) {
                // Another root's node claim, or a store that is not this root's: nothing was written.
                commandLine.getErr().println("felix-offload: " + ex.getMessage());
                return EXIT_USAGE;
            }
            if (ex instanceof java.io.IOException io) {
                for (Throwable c = io; c != null; c = c.getCause()) {
                    if (c instanceof dev.felix.offload.store.BucketMissingException) {
                        // the store URI names a bucket that is not there: a configuration mistake, not an I/O one
                        commandLine.getErr().println("felix-offload: " + dev.felix.offload.log.IoProblem.describe(io)
                                + "; the bucket does not exist: create it, or correct the store URI");
                        return EXIT_USAGE;
                    }
                }
                commandLine.getErr().println("felix-offload: I/O error: " + dev.felix.offload.log.IoProblem.describe(io));
                return EXIT_IO;
            }
            throw ex;
        });
        return cmd;
    }

    /** A problem with what the user asked for, reported as a usage error (exit 2). */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = FelixOffload.class.getPackage().getImplementationVersion();
            return new String[] {"felix-offload " + (v == null ? "development build" : v),
                    "Felix Durable Segment Format v4 (reads segment versions 2-4, writes 3)"};
        }
    }
}
