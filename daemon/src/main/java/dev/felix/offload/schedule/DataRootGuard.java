package dev.felix.offload.schedule;

import dev.felix.offload.copy.StopSignal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps this process's passes over one data root apart. Offload and retention each take the root's
 * {@code offload.lock} file lock, and a file lock taken twice in one JVM is not a reliable guard
 * (closing the second attempt's channel can release the first one's lock), so every pass that takes
 * it holds this first.
 */
public final class DataRootGuard {

    private static final long POLL_MILLIS = 100;

    private final ReentrantLock lock = new ReentrantLock(true);

    /** Held until closed. */
    public interface Held extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Waits for the root, looking at {@code stop} while waiting.
     *
     * @return the hold, or null when a stop was requested first
     */
    public Held hold(StopSignal stop) throws InterruptedException {
        while (!stop.stopRequested()) {
            if (lock.tryLock(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                return lock::unlock;
            }
        }
        return null;
    }
}
