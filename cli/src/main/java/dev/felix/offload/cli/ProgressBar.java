package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.pass.ProgressListener;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-line progress bar on a terminal: bytes uploaded of the pass's total, rate, ETA. Redrawn at
 * most five times a second; nothing is drawn when output is not a terminal, nor when the pass has
 * nothing to upload. The line never reaches the terminal's last column (a line that wraps cannot be
 * redrawn with a carriage return and leaves copies behind): {@code COLUMNS} when the shell exports it,
 * else 80; the bar goes first when the line would not fit, then the line is cut.
 */
final class ProgressBar implements ProgressListener {

    private static final int WIDTH = 30;

    private final PrintWriter err;
    private final int columns;
    private final AtomicLong done = new AtomicLong();
    private volatile boolean silent;
    private volatile long total;
    private volatile long startNanos;
    private volatile long lastDraw;

    ProgressBar(PrintWriter err) {
        this(err, columns(System.getenv("COLUMNS")));
    }

    ProgressBar(PrintWriter err, int columns) {
        this.err = err;
        this.columns = Math.max(columns, 20);
    }

    static int columns(String env) {
        try {
            return env == null ? 80 : Integer.parseInt(env.trim());
        } catch (NumberFormatException e) {
            return 80;
        }
    }

    @Override
    public void started(long totalBytes) {
        total = totalBytes;
        startNanos = System.nanoTime();
        silent = totalBytes == 0; // nothing to do: no "100% 0 B of 0 B"
        draw(true);
    }

    @Override
    public void uploaded(long bytes) {
        done.addAndGet(bytes);
        draw(false);
    }

    @Override
    public void finished() {
        if (silent) {
            return;
        }
        draw(true);
        synchronized (err) {
            err.println();
            err.flush();
        }
    }

    private void draw(boolean force) {
        if (silent) {
            return;
        }
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
        String text = String.format("%3d%% %s of %s, %s/s, ETA %s", Math.round(fraction * 100), Bytes.human(d),
                Bytes.human(t), Bytes.human((long) rate), eta);
        String bar = "[" + "=".repeat(filled) + " ".repeat(WIDTH - filled) + "] ";
        int room = columns - 1;
        String line = bar.length() + text.length() <= room ? bar + text : text;
        if (line.length() > room) {
            line = line.substring(0, room);
        }
        // Padded to the room so a shorter line covers what the last one drew.
        line = line + " ".repeat(room - line.length());
        synchronized (err) {
            err.print("\r" + line);
            err.flush();
        }
    }
}
