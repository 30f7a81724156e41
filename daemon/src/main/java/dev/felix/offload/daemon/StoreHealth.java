package dev.felix.offload.daemon;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;

/**
 * Whether the store can be used, as the daemon's latest work found it. A request failing in a way
 * that says the store cannot be used now (no answer, a timeout, a 5xx or throttling after every
 * retry, a refusal of the credentials, a missing bucket) makes it not ready at once; a unit of work
 * (a pass, the start-up probe, a {@code /read} that reached the store) that ends with every request
 * it sent answered makes it ready again, if its last answer came after that failure. An answer that
 * is about an object rather than the store (404 for a key, 412, a checksum the server refused) says
 * the store works. {@code felix_store_ready} and {@code /health} show this, and
 * {@code felix_store_last_success_timestamp_seconds} when any request was last answered.
 *
 * <p>Readiness changes only by what requests found: with no work going on it keeps its last value,
 * which the timestamp then shows the age of.
 */
final class StoreHealth {

    private static final Logger LOG = LoggerFactory.getLogger(StoreHealth.class);

    /** What a unit of work's requests found. */
    static final class Unit {
        private volatile long lastAnswerNanos;
        private volatile boolean anyAnswer;
        private volatile boolean failed;

        void answered(long nanos) {
            lastAnswerNanos = nanos;
            anyAnswer = true;
        }

        void failed() {
            failed = true;
        }
    }

    private final String storeName;
    private volatile String problem = "not asked yet";
    private volatile long lastFailureNanos;
    private volatile boolean anyFailure;
    private volatile long lastAnswerNanos;
    private volatile long lastAnswerEpochMillis;

    /** @param storeName how log lines name the store */
    StoreHealth(String storeName) {
        this.storeName = storeName;
    }

    /**
     * Whether {@code e}, thrown by a store call, says the store cannot be used now rather than
     * something about one object.
     */
    static boolean unavailable(Throwable e) {
        if (e instanceof TransientStoreException || e instanceof ThrottledException
                || e instanceof AccessDeniedException || e instanceof StoreRejectedException) {
            return true;
        }
        return e instanceof ObjectNotFoundException nf && "NoSuchBucket".equals(nf.answer().errorCode());
    }

    /**
     * Whether {@code e}, thrown by a store call, is the server's answer about one object (404 for a
     * key, 412, a refused checksum, a range past the end): the server was reached and works.
     */
    static boolean answeredAboutAnObject(Throwable e) {
        return !unavailable(e) && (e instanceof ObjectNotFoundException || e instanceof PreconditionFailedException
                || e instanceof IntegrityRejectedException || e instanceof InvalidRangeException);
    }

    /** A request was answered. */
    void answered(long nanos) {
        lastAnswerNanos = nanos;
        lastAnswerEpochMillis = System.currentTimeMillis();
    }

    /** A request failed; only a failure that says the store cannot be used changes anything. */
    synchronized void failed(String operation, Throwable e, long nanos) {
        if (!unavailable(e)) {
            return;
        }
        lastFailureNanos = nanos;
        anyFailure = true;
        String now = DaemonMetrics.kindOf(e) + ": " + oneLine(e.getMessage()) + " (" + operation + ", "
                + Instant.now() + ")";
        if (problem == null) {
            LOG.warn("store not ready: {}: {}", storeName, now);
        }
        problem = now;
    }

    /** A read gave up waiting for the store at its deadline: as a failure of the store, now. */
    synchronized void timedOut(String why) {
        lastFailureNanos = System.nanoTime();
        anyFailure = true;
        String now = why + " (" + Instant.now() + ")";
        if (problem == null) {
            LOG.warn("store not ready: {}: {}", storeName, now);
        }
        problem = now;
    }

    /** The start-up probe could not begin or end: why, until a request says otherwise. */
    synchronized void notReady(String why) {
        if (problem == null) {
            LOG.warn("store not ready: {}: {}", storeName, why);
        }
        problem = why;
    }

    /** A unit of work ended; ready again if every request it sent was answered, the last after any failure. */
    synchronized void ended(Unit unit) {
        if (unit.failed || !unit.anyAnswer || (anyFailure && unit.lastAnswerNanos - lastFailureNanos <= 0)) {
            return;
        }
        if (problem != null && anyFailure) {
            LOG.info("store ready again: {} answers", storeName);
        }
        problem = null;
    }

    /**
     * A piece of work that may have reached the store (a /read) ended well: ready again if a request
     * was answered since {@code startNanos} and after the last failure.
     */
    void succeededSince(long startNanos) {
        long answered = lastAnswerNanos;
        if (lastAnswerEpochMillis != 0 && answered - startNanos > 0) {
            Unit u = new Unit();
            u.answered(answered);
            ended(u);
        }
    }

    /** Null when ready, else what the latest failure was. */
    String problem() {
        return problem;
    }

    boolean ready() {
        return problem == null;
    }

    /** When a request was last answered, milliseconds since the epoch; 0 before any. */
    long lastAnswerEpochMillis() {
        return lastAnswerEpochMillis;
    }

    /** {@link System#nanoTime()} of the last answer; meaningful once {@link #lastAnswerEpochMillis()} is not 0. */
    long lastAnswerNanos() {
        return lastAnswerNanos;
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replace('\n', ' ').replace('\r', ' ');
    }
}
