package dev.felix.offload.log;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Where the golden fixtures written by {@code tools/golden/gen_golden.py} live, and their listings. */
public final class Golden {

    private Golden() {
    }

    /**
     * The fixture tree. Read from the module's source tree when the test runs from the module
     * directory (so dot-directories such as {@code .deleted} are seen exactly as generated), else from
     * the test classpath.
     */
    public static Path dir() {
        Path source = Path.of(System.getProperty("basedir", "."), "src", "test", "resources", "golden");
        if (Files.isDirectory(source)) {
            return source;
        }
        URL url = Golden.class.getResource("/golden");
        if (url == null) {
            throw new IllegalStateException("golden fixtures not found");
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Files in {@code golden/<sub>} whose name ends in {@code suffix}, sorted by name; never empty. */
    public static List<Path> files(String sub, String suffix) {
        try (Stream<Path> s = Files.list(dir().resolve(sub))) {
            List<Path> out = s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted()
                    .collect(Collectors.toList());
            if (out.isEmpty()) {
                throw new IllegalStateException("no *" + suffix + " fixtures under " + dir().resolve(sub));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The directories directly under {@code golden/<sub>}, sorted; never empty. */
    public static List<Path> dirs(String sub) {
        try (Stream<Path> s = Files.list(dir().resolve(sub))) {
            List<Path> out = s.filter(Files::isDirectory).sorted().collect(Collectors.toList());
            if (out.isEmpty()) {
                throw new IllegalStateException("no directories under " + dir().resolve(sub));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code name.log} → {@code name}. */
    public static String stem(Path file, String suffix) {
        String name = file.getFileName().toString();
        return name.substring(0, name.length() - suffix.length());
    }

    public static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
