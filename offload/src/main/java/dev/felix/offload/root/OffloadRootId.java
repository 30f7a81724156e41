package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The identity a data root keeps for its whole life as an offloader, in its {@value #FILE_NAME}
 * file: 16 random bytes as 32 lower-case hex digits and a newline. The store's {@link NodeClaim}
 * names it, so two roots offloading under one node id are told apart.
 *
 * <p>It is deliberately not the broker's {@code storage-id}: the broker writes a new storage-id after
 * every unclean stop (acknowledged records may be lost), and a root must not lose its claim on its
 * own keys to a crash. The file name is undotted, like {@code node-id}, and a plain file, so it is
 * never read as a shard (shards are directories).
 */
public final class OffloadRootId {

    public static final String FILE_NAME = DataRoot.OFFLOAD_ROOT_ID;

    private OffloadRootId() {
    }

    /** The root's id, empty when it has none yet. */
    public static Optional<String> read(DataRoot root) throws IOException {
        Path file = root.identityFile(FILE_NAME);
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        }
        String id = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        if (!valid(id)) {
            throw new IOException(file + ": not an offload root id (expected 32 lower-case hex digits and a newline); "
                    + "it is this root's identity in the store's node claims: restore it from a backup of the root, "
                    + "or remove it and run with --take-over-node-id");
        }
        return Optional.of(id);
    }

    /**
     * The root's id, created (through {@link DurableFiles}, fsynced) when absent. Call it under the
     * root's {@link RootLock} so two processes never create two.
     */
    public static String readOrCreate(DataRoot root) throws IOException {
        Optional<String> existing = read(root);
        if (existing.isPresent()) {
            return existing.get();
        }
        return renew(root);
    }

    /**
     * Gives the root a new id (through {@link DurableFiles}, fsynced), whatever it had: a copy of a
     * root becoming a root of its own ({@code felix-offload reidentify}). Call it under the root's
     * {@link RootLock}.
     */
    public static String renew(DataRoot root) throws IOException {
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        String id = HexFormat.of().formatHex(random);
        DurableFiles.replace(root.identityFile(FILE_NAME), (id + "\n").getBytes(StandardCharsets.US_ASCII),
                DurableFiles.Sync.FULL);
        return id;
    }

    /** 32 lower-case hex digits. */
    public static boolean valid(String id) {
        if (id.length() != 32) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }
}
