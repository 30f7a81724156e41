package dev.felix.offload.bench;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Runs JMH benchmarks as sides of a comparison: {@code runs} rounds, each running every side once in
 * its own fork (JMH warm-up iterations first, then measured iterations), the order of the sides
 * rotating from round to round. Ratios are taken within a round, then the median over rounds.
 */
final class JmhRounds {

    /** One side: a benchmark method with its parameters. */
    record Side(String name, Class<?> benchmark, String method, Map<String, String> params) {
    }

    private final BenchConfig config;
    private final List<String> jvmArgs;
    private final boolean singleShot;
    private final int warmupMillis;

    JmhRounds(BenchConfig config, List<String> jvmArgs) {
        this(config, jvmArgs, false, config.jmhWarmupMillis);
    }

    private JmhRounds(BenchConfig config, List<String> jvmArgs, boolean singleShot, int warmupMillis) {
        this.config = config;
        this.jvmArgs = jvmArgs;
        this.singleShot = singleShot;
        this.warmupMillis = warmupMillis;
    }

    /** The same rounds for single-shot benchmarks: iterations are shots, no iteration time. */
    JmhRounds singleShot() {
        return new JmhRounds(config, jvmArgs, true, warmupMillis);
    }

    /** The same rounds with warm-up iterations of {@code millis}. */
    JmhRounds warmupMillis(int millis) {
        return new JmhRounds(config, jvmArgs, singleShot, millis);
    }

    /** The same rounds with more JVM arguments for the forks. */
    JmhRounds with(List<String> more) {
        List<String> all = new ArrayList<>(jvmArgs);
        all.addAll(more);
        return new JmhRounds(config, all, singleShot, warmupMillis);
    }

    /** The scores of each side, one per round (in JMH's unit for the benchmark), by side name. */
    Map<String, List<Double>> run(String what, List<Side> sides) throws RunnerException {
        Map<String, List<Double>> scores = new LinkedHashMap<>();
        for (Side s : sides) {
            scores.put(s.name(), new ArrayList<>());
        }
        for (int round = 0; round < config.runs; round++) {
            for (int i = 0; i < sides.size(); i++) {
                Side side = sides.get((i + round) % sides.size());
                double score = once(side);
                scores.get(side.name()).add(score);
                System.out.printf("  [%s] run %d/%d %-10s %s%n", what, round + 1, config.runs, side.name(), Table.num(score));
            }
        }
        return scores;
    }

    private double once(Side side) throws RunnerException {
        ChainedOptionsBuilder b = new OptionsBuilder()
                .include("^" + Pattern.quote(side.benchmark().getName() + "." + side.method()) + "$")
                .forks(1)
                .warmupIterations(singleShot ? config.jmhShotWarmups : config.jmhWarmupIterations)
                .warmupTime(TimeValue.milliseconds(warmupMillis))
                .measurementIterations(singleShot ? config.jmhShots : config.jmhIterations)
                .measurementTime(TimeValue.milliseconds(config.jmhMillis))
                .jvmArgsAppend(jvmArgs.toArray(String[]::new))
                .verbosity(VerboseMode.SILENT)
                .shouldFailOnError(true);
        side.params().forEach(b::param);
        Collection<RunResult> results = new Runner(b.build()).run();
        if (results.size() != 1) {
            throw new IllegalStateException("expected one JMH result for " + side + ", got " + results.size());
        }
        return results.iterator().next().getPrimaryResult().getScore();
    }
}
