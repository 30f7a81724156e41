package dev.felix.offload.copy;

/**
 * Tells a running pass that it should end early. A pass checks it between units of work (shards,
 * batches of deletes) and, when it is set, ends at the next point where everything it wrote is
 * whole; what it did not get to is left for the next pass.
 */
@FunctionalInterface
public interface StopSignal {

    boolean stopRequested();

    /** A signal that is never set. */
    static StopSignal never() {
        return () -> false;
    }
}
