package dev.felix.offload.store.fs;

import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.zip.CRC32;

/** The file operations under the filesystem store: writing a body with its CRC32, fsyncs, attributes, errors named by file. */
final class StoreFiles {

    private StoreFiles() {
    }

    static long copyWithCrc(UploadBody body, Path temp) throws IOException {
        CRC32 crc = new CRC32();
        byte[] buffer = new byte[256 * 1024];
        try (InputStream in = body.open();
                FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                crc.update(buffer, 0, n);
                ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, n);
                try {
                    while (chunk.hasRemaining()) {
                        out.write(chunk);
                    }
                } catch (IOException e) {
                    throw naming(temp, e);
                }
            }
            try {
                out.force(true);
            } catch (IOException e) {
                throw naming(temp, e);
            }
        }
        return crc.getValue();
    }

    /**
     * {@code e} naming {@code file}: a failed write or fsync (a full disk) comes from the JDK as a bare
     * IOException whose message is only the cause, so the operator would not learn which filesystem.
     */
    static IOException naming(Path file, IOException e) {
        if (e instanceof java.nio.file.FileSystemException f && f.getFile() != null) {
            return e;
        }
        java.nio.file.FileSystemException named = new java.nio.file.FileSystemException(file.toString(), null,
                e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        named.initCause(e);
        return named;
    }

    /** The file and the cause for a file error, else the exception as Java prints it. */
    static String describe(IOException e) {
        if (e instanceof java.nio.file.FileSystemException f && f.getFile() != null && f.getReason() != null) {
            return f.getFile() + ": " + f.getReason();
        }
        return e.toString();
    }

    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    static String readAttribute(UserDefinedFileAttributeView view, String name) throws IOException {
        int size = view.size(name);
        if (size > 8192) {
            throw new IOException("extended attribute " + name + " is implausibly large: " + size);
        }
        ByteBuffer buffer = ByteBuffer.allocate(size);
        view.read(name, buffer);
        buffer.flip();
        return StandardCharsets.US_ASCII.decode(buffer).toString();
    }

    static boolean probeUserAttributes(Path staging) {
        Path probe = null;
        try {
            probe = Files.createTempFile(staging, "probe-", ".tmp");
            UserDefinedFileAttributeView view = Files.getFileAttributeView(probe, UserDefinedFileAttributeView.class);
            view.write("felix.probe", ByteBuffer.wrap(new byte[] {1}));
            return true;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        } finally {
            if (probe != null) {
                try {
                    Files.deleteIfExists(probe);
                } catch (IOException ignored) {
                    // stale probe is removed by a later open
                }
            }
        }
    }
}
