package dev.felix.offload.manifest;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * A shard's {@code offload.manifest} on disk, and the one way to replace it.
 *
 * <p>The file is authoritative: once a segment's local file is gone, its entry is the only record
 * that its records still exist. So an absent file reads as the empty manifest, and a present one that
 * does not decode fails the open with the {@link CorruptionException}. A store only comes to exist
 * through {@link #open}, which reads the file first; a file that could not be read therefore never
 * has a store that could overwrite it, and nothing here ever deletes it.
 *
 * <p>{@link #save} replaces the file through {@link DurableFiles}: a temporary in the shard directory,
 * fsynced, moved atomically over the manifest, the directory fsynced. A crash at any point leaves the
 * old manifest or the new one, never a mix. The temporary ({@code offload.manifest.tmp}) is never read,
 * and the next save overwrites one a crash left behind.
 *
 * <p>One store per shard directory and process; saves on one store are serialized.
 */
public final class ManifestStore {

    /** The manifest's file name in a shard directory. */
    public static final String FILE_NAME = dev.felix.offload.log.DataRoot.OFFLOAD_MANIFEST;

    private final Path file;
    private final String shard;
    private final DurableFiles.StepListener steps;
    private Manifest current;

    private ManifestStore(Path file, String shard, Manifest current, DurableFiles.StepListener steps) {
        this.file = file;
        this.shard = shard;
        this.current = current;
        this.steps = steps;
    }

    /**
     * Opens the manifest of the shard directory {@code shardDir}: reads it, or starts from the empty
     * manifest when there is no file.
     *
     * @throws CorruptionException when the file is present and does not decode; the file is left as it is
     * @throws IOException         when the directory is missing or the file cannot be read
     */
    public static ManifestStore open(Path shardDir) throws IOException, CorruptionException {
        return open(shardDir, (step) -> { });
    }

    /** As {@link #open(Path)}, with every save reporting its steps to {@code steps}; for crash tests. */
    static ManifestStore open(Path shardDir, DurableFiles.StepListener steps) throws IOException, CorruptionException {
        Objects.requireNonNull(steps, "steps");
        Manifest manifest = read(shardDir);
        return new ManifestStore(fileIn(shardDir), shardName(shardDir), manifest, steps);
    }

    /**
     * Reads the manifest of {@code shardDir} without opening a store: the empty manifest when there is
     * no file, for read-only tools.
     */
    public static Manifest read(Path shardDir) throws IOException, CorruptionException {
        if (!Files.isDirectory(shardDir)) {
            if (Files.exists(shardDir)) {
                throw new NotDirectoryException(shardDir.toString());
            }
            // A missing shard directory is a wrong path, not a shard without a manifest.
            throw new NoSuchFileException(shardDir.toString(), null, "no shard directory");
        }
        Path file = fileIn(shardDir);
        byte[] bytes;
        try {
            bytes = readWhole(file);
        } catch (NoSuchFileException absent) {
            return Manifest.empty();
        }
        return ManifestCodec.decode(ByteBuffer.wrap(bytes), CorruptionSite.inFile(shardName(shardDir), FILE_NAME, 0));
    }

    /** The manifest file of a shard directory. */
    public static Path fileIn(Path shardDir) {
        return shardDir.resolve(FILE_NAME);
    }

    /** The manifest as last read or saved. */
    public synchronized Manifest manifest() {
        return current;
    }

    /** The file this store replaces. */
    public Path file() {
        return file;
    }

    /** The shard directory's name, as corruption sites name it. */
    public String shard() {
        return shard;
    }

    /**
     * Makes {@code next} the manifest on disk, durably, before returning. When this throws, the file
     * holds the old manifest or the new one, whole, and {@link #manifest()} still answers the old one;
     * the next save writes its manifest whole again.
     */
    public synchronized void save(Manifest next) throws IOException {
        Objects.requireNonNull(next, "next");
        DurableFiles.replace(file, ManifestCodec.encode(next), DurableFiles.Sync.FULL, steps);
        current = next;
    }

    private static String shardName(Path shardDir) {
        Path name = shardDir.toAbsolutePath().normalize().getFileName();
        return name == null ? shardDir.toString() : name.toString();
    }

    /**
     * The file's bytes. Its size comes from the file system, not from bytes in it; a file too big for
     * one array is refused rather than half read.
     */
    private static byte[] readWhole(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE - 8) {
                throw new IOException(file + " is " + size + " bytes, more than this reader loads in one piece");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining()) {
                if (ch.read(buf) < 0) {
                    break; // shorter than its size said: decode reports what is missing
                }
            }
            return buf.position() == buf.capacity() ? buf.array() : java.util.Arrays.copyOf(buf.array(), buf.position());
        }
    }
}
