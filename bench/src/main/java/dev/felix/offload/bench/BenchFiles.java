package dev.felix.offload.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** File helpers. */
final class BenchFiles {

    private BenchFiles() {
    }

    /** Deletes {@code dir} and everything under it; nothing when it does not exist. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                try {
                    Files.delete(p);
                } catch (NoSuchFileException e) {
                    // gone already
                }
            }
        }
    }
}
