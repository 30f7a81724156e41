package dev.felix.offload.daemon;

import java.time.Duration;
import java.util.Locale;

/**
 * The value forms of the configuration file: byte counts with optional units, durations with a
 * unit, booleans. Each parser answers null when the text does not have its form, so the caller
 * can say what was expected for which key.
 */
public final class ConfigValues {

    private ConfigValues() {
    }

    /** A byte count with an optional unit: see {@link dev.felix.offload.store.Quantities#bytes}. */
    public static Long bytes(String text) {
        return dev.felix.offload.store.Quantities.bytes(text);
    }

    /** A duration with a unit, or ISO-8601: see {@link dev.felix.offload.store.Quantities#duration}. */
    public static Duration duration(String text) {
        return dev.felix.offload.store.Quantities.duration(text);
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
