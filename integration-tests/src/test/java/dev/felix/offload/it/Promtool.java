package dev.felix.offload.it;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus's {@code promtool} (Debian's {@code prometheus} package; {@code .ci/run} installs it),
 * which evaluates alerting rules over series exactly as Prometheus does. A test class using it runs
 * only where it is on the PATH; elsewhere it is skipped with one line saying how to install it, and
 * in CI ({@code CI=true}) its absence is a failure, since CI installs it.
 */
final class Promtool implements ExecutionCondition {

    record Result(int exitCode, String output) {
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (path().isPresent()) {
            return ConditionEvaluationResult.enabled("promtool is installed");
        }
        String why = context.getDisplayName() + " skipped: promtool is not on the PATH (apt-get install "
                + "--no-install-recommends prometheus)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("CI=true but " + why);
        }
        return ConditionEvaluationResult.disabled(why);
    }

    static Optional<Path> path() {
        String search = System.getenv("PATH");
        if (search == null) {
            return Optional.empty();
        }
        for (String dir : search.split(File.pathSeparator)) {
            Path p = Path.of(dir, "promtool");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Runs {@code promtool ARGS} in {@code dir} (two minutes at most), output and errors together. */
    static Result run(Path dir, String... args) throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>();
        command.add(path().orElseThrow().toString());
        command.addAll(java.util.List.of(args));
        Path log = Files.createTempFile(dir, "promtool", ".out");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("promtool " + String.join(" ", args) + " did not finish in 2 minutes");
        }
        return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
