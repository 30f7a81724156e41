package dev.felix.offload.schedule;

import dev.felix.offload.copy.StopSignal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Keeps this process's passes over one data root apart. Offload and retention each take the root's
 * {@code offload.lock} file lock, and a file lock taken twice in one JVM is not a reliable guard
 * (closing the second attempt's channel can release the first one's lock), so every pass that takes
 * it holds this first. It is fair: the pass that waited longest has the root next, and a pass that
 * {@link #handOver hands it over} (retention, between shards, when {@link #othersWaiting}) has it
 * back only after the passes that waited before it.
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
        if (!take(stop)) {
            return null;
        }
        return () -> {
            if (lock.isHeldByCurrentThread()) { // not after a hand-over cut short by a stop
                lock.unlock();
            }
        };
    }

    private boolean take(StopSignal stop) throws InterruptedException {
        while (!stop.stopRequested()) {
            if (lock.tryLock(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                return true;
            }
        }
        return false;
    }

    /** Whether another pass waits for the root now. */
    public boolean othersWaiting() {
        return lock.hasQueuedThreads();
    }

    /**
     * Lets the passes waiting now have the root, then waits for it again; the caller holds it (once).
     *
     * @return false when a stop was requested before it came back (the root is not held then)
     */
    public boolean handOver(StopSignal stop) throws InterruptedException {
        if (!lock.isHeldByCurrentThread()) {
            throw new IllegalStateException("the root is handed over by a pass that does not hold it");
        }
        lock.unlock();
        return take(stop);
    }
}
