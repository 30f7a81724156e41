package dev.felix.offload.daemon;

import dev.felix.offload.log.IoProblem;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.schedule.PassScheduler;
import org.slf4j.Logger;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The steps of a daemon's stop, all within one patience: no store request starts from the first
 * step on (but the aborts of open multipart uploads); running passes get the patience less the
 * {@link #abortReserve} to end by themselves; then the uploads still open are aborted and the daemon's
 * endpoints and store closed, each on a thread of its own and none waited for past the patience; the
 * root's daemon lock goes last. Whatever did not end is left as a crash would leave it: nothing is
 * recorded before it is verified.
 */
final class StopSequence {

    /** The daemon's logger: an operator reads the stop's lines as the daemon's. */
    private static final Logger LOG = DaemonLog.LOG;

    private StopSequence() {
    }

    /** The most of a stop's patience kept for aborting open uploads and closing: a third, at most 10 s. */
    static Duration abortReserve(Duration patience) {
        Duration third = patience.dividedBy(3);
        return third.compareTo(Duration.ofSeconds(10)) < 0 ? third : Duration.ofSeconds(10);
    }

    /**
     * Runs the stop's steps.
     *
     * @param closing    closes the HTTP endpoint, the read workers, the chunk cache and the store
     * @param daemonLock the root's daemon lock, released last; null when none was taken
     * @return true when every pass ended within the patience less the reserve
     */
    static boolean run(Duration patience, MeteredStore store, PassScheduler scheduler, Callable<?> closing,
            RootLock daemonLock) {
        long deadline = System.nanoTime() + patience.toNanos();
        Duration reserve = abortReserve(patience);
        store.stopRequests();
        LOG.info("stopping: no new pass or store request starts; running passes get up to {} s to end",
                patience.minus(reserve).toMillis() / 1000.0);
        boolean ended = scheduler.stop(patience.minus(reserve), Duration.ZERO);
        // What is left must not outlast the patience: each step runs on its own thread, waited for until the deadline.
        List<String> aborted = within(deadline, "aborting open multipart uploads", store::abortOpenUploads);
        if (aborted != null && !aborted.isEmpty()) {
            LOG.info("aborted {} multipart uploads the stop cut short: {}", aborted.size(), aborted);
        }
        within(deadline, "stopping the HTTP endpoint and closing the store", closing);
        if (daemonLock != null) {
            try {
                daemonLock.close();
            } catch (IOException e) {
                LOG.warn("releasing {}: {}", RootLock.DAEMON_FILE_NAME, IoProblem.describe(e));
            }
        }
        if (ended) {
            LOG.info("stopped");
        } else {
            LOG.warn("stopped; passes still running were left as a crash leaves them (nothing unproven is recorded): {}",
                    scheduler.passNames().stream().filter(scheduler::isRunning).toList());
        }
        return ended;
    }

    /** Runs {@code step} on a thread of its own and waits for it until {@code deadline}; null when it did not end by then. */
    private static <T> T within(long deadline, String what, Callable<T> step) {
        FutureTask<T> task = new FutureTask<>(step);
        Thread t = new Thread(task, "stop");
        t.setDaemon(true);
        t.start();
        try {
            return task.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("{} did not end within the stop's patience; left to the process's end", what);
        } catch (ExecutionException e) {
            LOG.warn("{} failed: {}", what, e.getCause().toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }
}
