package dev.felix.offload.log;

import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.ReplicaState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes a shard's commit offset to its {@code replica} file behind the advances that raise it, so no
 * acknowledgement waits on the file. Under {@link FsyncPolicy.OnCommit} a write starts at once, and a
 * write in flight carries every advance made while it runs (the next write takes them all); under
 * the other policies it is written at most once a second. A failed write is retried every second.
 * {@link #close()} writes whatever is still behind.
 *
 * <p>The generation is never written here: raising it is synchronous and durable (see
 * {@link ShardLog#acceptGeneration}); this writer takes the current generation from its owner.
 */
final class CommitWriter implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(CommitWriter.class);
    static final long MIN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The state to write, as its owner knows it now. */
    interface Source {
        ReplicaState current();
    }

    private final Path dir;
    private final Source source;
    private final boolean immediate;
    private final ScheduledExecutorService executor;
    private final Object lock = new Object();
    /** Held while the file is written, by this writer and by a generation raise. */
    final Object fileLock = new Object();
    private ReplicaState written;
    private boolean scheduled;
    private long lastWriteNanos;

    CommitWriter(Path dir, ReplicaState onDisk, Source source, boolean immediate) {
        this.dir = dir;
        this.written = onDisk;
        this.source = source;
        this.immediate = immediate;
        this.lastWriteNanos = System.nanoTime() - MIN_INTERVAL_NANOS;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "replica-commit-" + dir.getFileName());
            t.setDaemon(true);
            return t;
        });
    }

    /** The commit offset advanced: schedule a write as the policy allows. */
    void advanced() {
        synchronized (lock) {
            if (scheduled) {
                return; // the write already scheduled (or the one after the one in flight) takes this advance
            }
            scheduled = true;
            long delay = immediate ? 0 : Math.max(0, lastWriteNanos + MIN_INTERVAL_NANOS - System.nanoTime());
            executor.schedule(this::write, delay, TimeUnit.NANOSECONDS);
        }
    }

    private void write() {
        synchronized (lock) {
            scheduled = false;
        }
        try {
            // Under the file lock, so a generation raised meanwhile is never overwritten by an older state.
            synchronized (fileLock) {
                ReplicaState want = source.current();
                synchronized (lock) {
                    if (want.equals(written)) {
                        return;
                    }
                }
                ReplicaFile.FILE.save(dir, want);
                synchronized (lock) {
                    written = want;
                }
            }
            synchronized (lock) {
                lastWriteNanos = System.nanoTime();
                if (!source.current().equals(written)) {
                    advancedLocked(); // advances made while this write ran
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: writing the commit offset failed ({}); retrying in a second", DataRoot.Shard.nameOf(dir),
                    e.toString());
            synchronized (lock) {
                if (!scheduled) {
                    scheduled = true;
                    executor.schedule(this::write, 1, TimeUnit.SECONDS);
                }
            }
        }
    }

    private void advancedLocked() {
        if (!scheduled) {
            scheduled = true;
            long delay = immediate ? 0 : Math.max(0, lastWriteNanos + MIN_INTERVAL_NANOS - System.nanoTime());
            executor.schedule(this::write, delay, TimeUnit.NANOSECONDS);
        }
    }

    /** What is on disk, as far as this writer knows. */
    ReplicaState written() {
        synchronized (lock) {
            return written;
        }
    }

    /** Records a write made by the owner itself (a raised generation), so it is not written again. */
    void wroteItself(ReplicaState state) {
        synchronized (lock) {
            written = state;
        }
    }

    /** Stops the background writes and writes what is behind, synchronously. */
    @Override
    public void close() throws IOException {
        executor.shutdownNow();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (fileLock) {
            ReplicaState want = source.current();
            if (!want.equals(written())) {
                ReplicaFile.FILE.save(dir, want);
                wroteItself(want);
            }
        }
    }
}
