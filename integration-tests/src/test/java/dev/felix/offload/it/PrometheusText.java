package dev.felix.offload.it;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4): every line is a
 * {@code # HELP}, a {@code # TYPE}, another comment, or a sample {@code name{labels} value [timestamp]};
 * every sample belongs to a family with a TYPE given before it. Anything else fails the parse.
 */
final class PrometheusText {

    private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
    private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|histogram|summary|untyped)");
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") .*");
    private static final String LABEL = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
    private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(\\{(?:" + LABEL + "(?:," + LABEL
            + ")*,?)?\\})? (\\S+)(?: (-?[0-9]+))?");

    record Sample(String name, String labels, double value) {
    }

    final Map<String, String> types = new HashMap<>();
    final List<Sample> samples = new ArrayList<>();

    static PrometheusText parse(String text) {
        PrometheusText out = new PrometheusText();
        int n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            if (line.isEmpty()) {
                continue;
            }
            Matcher t = TYPE.matcher(line);
            if (t.matches()) {
                if (out.types.put(t.group(1), t.group(2)) != null) {
                    throw new IllegalArgumentException("line " + n + ": TYPE of " + t.group(1) + " given twice");
                }
                continue;
            }
            if (HELP.matcher(line).matches() || (line.startsWith("#") && !line.startsWith("# TYPE") && !line.startsWith("# HELP"))) {
                continue;
            }
            Matcher s = SAMPLE.matcher(line);
            if (!s.matches()) {
                throw new IllegalArgumentException("line " + n + " is not Prometheus text: " + line);
            }
            String name = s.group(1);
            double value = switch (s.group(3)) {
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                case "NaN" -> Double.NaN;
                default -> Double.parseDouble(s.group(3));
            };
            String family = familyOf(name, out.types);
            if (family == null) {
                throw new IllegalArgumentException("line " + n + ": sample " + name + " has no TYPE before it");
            }
            out.samples.add(new Sample(name, s.group(2) == null ? "" : s.group(2), value));
        }
        return out;
    }

    private static String familyOf(String name, Map<String, String> types) {
        if (types.containsKey(name)) {
            return name;
        }
        for (String suffix : new String[] {"_total", "_bucket", "_count", "_sum", "_created", "_max"}) {
            if (name.endsWith(suffix) && types.containsKey(name.substring(0, name.length() - suffix.length()))) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return null;
    }

    /** The value of the sample {@code name} with exactly {@code labels} ("" for none). */
    double value(String name, String labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().equals(labels)).findFirst()
                .map(Sample::value).orElseThrow(() -> new AssertionError("no sample " + name + labels));
    }
}
