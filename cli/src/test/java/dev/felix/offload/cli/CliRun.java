package dev.felix.offload.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

/** Runs the command in-process and captures what it prints. */
record CliRun(int exitCode, String out, String err) {

    /** As the process runs {@code args}: with the command tree {@link FelixOffload#run} builds for them. */
    static CliRun of(String... args) {
        CommandLine cmd = FelixOffload.commandLine(new FelixOffload(), args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int code = cmd.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** The golden fixtures written by tools/golden/gen_golden.py (set by the surefire configuration). */
    static Path goldenDir() {
        String dir = System.getProperty("felix.golden.dir");
        if (dir == null) {
            throw new IllegalStateException("system property felix.golden.dir is not set; run through Maven");
        }
        return Path.of(dir);
    }
}
