package dev.felix.offload.it;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a test scraped from the daemon's own {@code /metrics}, one step per scrape, for the metrics
 * it keeps, written out as the input series of a {@code promtool test rules} file in which each
 * scrape stands for one minute. The values are the daemon's; only the time between them is set, so
 * that alerts with {@code for: 30m} can be shown to fire over a recording of a few minutes, and
 * what the rules make of the series does not depend on how fast this machine ran.
 *
 * <p>Checks are PromQL expressions evaluated at a step, usually over {@code ALERTS}, the series
 * Prometheus (and promtool) writes for every pending and firing alert.
 */
final class RecordedSeries {

    /** The labels Prometheus would add to every series it scrapes from the daemon. */
    static final String TARGET_LABELS = "instance=\"felix-daemon\",job=\"felix-offload\"";
    private static final Pattern METRIC = Pattern.compile("\\bfelix_[a-z0-9_]+");

    /** A check at a step: {@code expr} yields exactly {@code {} 1} (expectOne), or nothing. */
    record Check(String what, String expr, int step, boolean expectOne) {
    }

    private final Set<String> names;
    private final Map<String, List<Double>> series = new TreeMap<>();
    private final List<Check> checks = new ArrayList<>();
    private final Map<Integer, String> marks = new LinkedHashMap<>();
    private int steps;

    private RecordedSeries(Set<String> names) {
        this.names = names;
    }

    /** Keeps every metric an {@code expr:} of {@code rules} names, and {@code more}. */
    static RecordedSeries forRules(String rules, String... more) {
        Set<String> names = new java.util.TreeSet<>(List.of(more));
        for (String line : rules.lines().filter(l -> l.trim().startsWith("expr:")).toList()) {
            Matcher m = METRIC.matcher(line);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return new RecordedSeries(names);
    }

    Set<String> names() {
        return names;
    }

    /** Adds one scrape as the next step; a series missing from it has no sample there. */
    void add(PrometheusText scrape) {
        for (PrometheusText.Sample s : scrape.samples) {
            if (!names.contains(s.name()) || Double.isNaN(s.value())) {
                continue;
            }
            String key = s.name() + s.labels();
            List<Double> values = series.computeIfAbsent(key, k -> new ArrayList<>());
            while (values.size() < steps) {
                values.add(null);
            }
            values.add(s.value());
        }
        steps++;
    }

    /** Steps recorded so far; the next scrape is step {@link #steps()}. */
    int steps() {
        return steps;
    }

    /** Names a step (a phase's start or end) in the file's comments. */
    void mark(String what) {
        marks.merge(steps - 1, what, (a, b) -> a + "; " + b);
    }

    /** The last value of {@code name} with exactly {@code labels}; NaN when never seen. */
    double last(String name, String labels) {
        requireKept(name);
        List<Double> v = series.get(name + labels);
        if (v == null || v.size() < steps || v.get(steps - 1) == null) {
            return Double.NaN;
        }
        return v.get(steps - 1);
    }

    /** The sum over every series of {@code name} at the last step. */
    double lastSum(String name) {
        requireKept(name);
        double sum = 0;
        for (Map.Entry<String, List<Double>> e : series.entrySet()) {
            if (e.getKey().equals(name) || e.getKey().startsWith(name + "{")) {
                List<Double> v = e.getValue();
                if (v.size() == steps && v.get(steps - 1) != null) {
                    sum += v.get(steps - 1);
                }
            }
        }
        return sum;
    }

    private void requireKept(String name) {
        if (!names.contains(name)) {
            throw new IllegalArgumentException(name + " is not recorded; the recorded metrics are " + names);
        }
    }

    void expectFiringWithin(String alert, int fromStep, int toStep) {
        checks.add(new Check(alert + " fires between steps " + fromStep + " and " + toStep,
                "max(max_over_time(ALERTS{alertname=\"" + alert + "\",alertstate=\"firing\"}[" + (toStep - fromStep + 1)
                        + "m]))", toStep, true));
    }

    void expectSilentWithin(String alert, int fromStep, int toStep) {
        checks.add(new Check(alert + " does not fire between steps " + fromStep + " and " + toStep,
                "max(max_over_time(ALERTS{alertname=\"" + alert + "\",alertstate=\"firing\"}[" + (toStep - fromStep + 1)
                        + "m]))", toStep, false));
    }

    /** No alert at all fires at {@code step}. */
    void expectNoneFiringAt(int step) {
        checks.add(new Check("no alert fires at step " + step, "max(ALERTS{alertstate=\"firing\"})", step, false));
    }

    /** Any other check: {@code expr} gives {@code {} 1} at {@code step}, or nothing. */
    void expect(String what, String expr, int step, boolean expectOne) {
        checks.add(new Check(what, expr, step, expectOne));
    }

    /** The promtool unit test: the recorded series, every check, and every alert of the rules resolved at the end. */
    String promtoolTest(String rulesFile, List<String> alerts) {
        StringBuilder y = new StringBuilder();
        y.append("# Recorded from the daemon's /metrics: ").append(steps).append(" scrapes, each one minute here.\n");
        marks.forEach((step, what) -> y.append("# step ").append(step).append(": ").append(what).append('\n'));
        y.append("rule_files:\n  - '").append(rulesFile).append("'\n");
        y.append("evaluation_interval: 1m\n");
        y.append("tests:\n  - interval: 1m\n    input_series:\n");
        for (Map.Entry<String, List<Double>> e : series.entrySet()) {
            String key = e.getKey();
            String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            String labels = key.contains("{") ? key.substring(key.indexOf('{') + 1, key.length() - 1) : "";
            y.append("      - series: '").append(name).append('{').append(labels.isEmpty() ? "" : labels + ",")
                    .append(TARGET_LABELS).append("}'\n        values: '");
            List<Double> v = e.getValue();
            for (int i = 0; i < steps; i++) {
                Double d = i < v.size() ? v.get(i) : null;
                y.append(i == 0 ? "" : " ").append(d == null ? "_" : BigDecimal.valueOf(d).stripTrailingZeros().toPlainString());
            }
            y.append("'\n");
        }
        y.append("    alert_rule_test:\n");
        for (String alert : alerts) {
            y.append("      - eval_time: ").append(steps - 1).append("m\n        alertname: ").append(alert)
                    .append("\n        exp_alerts: []\n");
        }
        y.append("    promql_expr_test:\n");
        for (Check c : checks) {
            y.append("      # ").append(c.what()).append('\n');
            y.append("      - expr: '").append(c.expr().replace("'", "''")).append("'\n        eval_time: ")
                    .append(c.step()).append("m\n        exp_samples:")
                    .append(c.expectOne() ? "\n          - labels: '{}'\n            value: 1\n" : " []\n");
        }
        return y.toString();
    }
}
