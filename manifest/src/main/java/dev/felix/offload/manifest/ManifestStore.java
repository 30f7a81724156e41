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
 * old manifest or the new one, never a mix. The temporary ({@value #TEMP_NAME}) is never read, and
 * the next save overwrites one a crash left behind. It is this tool's own: the broker writes the same
 * file through its own temporary, and two writers sharing one could each rename the other's bytes
 * into place, past every comparison.
 *
 * <p>Compare and replace: the broker may rewrite the file itself (a truncation drops the entries at
 * or after the cut, a reset drops them all, before it touches any segment). So a store remembers the
 * bytes it last read or wrote, and {@link #save} replaces the file only while it still holds exactly
 * those bytes: the comparison runs after the new manifest's temporary is written and fsynced,
 * immediately before the rename. When the file changed, nothing is written and
 * {@link ManifestChangedException} is thrown; {@link #reload()} then reads the broker's manifest.
 * {@link #checkUnchanged()} is the same comparison alone, for a caller about to act on what the
 * manifest says (unlinking a local segment whose copy it records).
 *
 * <p>What remains: the file is re-read and compared, and then renamed over (or the segment unlinked),
 * in two steps the file system does not join. A broker that replaces the manifest in the few system
 * calls between them is not seen, and its version is overwritten. Closing that window needs a lock
 * both processes take (the broker has none for this file today); the window is microseconds against
 * the seconds an upload takes, which is where the old blind save lost the broker's changes.
 *
 * <p>One store per shard directory and process; saves on one store are serialized.
 */
public final class ManifestStore {

    /** The temporary a save writes first, in the shard directory. */
    public static final String TEMP_NAME = "offload.manifest.felix-offload.tmp";

    /** The manifest's file name in a shard directory. */
    public static final String FILE_NAME = dev.felix.offload.log.DataRoot.OFFLOAD_MANIFEST;

    private final Path file;
    private final String shard;
    private final DurableFiles.StepListener steps;
    private Manifest current;
    /** The file's bytes as last read or written; null when there was no file. */
    private byte[] onDisk;
    /** Set when a reload met a file that does not decode: nothing may be saved over it. */
    private boolean undecodable;

    private ManifestStore(Path file, String shard, Manifest current, byte[] onDisk, DurableFiles.StepListener steps) {
        this.file = file;
        this.shard = shard;
        this.current = current;
        this.onDisk = onDisk;
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
        checkDirectory(shardDir);
        Path file = fileIn(shardDir);
        // The store decides what may be unlinked, so it decodes the bytes it read itself, always; the
        // decoding is left to the shared cache's readers when the file was the same before and after.
        ManifestCache.Identity before = ManifestCache.identityOf(shardDir);
        byte[] bytes = bytesOrNull(file);
        Manifest manifest = decode(bytes, shardName(shardDir));
        if (bytes != null) {
            ManifestCache.shared().offer(shardDir, before, bytes.length, manifest);
        }
        return new ManifestStore(file, shardName(shardDir), manifest, bytes, steps);
    }

    private static Manifest decode(byte[] bytes, String shard) throws CorruptionException {
        if (bytes != null) {
            DECODES.increment();
        }
        return bytes == null ? Manifest.empty()
                : ManifestCodec.decode(ByteBuffer.wrap(bytes), CorruptionSite.inFile(shard, FILE_NAME, 0));
    }

    private static byte[] bytesOrNull(Path file) throws IOException {
        try {
            return readWhole(file);
        } catch (NoSuchFileException absent) {
            return null;
        }
    }

    private static void checkDirectory(Path shardDir) throws IOException {
        if (!Files.isDirectory(shardDir)) {
            if (Files.exists(shardDir)) {
                throw new NotDirectoryException(shardDir.toString());
            }
            // A missing shard directory is a wrong path, not a shard without a manifest.
            throw new NoSuchFileException(shardDir.toString(), null, "no shard directory");
        }
    }

    /**
     * Reads the manifest of {@code shardDir} without opening a store: the empty manifest when there is
     * no file, for read-only tools.
     */
    public static Manifest read(Path shardDir) throws IOException, CorruptionException {
        checkDirectory(shardDir);
        Path file = fileIn(shardDir);
        byte[] bytes;
        try {
            bytes = readWhole(file);
        } catch (NoSuchFileException absent) {
            return Manifest.empty();
        }
        DECODES.increment();
        return ManifestCodec.decode(ByteBuffer.wrap(bytes), CorruptionSite.inFile(shardName(shardDir), FILE_NAME, 0));
    }

    /** Manifest files decoded by this process so far (by stores and by {@link #read}). */
    private static final java.util.concurrent.atomic.LongAdder DECODES = new java.util.concurrent.atomic.LongAdder();

    /**
     * How many manifest files this process has decoded so far: how tests and benchmarks see what a
     * pass or a scrape costs (a decoding is the whole file read and every entry checked).
     */
    public static long decodes() {
        return DECODES.sum();
    }

    /** The manifest file of a shard directory. */
    public static Path fileIn(Path shardDir) {
        return shardDir.resolve(FILE_NAME);
    }

    /** The manifest as last read or saved. */
    public synchronized Manifest manifest() {
        return current;
    }

    /** The temporary a save of {@code shardDir}'s manifest writes first. */
    public static Path tempFileIn(Path shardDir) {
        return shardDir.resolve(TEMP_NAME);
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
        save(next, () -> { });
    }

    /**
     * As {@link #save(Manifest)}, running {@code alsoCheck} with the comparison, immediately before the
     * rename: for what else must still hold for {@code next} to be true (the local segment an entry
     * records is still there, say). Whatever it throws ends the save with nothing written.
     */
    public synchronized void save(Manifest next, DurableFiles.BeforeMove alsoCheck) throws IOException {
        Objects.requireNonNull(next, "next");
        Objects.requireNonNull(alsoCheck, "alsoCheck");
        byte[] encoded = ManifestCodec.encode(next);
        DurableFiles.replace(file, file.resolveSibling(TEMP_NAME), encoded, DurableFiles.Sync.FULL, steps, () -> {
            alsoCheck.check();
            checkUnchangedSince("before the save");
        });
        current = next;
        onDisk = encoded;
    }

    /**
     * Throws {@link ManifestChangedException} when the file no longer holds the bytes this store last
     * read or wrote (another process replaced or removed it); returns quietly otherwise.
     */
    public synchronized void checkUnchanged() throws IOException {
        checkUnchangedSince("since it was loaded");
    }

    private void checkUnchangedSince(String when) throws IOException {
        byte[] now = bytesOrNull(file);
        if (undecodable || !java.util.Arrays.equals(now, onDisk)) {
            throw new ManifestChangedException(shard, file, when);
        }
    }

    /**
     * Reads the file again, dropping what this store held: after a {@link ManifestChangedException},
     * the manifest to take the shard up from.
     *
     * @throws CorruptionException when the file now present does not decode; the store keeps nothing
     *                             it could save over it then (every save fails the comparison)
     */
    public synchronized Manifest reload() throws IOException, CorruptionException {
        byte[] bytes = bytesOrNull(file);
        Manifest manifest;
        try {
            manifest = decode(bytes, shard);
        } catch (CorruptionException e) {
            undecodable = true; // so no save ever writes over a file that could not be read
            throw e;
        }
        current = manifest;
        onDisk = bytes;
        undecodable = false;
        return manifest;
    }

    private static String shardName(Path shardDir) {
        return dev.felix.offload.log.DataRoot.Shard.nameOf(shardDir);
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
