package dev.felix.offload.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts the numbered sections ({@code ## 1. ...}) of a run of some sections into the page of an
 * earlier full run, marking each replaced section with when it ran; everything else stays as the
 * earlier run wrote it. Where the run had only some of a section's subsections ({@code ### 1c. ...}
 * without 1a and 1b), only those are replaced.
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
                String note = "*Re-run alone on " + when + " (median of " + runs
                        + " runs, JMH settings as listed above); the rest of the page is from the full run.*\n";
                Map<String, String> oldSubs = split(e.getValue(), "### ");
                Map<String, String> newSubs = split(newParts.get(heading), "### ");
                List<String> kept = oldSubs.keySet().stream().filter(k -> !k.isEmpty() && !newSubs.containsKey(k)).toList();
                if (kept.isEmpty()) {
                    out.append(noted(newParts.get(heading), note));
                    replaced.add(heading.substring(3));
                } else {
                    // The run had some of the section's subsections (1c without 1a and 1b, say): those it had are
                    // replaced, each with the note; the others, and the section's opening, stay as they were.
                    String subNote = "*Re-run alone on " + when + " (median of " + runs
                            + " runs); the rest of this section and of the page is from earlier runs.*\n";
                    for (Map.Entry<String, String> sub : oldSubs.entrySet()) {
                        String rerun = newSubs.get(sub.getKey());
                        out.append(sub.getKey().isEmpty() || rerun == null ? sub.getValue() : noted(rerun, subNote));
                        if (!sub.getKey().isEmpty() && rerun != null) {
                            replaced.add(sub.getKey().substring(4));
                        }
                    }
                    for (Map.Entry<String, String> sub : newSubs.entrySet()) {
                        if (!sub.getKey().isEmpty() && !oldSubs.containsKey(sub.getKey())) {
                            out.append(noted(sub.getValue(), subNote));
                            replaced.add(sub.getKey().substring(4));
                        }
                    }
                }
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

    /** {@code part} (a heading line and its text) with {@code note} as a paragraph under the heading. */
    private static String noted(String part, String note) {
        int firstLineEnd = part.indexOf('\n') + 1;
        return part.substring(0, firstLineEnd) + '\n' + note + part.substring(firstLineEnd);
    }

    /** Parts by their {@code ## } heading line; the text before the first heading under the key "". */
    private static Map<String, String> split(String text) {
        return split(text, "## ");
    }

    /** Parts by their heading lines starting {@code marker}; the text before the first under the key "". */
    private static Map<String, String> split(String text, String marker) {
        Map<String, String> parts = new LinkedHashMap<>();
        String key = "";
        StringBuilder current = new StringBuilder();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.startsWith(marker)) {
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
