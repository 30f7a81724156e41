package dev.felix.offload.pass;

import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The uploads of one offload pass that are under way, over all its shards: a bound on their bytes
 * ({@link OffloadSettings#maxBytesInFlight()}) and on their number, and the threads they run on.
 *
 * <p>A shard {@linkplain #reserve reserves} a segment's bytes before its upload begins and the
 * upload gives them back when it is over (verified or failed). Reservations are granted strictly in
 * the order they were asked for, so a large segment waiting for the bytes to drain is not passed
 * over forever by small ones. A segment larger than the whole bound asks for the whole bound: it
 * runs once nothing else does, and nothing else runs beside it.
 *
 * <p>The bytes are file-backed request bodies, not buffers, so the bound is about how much disk and
 * network work is under way at once; the count bound keeps the uploads within the store client's
 * connection pool.
 */
final class InFlightUploads implements AutoCloseable {

    /**
     * Segment uploads at once, at most. The S3 client keeps 24 connections by default (and the
     * store's multipart parts go through its own few threads); beyond this many segments at once
     * uploads would only queue for a connection, and time out there.
     */
    static final int MAX_UPLOADS = 8;

    private final long maxBytes;
    private final int maxUploads;
    private final ExecutorService threads;
    private final Deque<Reservation> waiting = new ArrayDeque<>();
    private long bytesInFlight;
    private int uploadsInFlight;

    InFlightUploads(long maxBytes, int maxUploads) {
        if (maxBytes < 1 || maxUploads < 1) {
            throw new IllegalArgumentException("bounds must be positive: " + maxBytes + " bytes, " + maxUploads + " uploads");
        }
        this.maxBytes = maxBytes;
        this.maxUploads = maxUploads;
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "offload-upload");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * For a pass with these settings. Under a bandwidth limit the bound is at most one second of
     * it: uploads beside each other then share the limit and end no sooner, while each entry is
     * recorded later and a stop waits longer for the uploads under way.
     */
    static InFlightUploads of(OffloadSettings settings) {
        return new InFlightUploads(bound(settings), MAX_UPLOADS);
    }

    /** The bytes in flight a pass with these settings allows. */
    static long bound(OffloadSettings settings) {
        long limit = settings.uploadBytesPerSecond();
        return limit > 0 ? Math.min(settings.maxBytesInFlight(), limit) : settings.maxBytesInFlight();
    }

    /** Asks for {@code bytes} (at most the whole bound) and one upload's place; granted in turn. */
    synchronized Reservation reserve(long bytes) {
        Reservation r = new Reservation(Math.max(0, Math.min(bytes, maxBytes)));
        waiting.addLast(r);
        grant();
        return r;
    }

    /** Bytes granted and not yet given back. */
    synchronized long bytesInFlight() {
        return bytesInFlight;
    }

    private void grant() {
        boolean any = false;
        while (!waiting.isEmpty()) {
            Reservation head = waiting.peekFirst();
            if (uploadsInFlight >= maxUploads || (uploadsInFlight > 0 && bytesInFlight + head.bytes > maxBytes)) {
                break;
            }
            waiting.pollFirst();
            head.granted = true;
            bytesInFlight += head.bytes;
            uploadsInFlight++;
            any = true;
        }
        if (any) {
            notifyAll();
        }
    }

    @Override
    public void close() {
        threads.shutdown();
    }

    /** One segment's claim on the bound. */
    final class Reservation {
        private final long bytes;
        private boolean granted;
        private boolean done;

        private Reservation(long bytes) {
            this.bytes = bytes;
        }

        /**
         * Waits until this reservation is granted (true) or {@code wake} answers true (false; the
         * reservation stays in its place). {@code wake} is asked under this object's lock, so what it
         * reads must be set before a {@link #release}, which wakes the waiters.
         */
        boolean awaitOr(BooleanSupplier wake) throws InterruptedIOException {
            synchronized (InFlightUploads.this) {
                while (!granted) {
                    if (wake.getAsBoolean()) {
                        return false;
                    }
                    try {
                        InFlightUploads.this.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        InterruptedIOException io = new InterruptedIOException("offload pass interrupted while waiting "
                                + "for bytes in flight");
                        io.initCause(e);
                        throw io;
                    }
                }
                return true;
            }
        }

        /**
         * Runs {@code upload} on the pass's upload threads; the reservation is released when it ends,
         * or at once when the pass no longer takes uploads (then this throws).
         */
        void run(Runnable upload) {
            try {
                threads.execute(() -> {
                    try {
                        upload.run();
                    } finally {
                        release();
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                release();
                throw closed;
            }
        }

        /** Gives the bytes back (once), or leaves the queue when not granted yet. */
        void release() {
            synchronized (InFlightUploads.this) {
                if (done) {
                    return;
                }
                done = true;
                if (granted) {
                    bytesInFlight -= bytes;
                    uploadsInFlight--;
                } else {
                    waiting.remove(this);
                }
                grant();
                // Waiters also wait for uploads to end (see awaitOr): wake them even when nothing was granted.
                InFlightUploads.this.notifyAll();
            }
        }
    }

    /**
     * Waits until {@code condition} holds; it is asked under this object's lock and again each time
     * an upload ends, so it must only turn true when an upload ends. With {@code interruptible}
     * false an interrupt is kept for later and the wait goes on (used to let uploads finish before
     * a shard returns, so none of its uploads runs on behind its result).
     */
    void awaitUntil(BooleanSupplier condition, boolean interruptible) throws InterruptedIOException {
        boolean interrupted = false;
        try {
            synchronized (this) {
                while (!condition.getAsBoolean()) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        if (interruptible) {
                            Thread.currentThread().interrupt();
                            InterruptedIOException io = new InterruptedIOException("offload pass interrupted while "
                                    + "waiting for uploads");
                            io.initCause(e);
                            throw io;
                        }
                        interrupted = true;
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
