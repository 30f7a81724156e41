package dev.felix.offload.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A Markdown table, printed as it is. */
final class Table {

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(Object... cells) {
        List<String> r = new ArrayList<>();
        for (Object c : cells) {
            r.add(String.valueOf(c));
        }
        while (r.size() < header.size()) {
            r.add("");
        }
        rows.add(r);
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    String markdown() {
        int[] w = new int[header.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = Math.max(3, header.get(i).length());
            for (List<String> r : rows) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        line(sb, header, w);
        sb.append('|');
        for (int x : w) {
            sb.append('-').append("-".repeat(x)).append("-|");
        }
        sb.append('\n');
        for (List<String> r : rows) {
            line(sb, r, w);
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, List<String> cells, int[] w) {
        sb.append('|');
        for (int i = 0; i < w.length; i++) {
            String c = cells.get(i);
            sb.append(' ').append(c).append(" ".repeat(w[i] - c.length())).append(" |");
        }
        sb.append('\n');
    }

    static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    /** A number with sensible precision for a table: 3 significant digits, thousands kept whole. */
    static String num(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    /** A ratio, as {@code 0.83x}. */
    static String ratio(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2fx", v);
    }

    static String bytes(long b) {
        if (b >= 1L << 30 && b % (1L << 30) == 0) {
            return (b >> 30) + " GiB";
        }
        if (b >= 1L << 20) {
            return b % (1L << 20) == 0 ? (b >> 20) + " MiB" : String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
        }
        if (b >= 1024) {
            return b % 1024 == 0 ? (b >> 10) + " KiB" : String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
