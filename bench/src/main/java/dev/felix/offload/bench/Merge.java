package dev.felix.offload.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts the numbered sections ({@code ## 1. ...}) of a run of some sections into the page of an
 * earlier full run, marking each replaced section with when it ran; everything else stays as the
 * earlier run wrote it.
 */
final class Merge {

    private static final String FOOTER = "\nThe whole run took ";

    private Merge() {
    }

    static String sections(String old, String fresh, String when, double minutes, int runs) {
        Map<String, String> oldParts = split(strip(old));
        Map<String, String> newParts = split(strip(fresh));
        List<String> replaced = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> e : oldParts.entrySet()) {
            String heading = e.getKey();
            if (heading.matches("## \\d.*") && newParts.containsKey(heading)) {
                String body = newParts.get(heading);
                int firstLineEnd = body.indexOf('\n') + 1;
                out.append(body, 0, firstLineEnd).append('\n')
                        .append("*Re-run alone on ").append(when).append(" (median of ").append(runs)
                        .append(" runs, JMH settings as listed above); the rest of the page is from the full run.*\n")
                        .append(body.substring(firstLineEnd));
                replaced.add(heading.substring(3));
            } else {
                out.append(e.getValue());
            }
        }
        for (Map.Entry<String, String> e : newParts.entrySet()) {
            // a section the earlier run did not have (added since) goes after the others
            if (e.getKey().matches("## \\d.*") && !oldParts.containsKey(e.getKey())) {
                String body = e.getValue();
                int firstLineEnd = body.indexOf('\n') + 1;
                out.append(body, 0, firstLineEnd).append('\n')
                        .append("*Run alone on ").append(when).append(" (median of ").append(runs)
                        .append(" runs); new since the full run.*\n")
                        .append(body.substring(firstLineEnd));
                replaced.add(e.getKey().substring(3));
            }
        }
        String merged = out.toString().stripTrailing() + "\n";
        out = new StringBuilder(merged);
        int footer = old.lastIndexOf(FOOTER);
        if (footer >= 0) {
            out.append(old.substring(footer).stripTrailing()).append('\n');
        }
        out.append(Table.f("Re-run alone (%.1f minutes): %s.%n", minutes, String.join("; ", replaced)));
        return out.toString();
    }

    /** The text without the closing lines about run time. */
    private static String strip(String text) {
        int footer = text.lastIndexOf(FOOTER);
        return footer < 0 ? text : text.substring(0, footer) + "\n";
    }

    /** Parts by their {@code ## } heading line; the text before the first heading under the key "". */
    private static Map<String, String> split(String text) {
        Map<String, String> parts = new LinkedHashMap<>();
        String key = "";
        StringBuilder current = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.startsWith("## ")) {
                parts.put(key, current.toString());
                key = line.trim();
                current = new StringBuilder();
            }
            current.append(line);
            if (i < lines.length - 1) {
                current.append('\n');
            }
        }
        parts.put(key, current.toString());
        return parts;
    }
}
