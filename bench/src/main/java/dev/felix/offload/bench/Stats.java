package dev.felix.offload.bench;

import java.util.Arrays;
import java.util.List;

/** Medians and percentiles of measured samples. */
final class Stats {

    private Stats() {
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    static double median(List<Double> values) {
        return median(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** Nearest-rank percentile, {@code p} in (0, 100]. */
    static double percentile(double[] values, double p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int rank = (int) Math.ceil(p / 100.0 * v.length);
        return v[Math.max(0, Math.min(v.length - 1, rank - 1))];
    }

    static double percentile(List<Double> values, double p) {
        return percentile(values.stream().mapToDouble(Double::doubleValue).toArray(), p);
    }

    static double min(double[] values) {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    static double max(double[] values) {
        return Arrays.stream(values).max().orElse(Double.NaN);
    }

    static double[] toArray(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
