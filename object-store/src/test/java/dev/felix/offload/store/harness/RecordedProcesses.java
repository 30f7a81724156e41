package dev.felix.offload.store.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A file naming processes a server was made of, one {@code <pid> <start in epoch ms>} line each,
 * written the moment each is spawned. The start time guards against a pid the system has since
 * given to an unrelated process: only a process alive with the same pid and start is "recorded".
 */
final class RecordedProcesses {
    private final Path file;

    RecordedProcesses(Path file) {
        this.file = file;
    }

    Path file() {
        return file;
    }

    /** Appends {@code process}; a line written before a kill is all the next cleanup needs. */
    synchronized void add(ProcessHandle process) {
        String line = process.pid() + " " + startMillis(process).orElse(0L) + "\n";
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, line, StandardCharsets.US_ASCII, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot record pid " + process.pid() + " in " + file, e);
        }
    }

    /** The recorded processes still running (same pid, same start). */
    List<ProcessHandle> alive() throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            return List.of();
        }
        List<ProcessHandle> alive = new ArrayList<>();
        for (String line : lines) {
            String[] parts = line.trim().split(" ");
            if (parts.length != 2) {
                continue; // a line torn by a kill mid-write names nothing
            }
            try {
                long pid = Long.parseLong(parts[0]);
                long start = Long.parseLong(parts[1]);
                ProcessHandle.of(pid)
                        .filter(h -> h.isAlive() && startMillis(h).map(s -> s == start).orElse(false))
                        .ifPresent(alive::add);
            } catch (NumberFormatException e) {
                // as above
            }
        }
        return alive;
    }

    /** Whether every recorded process is still running (and at least one was recorded). */
    boolean allAlive() throws IOException {
        long recorded;
        try {
            recorded = Files.readAllLines(file, StandardCharsets.US_ASCII).stream().filter(l -> !l.isBlank()).count();
        } catch (NoSuchFileException e) {
            return false;
        }
        return recorded > 0 && alive().size() == recorded;
    }

    /**
     * Stops the recorded processes still running and their descendants: TERM to all at once, KILL to
     * any left after {@code grace}. Returns how many there were.
     */
    int stopAll(Duration grace) throws IOException {
        List<ProcessHandle> alive = alive();
        stop(alive, grace);
        return alive.size();
    }

    static void stop(List<ProcessHandle> processes, Duration grace) {
        List<ProcessHandle> all = new ArrayList<>();
        for (ProcessHandle p : processes) {
            p.descendants().forEach(all::add);
            all.add(p);
        }
        all.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle p : all) {
            while (p.isAlive() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    static Optional<Long> startMillis(ProcessHandle process) {
        return process.info().startInstant().map(Instant::toEpochMilli);
    }
}
