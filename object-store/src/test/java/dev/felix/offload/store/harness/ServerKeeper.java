package dev.felix.offload.store.harness;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A small process that outlives the test JVMs of a build and stops the build's shared servers when
 * the build ends: it waits until the Maven process is gone (a normal end, a failure, a kill) and
 * until no test JVM that used the servers is left (one still starting a server as Maven died would
 * otherwise leave it), then stops every process recorded in the build's {@code *.pids} files.
 * Started by {@link SharedServers}; only the JDK on its class path.
 */
public final class ServerKeeper {
    private ServerKeeper() {}

    /** Starts a keeper for the build of Maven process {@code pid} (started at {@code start} ms) registered in {@code build}. */
    static ProcessHandle launch(long pid, long start, Path build) throws IOException {
        String classPath;
        try {
            classPath = Path.of(ServerKeeper.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IOException("cannot locate the harness classes for the server keeper", e);
        }
        Process keeper = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classPath, ServerKeeper.class.getName(),
                Long.toString(pid), Long.toString(start), build.toString())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(build.resolve("keeper.log").toFile()))
                .start();
        return keeper.toHandle();
    }

    public static void main(String[] args) throws Exception {
        long pid = Long.parseLong(args[0]);
        long start = Long.parseLong(args[1]);
        Path build = Path.of(args[2]);
        Optional<ProcessHandle> maven = ProcessHandle.of(pid)
                .filter(h -> RecordedProcesses.startMillis(h).map(s -> s == start).orElse(false));
        System.out.println(Instant.now() + " keeping the servers of build " + build + " until process " + pid + " ends");
        while (maven.isPresent() && maven.get().isAlive()) {
            Thread.sleep(1000);
        }
        RecordedProcesses users = new RecordedProcesses(build.resolve("users"));
        while (true) {
            // users first: once none is left, nothing can start a server after the stop below
            boolean usersLeft = !users.alive().isEmpty();
            List<ProcessHandle> servers = serverProcesses(build);
            if (!servers.isEmpty()) {
                System.out.println(Instant.now() + " the build ended: stopping " + servers.size() + " server process(es)");
                RecordedProcesses.stop(servers, SharedServers.STOP_GRACE);
            }
            if (!usersLeft) {
                break;
            }
            Thread.sleep(1000);
        }
        System.out.println(Instant.now() + " done");
    }

    /** The processes still running that the build in {@code build} recorded for its servers. */
    static List<ProcessHandle> serverProcesses(Path build) throws IOException {
        List<ProcessHandle> all = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(build, "*.pids")) {
            for (Path f : files) {
                all.addAll(new RecordedProcesses(f).alive());
            }
        } catch (NoSuchFileException e) {
            return all;
        }
        return all;
    }
}
