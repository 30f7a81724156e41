package dev.felix.offload.daemon;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The value forms of the configuration file: byte counts with optional units, durations with a
 * unit, booleans. Each parser answers null when the text does not have its form, so the caller
 * can say what was expected for which key.
 */
public final class ConfigValues {

    private static final Pattern BYTES = Pattern.compile("(-?[0-9]+)\\s*([A-Za-z]*)");
    private static final Pattern DURATION = Pattern.compile("([0-9]+)\\s*(ms|s|m|h|d)");

    private ConfigValues() {
    }

    /**
     * A byte count: digits, optionally followed by a unit: {@code B}, {@code KiB}, {@code MiB},
     * {@code GiB}, {@code TiB} (powers of 1024) or {@code KB}, {@code MB}, {@code GB}, {@code TB}
     * (powers of 1000); units are case-insensitive. A negative number is returned as written (only
     * {@code -1}, without a unit, means anything, and only where the key allows it). Null when the
     * text is not of this form or overflows.
     */
    public static Long bytes(String text) {
        Matcher m = BYTES.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        long multiplier;
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "", "b" -> multiplier = 1;
            case "kib" -> multiplier = 1L << 10;
            case "mib" -> multiplier = 1L << 20;
            case "gib" -> multiplier = 1L << 30;
            case "tib" -> multiplier = 1L << 40;
            case "kb" -> multiplier = 1_000L;
            case "mb" -> multiplier = 1_000_000L;
            case "gb" -> multiplier = 1_000_000_000L;
            case "tb" -> multiplier = 1_000_000_000_000L;
            default -> {
                return null;
            }
        }
        try {
            long n = Long.parseLong(m.group(1));
            if (n < 0 && multiplier != 1) {
                return null;
            }
            return Math.multiplyExact(n, multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            return null;
        }
    }

    /**
     * A duration: digits and a unit ({@code ms}, {@code s}, {@code m}, {@code h}, {@code d}), or
     * ISO-8601 ({@code PT1H30M}). Null when it is neither, or negative.
     */
    public static Duration duration(String text) {
        String t = text.trim();
        Matcher m = DURATION.matcher(t.toLowerCase(Locale.ROOT));
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            }
            if (t.toUpperCase(Locale.ROOT).startsWith("P")) {
                Duration d = Duration.parse(t.toUpperCase(Locale.ROOT));
                return d.isNegative() ? null : d;
            }
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            return null;
        }
        return null;
    }

    /**
     * Milliseconds for a {@code *.ms} key: a plain integer is milliseconds ({@code -1} passes
     * through), anything else a {@link #duration}. Null when neither.
     */
    static Long millis(String text) {
        String t = text.trim();
        if (t.matches("-?[0-9]+")) {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                return null;
            }
        }
        Duration d = duration(t);
        if (d == null) {
            return null;
        }
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return null;
        }
    }

    /** {@code true} or {@code false} (any case); null otherwise. */
    static Boolean bool(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> null;
        };
    }

    /** An int; null when it is not one. */
    static Integer integer(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The edit distance of two strings, for "did you mean" hints. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
