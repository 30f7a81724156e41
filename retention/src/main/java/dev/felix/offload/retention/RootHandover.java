package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;

/**
 * How a retention pass lets other passes of its process over the same data root go first: between
 * two shards it asks {@link #wanted()}, and when another pass waits for the root it lets the root go
 * (its {@link dev.felix.offload.root.RootLock} closed, nothing of its own under way) and
 * {@link #handOver}s. Once the root is back, the pass reads what it judges by again (the node claim
 * and lease, the manifests' keys), as a pass that starts does, since the other pass may have
 * uploaded, recorded or advanced the node's lease meanwhile.
 *
 * <p>The daemon gives one, so that an offload run never waits behind a retention pass for more than
 * one shard's retention (or the orphan sweep at the pass's end); the one-shot {@code retention}
 * command gives {@link #never()} and keeps the root from its first shard to its sweep.
 */
public interface RootHandover {

    /** Whether another pass waits for the root now. */
    boolean wanted();

    /**
     * Lets the waiting passes have the root and waits to have it again.
     *
     * @return false when a stop was requested before the root came back: the pass ends there
     */
    boolean handOver(StopSignal stop) throws InterruptedException;

    /** Never hands the root over: the pass holds it throughout. */
    static RootHandover never() {
        return new RootHandover() {
            @Override
            public boolean wanted() {
                return false;
            }

            @Override
            public boolean handOver(StopSignal stop) {
                return true;
            }
        };
    }
}
