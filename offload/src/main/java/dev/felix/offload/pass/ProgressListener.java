package dev.felix.offload.pass;

/** Hears how far a pass has come, for progress bars. Called from the pass's worker threads. */
public interface ProgressListener {

    /** The pass will upload about {@code totalBytes} (sealed segments not yet in a manifest). */
    default void started(long totalBytes) {
    }

    /** {@code bytes} more were uploaded and verified. */
    default void uploaded(long bytes) {
    }

    /** The pass is over. */
    default void finished() {
    }

    static ProgressListener none() {
        return new ProgressListener() { };
    }
}
