package dev.felix.offload.root;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;

/**
 * The data root's journal of this node's own requests that could leave an object no manifest names:
 * an offload pass adds a segment's or index's key before it puts the object, retention and
 * {@code forget-shard} before they delete one. An object left unnamed by a crash or a failed request
 * is then always in the journal, so the orphan sweep's usual pass checks these keys alone instead of
 * listing the whole node prefix (a full listing still runs on a slow cadence, and whenever this file is
 * missing or damaged). Keys leave the journal under the root's lock, once a manifest names them, the
 * store does not hold them, or their delete is done.
 *
 * <p>Layout and torn tails: {@link PendingKeysFile}. Durability: the file is created whole through
 * {@link DurableFiles} (temporary, fsync, atomic move, fsync of the directory), so it exists before
 * its first record; each key is then appended and the file fsynced ({@link FileChannel#force}) before
 * the request it announces is sent. Only the last record can be torn by a crash, and its request never
 * began. Rewrites (keys leaving) go through {@link DurableFiles} again. Every writer holds the root's
 * {@link RootLock} (the offload pass and retention both do), and appends within this process are
 * serialised here, so an append and a rewrite never interleave.
 */
public final class PendingKeys {

    private PendingKeys() {
    }

    public static Path fileIn(Path root) {
        return root.resolve(PendingKeysFile.FILE_NAME);
    }

    /** Adds {@code key}, durably, before the request that may leave it unnamed. */
    public static void add(Path root, String key) throws IOException {
        append(root, PendingKeysFile.add(key));
    }

    /** Adds keys, durably, in one append. */
    public static void addAll(Path root, Collection<String> keys) throws IOException {
        if (keys.isEmpty()) {
            return;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (String key : keys) {
            out.writeBytes(PendingKeysFile.add(key));
        }
        append(root, out.toByteArray());
    }

    private static synchronized void append(Path root, byte[] record) throws IOException {
        Path file = fileIn(root);
        if (!Files.exists(file)) {
            DurableFiles.replace(file, PendingKeysFile.header(), DurableFiles.Sync.FULL);
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ByteBuffer buf = ByteBuffer.wrap(record);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(false);
        } catch (IOException e) {
            throw DurableFiles.naming(file, e);
        }
    }

    /**
     * The keys the journal holds; empty when there is no journal (never written, or lost), which the
     * sweep must take as "unknown", not as "nothing pending".
     *
     * @throws CorruptionException when the file is damaged (its path named)
     */
    public static synchronized Optional<Set<String>> read(Path root) throws IOException, CorruptionException {
        Path file = fileIn(root);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        } catch (IOException e) {
            throw DurableFiles.naming(file, e);
        }
        return Optional.of(PendingKeysFile.decode(bytes, file.toString()).keys());
    }

    /** Replaces the journal with exactly {@code keys} (a torn tail or a damaged file is dropped). */
    public static synchronized void rewrite(Path root, Collection<String> keys) throws IOException {
        DurableFiles.replace(fileIn(root), PendingKeysFile.encode(keys), DurableFiles.Sync.FULL);
    }

    /**
     * The data root of a shard directory, given the shard's name as {@link dev.felix.offload.log.DataRoot}
     * gives it ({@code <dir>}, or a container and {@code <dir>}).
     */
    public static Path rootOf(Path shardDir, String shard) {
        Path root = shardDir.toAbsolutePath();
        int depth = Path.of(shard).getNameCount();
        for (int i = 0; i < depth && root.getParent() != null; i++) {
            root = root.getParent();
        }
        return root;
    }
}
