package dev.felix.offload.pass;

import dev.felix.offload.store.StoreException;

/**
 * Asked by a shard's pipeline before each manifest write that records verified copies: it returns
 * when the pass may still record what it uploaded, and throws otherwise. The pass's guard confirms the
 * node's lease ({@link dev.felix.offload.root.NodeLease.Fence#confirm}), so a copy of the data root
 * that another copy fenced off records nothing it uploaded after that.
 */
@FunctionalInterface
interface RecordGuard {

    /** Nothing to confirm: a pass without a node claim check. */
    RecordGuard NONE = () -> {
    };

    /**
     * @throws StoreException when it could not be confirmed (the store did not answer): nothing is recorded
     * @throws dev.felix.offload.root.NodeClaimCheck.RefusedException when another copy holds the node
     */
    void beforeRecording() throws StoreException;
}
