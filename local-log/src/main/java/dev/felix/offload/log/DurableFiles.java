package dev.felix.offload.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The one way this project replaces a file that must survive a crash whole: write a temporary in
 * the same directory, fsync it, move it atomically over the target, fsync the directory. A crash
 * at any point leaves the old file or the new one, never a mix. A temporary left by a crash is
 * named {@code <target>.tmp}, is never read, and is overwritten by the next replace.
 *
 * <p>Derived files (indexes, the producer snapshot) may skip the fsyncs with {@link Sync#NONE}: the
 * rename still keeps them whole, and one lost to a crash is rebuilt.
 *
 * <p>A {@link StepListener} hears of each {@link Step} as it completes. It exists so that tests of
 * a file kept through this class can stop a replace after any step, as a crash would, and check
 * what a reader sees then; production code passes none.
 */
public final class DurableFiles {

    /** How hard a replace pushes the bytes to the device. */
    public enum Sync {
        /** fsync the temporary before the move and the directory after it. */
        FULL,
        /** Temporary and atomic move only: whole or absent after a crash, not necessarily the newest. */
        NONE
    }

    /** The steps of a replace, in the order they happen. */
    public enum Step {
        /** Every byte is written to the temporary (not yet necessarily on the device). */
        TEMP_WRITTEN,
        /** The temporary is fsynced; only with {@link Sync#FULL}. */
        TEMP_SYNCED,
        /** The temporary has been renamed over the target. */
        MOVED,
        /** The directory is fsynced, so the rename is durable; only with {@link Sync#FULL}. */
        DIRECTORY_SYNCED
    }

    /** Hears of each step of a replace once it completed; an exception it throws ends the replace there. */
    @FunctionalInterface
    public interface StepListener {
        void completed(Step step) throws IOException;
    }

    /**
     * A last check before the move of a replace, for a file another process may replace too: it runs
     * once the temporary is written (and fsynced), immediately before the rename, so that what it
     * checks is as fresh as it can be; whatever it throws ends the replace with the target untouched
     * and the temporary removed.
     */
    @FunctionalInterface
    public interface BeforeMove {
        void check() throws IOException;
    }

    /** Suffix of the temporary a replace writes first. */
    public static final String TEMP_SUFFIX = ".tmp";

    private static final StepListener NO_LISTENER = step -> { };

    private DurableFiles() {
    }

    /** Replaces {@code target} with {@code content} through a temporary and an atomic move. */
    public static void replace(Path target, byte[] content, Sync sync) throws IOException {
        replace(target, content, sync, NO_LISTENER);
    }

    /**
     * As {@link #replace(Path, byte[], Sync)}, telling {@code listener} of each step once it completed.
     * Whatever the listener throws is thrown from here with nothing undone: a temporary already
     * written stays, as it would after a crash.
     */
    public static void replace(Path target, byte[] content, Sync sync, StepListener listener) throws IOException {
        replace(target, content, sync, listener, () -> { });
    }

    /**
     * As {@link #replace(Path, byte[], Sync, StepListener)}, running {@code beforeMove} between the
     * temporary's fsync and the rename; when it throws, the temporary is deleted, the target is left as
     * it is, and the exception is thrown from here.
     */
    public static void replace(Path target, byte[] content, Sync sync, StepListener listener, BeforeMove beforeMove)
            throws IOException {
        replace(target, tempFor(target), content, sync, listener, beforeMove);
    }

    /**
     * As above, through the temporary {@code temp} (in the target's directory) instead of
     * {@code <target>.tmp}: for a file another process replaces too, so that neither ever renames the
     * other's half-written temporary into place.
     */
    public static void replace(Path target, Path temp, byte[] content, Sync sync, StepListener listener,
                               BeforeMove beforeMove) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        if (!dir.equals(temp.toAbsolutePath().getParent())) {
            throw new IllegalArgumentException("the temporary " + temp + " must be in the directory of " + target);
        }
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            try {
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            } catch (IOException e) {
                throw naming(temp, e);
            }
            listener.completed(Step.TEMP_WRITTEN);
            if (sync == Sync.FULL) {
                try {
                    ch.force(true);
                } catch (IOException e) {
                    throw naming(temp, e);
                }
                listener.completed(Step.TEMP_SYNCED);
            }
        }
        try {
            beforeMove.check();
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(temp);
            throw new IOException("the filesystem of " + dir + " cannot rename atomically; refusing to replace "
                    + target + " in place", e);
        }
        listener.completed(Step.MOVED);
        if (sync == Sync.FULL) {
            fsyncDirectory(dir);
            listener.completed(Step.DIRECTORY_SYNCED);
        }
    }

    /** The temporary a replace of {@code target} writes first: {@code <target>.tmp} in the same directory. */
    public static Path tempFor(Path target) {
        return target.toAbsolutePath().getParent().resolve(target.getFileName() + TEMP_SUFFIX);
    }

    /**
     * Makes a directory's entries (creations, renames, unlinks) durable. Some platforms cannot open
     * a directory for sync; there the rename's durability rests on the filesystem.
     */
    public static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            if (System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("windows")) {
                return; // Windows cannot open a directory as a channel.
            }
            throw naming(dir, e);
        }
    }

    /**
     * {@code e} as a {@link FileSystemException} naming {@code file}, its cause kept. A write or an
     * fsync that fails (ENOSPC, EIO, EDQUOT) surfaces from the JDK as a bare {@link IOException}
     * whose message is the cause alone ("No space left on device"), leaving an operator to guess which
     * file, hence which filesystem, it was. An exception that already names a file is returned as it is.
     */
    public static IOException naming(Path file, IOException e) {
        if (e instanceof FileSystemException f && f.getFile() != null) {
            return e;
        }
        String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        FileSystemException named = new FileSystemException(file.toString(), null, reason);
        named.initCause(e);
        return named;
    }
}
