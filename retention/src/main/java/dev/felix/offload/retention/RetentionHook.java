package dev.felix.offload.retention;

import java.io.IOException;

/**
 * Called as a retention pass reaches each {@link RetentionStep}. Throwing stops the pass there, as
 * a crash would (tests use it so); the daemon passes {@link #none()}.
 */
@FunctionalInterface
public interface RetentionHook {

    /**
     * @param shard  the shard directory's name, or for the orphan sweep the node's key prefix
     * @param detail what was done: a segment id, a key, a batch's size
     */
    void reached(RetentionStep step, String shard, String detail) throws IOException;

    static RetentionHook none() {
        return (step, shard, detail) -> { };
    }
}
