package dev.felix.offload.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
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
 */
public final class DurableFiles {

    /** How hard a replace pushes the bytes to the device. */
    public enum Sync {
        /** fsync the temporary before the move and the directory after it. */
        FULL,
        /** Temporary and atomic move only: whole or absent after a crash, not necessarily the newest. */
        NONE
    }

    /** Suffix of the temporary a replace writes first. */
    public static final String TEMP_SUFFIX = ".tmp";

    private DurableFiles() {
    }

    /** Replaces {@code target} with {@code content} through a temporary and an atomic move. */
    public static void replace(Path target, byte[] content, Sync sync) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Path temp = dir.resolve(target.getFileName() + TEMP_SUFFIX);
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            if (sync == Sync.FULL) {
                ch.force(true);
            }
        }
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(temp);
            throw new IOException("the filesystem of " + dir + " cannot rename atomically; refusing to replace "
                    + target + " in place", e);
        }
        if (sync == Sync.FULL) {
            fsyncDirectory(dir);
        }
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
            throw e;
        }
    }
}
