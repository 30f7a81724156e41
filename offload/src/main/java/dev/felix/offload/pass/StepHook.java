package dev.felix.offload.pass;

import java.io.IOException;
import java.util.Locale;

/**
 * Called as each segment reaches each {@link OffloadStep}: the seam crash tests use to stop a pass
 * between two steps.
 */
@FunctionalInterface
public interface StepHook {

    /** The system property naming a step at which the process halts itself, for crash tests. */
    String HALT_PROPERTY = "felix.offload.haltAt";

    void reached(OffloadStep step, String shard, long segmentId) throws IOException;

    /** Does nothing. */
    static StepHook none() {
        return (step, shard, segmentId) -> { };
    }

    /**
     * Halts the JVM at once (no shutdown hooks, like a kill) when the step named by
     * {@value #HALT_PROPERTY} is reached; does nothing when the property is unset.
     */
    static StepHook haltAtSystemProperty() {
        String name = System.getProperty(HALT_PROPERTY);
        if (name == null || name.isBlank()) {
            return none();
        }
        OffloadStep at = OffloadStep.valueOf(name.trim().toUpperCase(Locale.ROOT));
        return (step, shard, segmentId) -> {
            if (step == at) {
                System.err.println("felix-offload: halting at " + step + " for " + shard + " segment " + segmentId);
                Runtime.getRuntime().halt(137);
            }
        };
    }
}
