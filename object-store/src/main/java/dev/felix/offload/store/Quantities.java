package dev.felix.offload.store;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two written forms of a quantity the tool takes everywhere (the configuration file, command
 * options and store URIs alike): a byte count with an optional unit, and a duration with a unit.
 * Each parser answers null when the text is not of its form, so the caller names the setting and
 * says what it expected.
 */
public final class Quantities {

    private static final Pattern BYTES = Pattern.compile("(-?[0-9]+)\\s*([A-Za-z]*)");
    private static final Pattern DURATION = Pattern.compile("([0-9]+)\\s*(ms|s|m|h|d)");

    private Quantities() {
    }

    /**
     * A byte count: digits, optionally followed by a unit: {@code B}, {@code KiB}, {@code MiB},
     * {@code GiB}, {@code TiB} (powers of 1024) or {@code KB}, {@code MB}, {@code GB}, {@code TB}
     * (powers of 1000); units are case-insensitive. A negative number is answered as written (only
     * without a unit; what it means is the caller's). Null when the text is not of this form or
     * overflows.
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
}
