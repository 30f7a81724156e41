package dev.felix.offload.reliability;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The suite's knobs, all system properties, so a longer local run needs no edit:
 * {@code mvn -B -ntp -pl reliability verify -Dfelix.reliability.kills=2000 -Dfelix.reliability.seed=7}.
 * Failsafe passes {@code -D} user properties on to the test JVM. Defaults keep one CI run to a few
 * minutes on two cores.
 */
final class Props {

    /** The seed every random choice derives from; {@code random} draws one (printed, so a failure can be replayed). */
    static final String SEED = "felix.reliability.seed";

    private static final long DEFAULT_SEED = 20_261_129L;
    private static volatile Long seed;

    private Props() {
    }

    static int integer(String name, int fallback) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("system property " + name + " must be a whole number, got '" + v + "'");
        }
    }

    static Duration seconds(String name, int fallbackSeconds) {
        return Duration.ofSeconds(integer(name, fallbackSeconds));
    }

    /** The run's seed: {@value #SEED}, {@code random} for a fresh one, or a fixed default. */
    static synchronized long seed() {
        if (seed == null) {
            String v = System.getProperty(SEED);
            if (v == null || v.isBlank()) {
                seed = DEFAULT_SEED;
            } else if (v.trim().equalsIgnoreCase("random")) {
                seed = System.nanoTime() ^ System.currentTimeMillis();
            } else {
                seed = Long.parseLong(v.trim());
            }
            System.out.println("reliability suite seed: " + seed + " (replay with -D" + SEED + "=" + seed + ")");
        }
        return seed;
    }

    /** A seed for one named part of the suite, derived from the run's seed. */
    static long seed(String part) {
        long h = seed() * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < part.length(); i++) {
            h = (h ^ part.charAt(i)) * 0x100000001B3L;
        }
        return h;
    }

    /**
     * Appends lines to {@code target/reliability/summary.txt} and prints them: what each part of the
     * suite did, for the record (docs/reliability.md quotes a run of it).
     */
    static synchronized void summary(String text) {
        String lines = text.endsWith(System.lineSeparator()) ? text : text + System.lineSeparator();
        System.out.print(lines);
        try {
            java.nio.file.Files.writeString(java.nio.file.Files.createDirectories(work()).resolve("summary.txt"), lines,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Where the suite keeps its data roots, stores and process output ({@code target/reliability}). */
    static Path work() {
        return Path.of(System.getProperty("felix.reliability.work", "target/reliability")).toAbsolutePath();
    }
}
