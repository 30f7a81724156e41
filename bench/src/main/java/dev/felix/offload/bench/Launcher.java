package dev.felix.offload.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The distribution's launcher ({@code bin/felix-offload}), as an operator installs it: the tarball the
 * {@code dist} module builds, unpacked with {@code tar} under the run's work directory. Its first start
 * (an untimed {@code --version}) makes the class-data-sharing archive the launcher keeps in
 * {@code lib/cds}, so every timed start maps the tool's classes from it, as an installed one does.
 * {@code -Dbench.launcher=PATH} names another launcher instead (one already installed).
 */
final class Launcher {

    /** The launcher, or why there is none. */
    record Found(Path launcher, String why) {
    }

    private Launcher() {
    }

    static Found find(String explicit, Path dist, Path work) {
        if (explicit != null) {
            Path p = Path.of(explicit).toAbsolutePath();
            return Files.isExecutable(p) ? new Found(p, null) : new Found(null, "no executable launcher at " + p);
        }
        Path tarball;
        try (Stream<Path> files = Files.list(dist)) {
            List<Path> found = files.filter(f -> f.getFileName().toString().matches("felix-offload-.*\\.tar\\.gz"))
                    .sorted().toList();
            if (found.isEmpty()) {
                return new Found(null, "no distribution tarball in " + dist + " (the benchmark command in README builds it)");
            }
            tarball = found.get(found.size() - 1);
        } catch (IOException e) {
            return new Found(null, "no distribution tarball in " + dist + " (the benchmark command in README builds it)");
        }
        try {
            Path into = work.resolve("launcher");
            BenchFiles.deleteTree(into);
            Files.createDirectories(into);
            Path log = into.resolve("install.log");
            int exit = JarRuns.run(List.of("tar", "-xzf", tarball.toString(), "-C", into.toString()), Map.of(), log);
            if (exit != 0) {
                return new Found(null, "tar -xzf " + tarball + " exited with " + exit + ": " + JarRuns.tail(log));
            }
            Path launcher;
            try (Stream<Path> dirs = Files.list(into)) {
                launcher = dirs.map(d -> d.resolve("bin").resolve("felix-offload")).filter(Files::isExecutable).findFirst()
                        .orElse(null);
            }
            if (launcher == null) {
                return new Found(null, "no bin/felix-offload in " + tarball);
            }
            // The first start makes the archive (untimed), as an installed launcher's first start does.
            int first = JarRuns.run(List.of(launcher.toString(), "--version"), Map.of(), log);
            if (first != 0) {
                return new Found(null, launcher + " --version exited with " + first + ": " + JarRuns.tail(log));
            }
            return new Found(launcher, null);
        } catch (IOException e) {
            return new Found(null, "installing " + tarball + ": " + e.getMessage());
        }
    }

    /** Whether the launcher made its class-data-sharing archive (the start-up rows say so). */
    static boolean hasArchive(Path launcher) {
        Path cds = launcher.getParent().resolveSibling("lib").resolve("cds");
        try (Stream<Path> files = Files.list(cds)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".jsa"));
        } catch (IOException e) {
            return false;
        }
    }
}
