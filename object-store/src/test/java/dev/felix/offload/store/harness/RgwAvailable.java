package dev.felix.offload.store.harness;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a test class only where Ceph's packages are installed; elsewhere (a developer's machine
 * without them) the class is skipped with one line saying how to install them. In CI
 * ({@code CI=true}) a missing RGW is a failure, not a skip: CI installs the packages, so their
 * absence means the tests that were meant to run on a production server did not.
 */
public final class RgwAvailable implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return evaluate(CephRgw.missingPackages(), "true".equalsIgnoreCase(System.getenv("CI")), context.getDisplayName());
    }

    static ConditionEvaluationResult evaluate(Optional<String> missing, boolean ci, String testName) {
        if (missing.isEmpty()) {
            return ConditionEvaluationResult.enabled("Ceph RGW is installed");
        }
        if (ci) {
            throw new IllegalStateException("CI=true but " + missing.get() + "; " + testName + " must run on RGW in CI");
        }
        return ConditionEvaluationResult.disabled(testName + " skipped: " + missing.get());
    }
}
