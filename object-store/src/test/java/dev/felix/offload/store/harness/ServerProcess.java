package dev.felix.offload.store.harness;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/** One server running as a separate java process, its output in a log file. */
final class ServerProcess {
    private final String name;
    private final Process process;
    private final Path log;

    private ServerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code java <jvmArgs> -jar jar <args>}, hands its process to {@code spawned} at once (before
     * it is ready: a record of it must survive a kill of this JVM during the wait) and waits until
     * {@code ready} holds.
     */
    static ServerProcess start(String name, Path jar, List<String> jvmArgs, List<String> args, Path log,
            Consumer<ProcessHandle> spawned, BooleanSupplier ready, Duration timeout) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException(name + " jar not found at " + jar + "; `mvn verify` copies it there "
                    + "(maven-dependency-plugin, phase generate-test-resources)");
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(args);
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        ServerProcess server = new ServerProcess(name, process, log);
        try {
            spawned.accept(process.toHandle());
        } catch (RuntimeException e) {
            server.stop();
            throw e;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException(name + " exited with " + process.exitValue() + " before it was ready; log "
                        + log + ":\n" + server.logTail());
            }
            if (ready.getAsBoolean()) {
                return server;
            }
            if (System.nanoTime() > deadline) {
                server.stop();
                throw new IOException(name + " not ready within " + timeout + "; log " + log + ":\n" + server.logTail());
            }
            try {
                Thread.sleep(150);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                server.stop();
                throw new IOException("interrupted while starting " + name, e);
            }
        }
    }

    void stop() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    String name() {
        return name;
    }

    Path log() {
        return log;
    }

    String logTail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    /** A port free on 127.0.0.1 right now (another process may take it before the server binds it). */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }
}
