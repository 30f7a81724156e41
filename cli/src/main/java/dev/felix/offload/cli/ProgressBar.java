package dev.felix.offload.cli;

import dev.felix.offload.tier.ProgressListener;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-line progress bar on a terminal: bytes uploaded of the pass's total, rate, ETA. Redrawn at
 * most five times a second; nothing is drawn when output is not a terminal.
 */
final class ProgressBar implements ProgressListener {

    private static final int WIDTH = 30;

    private final PrintWriter err;
    private final AtomicLong done = new AtomicLong();
    private volatile long total;
    private volatile long startNanos;
    private volatile long lastDraw;

    ProgressBar(PrintWriter err) {
        this.err = err;
    }

    @Override
    public void started(long totalBytes) {
        total = totalBytes;
        startNanos = System.nanoTime();
        draw(true);
    }

    @Override
    public void uploaded(long bytes) {
        done.addAndGet(bytes);
        draw(false);
    }

    @Override
    public void finished() {
        draw(true);
        synchronized (err) {
            err.println();
            err.flush();
        }
    }

    private void draw(boolean force) {
        long now = System.nanoTime();
        if (!force && now - lastDraw < 200_000_000L) {
            return;
        }
        lastDraw = now;
        long d = done.get();
        long t = Math.max(total, d);
        double fraction = t == 0 ? 1 : (double) d / t;
        int filled = (int) Math.round(fraction * WIDTH);
        double seconds = Math.max((now - startNanos) / 1e9, 1e-3);
        double rate = d / seconds;
        String eta = rate <= 0 || d >= t ? "-" : Math.round((t - d) / rate) + "s";
        String line = String.format("\r[%s%s] %3d%% %s of %s, %s/s, ETA %s ", "=".repeat(filled),
                " ".repeat(WIDTH - filled), Math.round(fraction * 100), Bytes.human(d), Bytes.human(t),
                Bytes.human((long) rate), eta);
        synchronized (err) {
            err.print(line);
            err.flush();
        }
    }
}
