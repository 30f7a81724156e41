package dev.felix.offload.daemon;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A start-up step that may wait (for the store to answer, say): quiet when it is quick, but once it
 * has taken {@link #FIRST_NOTICE} a line says what the daemon waits for, another every
 * {@link #REPEAT} while it goes on, and one when it ends, so a start-up that hangs is never silent.
 */
final class StartupWait implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StartupWait.class);
    static final Duration FIRST_NOTICE = Duration.ofSeconds(5);
    static final Duration REPEAT = Duration.ofSeconds(30);
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "startup-wait");
        t.setDaemon(true);
        return t;
    });

    private final String what;
    private final long startNanos = System.nanoTime();
    private final ScheduledFuture<?> notices;
    private volatile boolean noticed;

    /**
     * @param what   what is waited for, as in "waiting for WHAT"
     * @param detail what an operator should know meanwhile (bounds, what answers)
     */
    private StartupWait(String what, String detail) {
        this.what = what;
        this.notices = TIMER.scheduleAtFixedRate(() -> {
            noticed = true;
            LOG.info("waiting for {}: {} s so far; {}", what, elapsedSeconds(), detail);
        }, FIRST_NOTICE.toMillis(), REPEAT.toMillis(), TimeUnit.MILLISECONDS);
    }

    static StartupWait begin(String what, String detail) {
        return new StartupWait(what, detail);
    }

    private long elapsedSeconds() {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
    }

    /** Ends the wait with what came of it ("answered", "gave up: ..."), said only when the wait was noticed. */
    void ended(String outcome) {
        notices.cancel(false);
        if (noticed) {
            LOG.info("done waiting for {} after {} s: {}", what, elapsedSeconds(), outcome);
        }
    }

    @Override
    public void close() {
        notices.cancel(false);
    }
}
