package dev.felix.offload.root;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a data root, so that two offloaders never work over one root. It is an OS
 * file lock on {@value #FILE_NAME} in the root (released by the OS if the process dies), and the file
 * holds the holder's pid so a refused process can name it.
 */
public final class RootLock implements Closeable {

    public static final String FILE_NAME = "offload.lock";
    /** Held by a daemon ({@code run}) for its whole life, so two daemons never schedule passes over one root. */
    public static final String DAEMON_FILE_NAME = "daemon.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private RootLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Another process (or another pass in this one) holds the lock. */
    public static final class HeldException extends IOException {
        private static final long serialVersionUID = 1L;

        HeldException(String message) {
            super(message);
        }
    }

    /** Takes the lock or fails at once with {@link HeldException} naming the holder's pid when known. */
    public static RootLock acquire(Path root) throws IOException {
        return acquire(root, FILE_NAME, "another offloader");
    }

    /** The daemon's lock ({@value #DAEMON_FILE_NAME}), taken the same way. */
    public static RootLock acquireForDaemon(Path root) throws IOException {
        return acquire(root, DAEMON_FILE_NAME, "another daemon");
    }

    private static RootLock acquire(Path root, String fileName, String holderKind) throws IOException {
        Path file = root.resolve(fileName);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                String holder = readHolder(ch);
                ch.close();
                throw new HeldException(holderKind + " holds " + file
                        + (holder.isEmpty() ? "" : " (pid " + holder + ")") + "; only one may run over a data root");
            }
            byte[] pid = Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.US_ASCII);
            try {
                ch.truncate(0);
                ch.write(ByteBuffer.wrap(pid), 0);
            } catch (IOException e) {
                throw dev.felix.offload.log.DurableFiles.naming(file, e);
            }
            return new RootLock(ch, lock);
        } catch (IOException | RuntimeException e) {
            if (ch.isOpen()) {
                ch.close();
            }
            throw e;
        }
    }

    private static String readHolder(FileChannel ch) {
        try {
            ByteBuffer buf = ByteBuffer.allocate(32);
            ch.read(buf, 0);
            String text = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
            return text.matches("\\d{1,19}") ? text : "";
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws IOException {
        try (channel) {
            lock.release();
        }
    }
}
