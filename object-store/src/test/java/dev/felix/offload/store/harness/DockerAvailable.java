package dev.felix.offload.store.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;

/**
 * Runs a test class only where a Docker engine answers; elsewhere the class is skipped with one
 * line saying why. Without a socket or {@code DOCKER_HOST} it does not even ask Testcontainers,
 * which would otherwise try every strategy it knows and log each failure.
 */
public final class DockerAvailable implements ExecutionCondition {
    private static Boolean available;

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return available()
                ? ConditionEvaluationResult.enabled("a Docker engine answers")
                : ConditionEvaluationResult.disabled("no Docker engine here: " + context.getDisplayName()
                        + " (Testcontainers) skipped; the same contract runs on S3Mock and S3Proxy");
    }

    static synchronized boolean available() {
        if (available == null) {
            boolean hint = System.getenv("DOCKER_HOST") != null || Files.exists(Path.of("/var/run/docker.sock"))
                    || Files.exists(Path.of(System.getProperty("user.home"), ".docker", "run", "docker.sock"));
            available = hint && DockerClientFactory.instance().isDockerAvailable();
        }
        return available;
    }
}
