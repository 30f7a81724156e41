package dev.felix.offload.store.remote;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.CRC32;

/**
 * A download in progress: bytes go to a temporary file beside the target, with their CRC32
 * computed on the way, and only {@link #commit()} moves the file into place (atomically), so a
 * failed or damaged download never touches the target.
 */
public final class DownloadTarget implements AutoCloseable {
    private final Path target;
    private final Path temp;
    private final CRC32 crc = new CRC32();
    private boolean committed;

    private DownloadTarget(Path target, Path temp) {
        this.target = target;
        this.temp = temp;
    }

    public static DownloadTarget beside(Path target) throws IOException {
        Path absolute = target.toAbsolutePath();
        Path temp = Files.createTempFile(absolute.getParent(), "." + absolute.getFileName(), ".part");
        return new DownloadTarget(absolute, temp);
    }

    /** Copies {@code in} to its end into the temporary file; returns the bytes copied. */
    public long copy(InputStream in) throws IOException {
        long total = 0;
        byte[] buffer = new byte[256 * 1024];
        try (OutputStream out = Files.newOutputStream(temp)) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                crc.update(buffer, 0, n);
                out.write(buffer, 0, n);
                total += n;
            }
        }
        return total;
    }

    public long crc32() {
        return crc.getValue();
    }

    public void commit() throws IOException {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        committed = true;
    }

    @Override
    public void close() {
        if (!committed) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // a dot-named leftover beside the target; harmless
            }
        }
    }
}
