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
import java.util.Map;

/**
 * The id offloaded keys start with, so that replicas of one shard on different brokers never write
 * the same key when they share a store. It comes from {@value #ENV} when set, else from the
 * {@code node-id} file of the data root, which the first offload creates with a random id. The file
 * holds the id as UTF-8 text and a newline.
 */
public final class NodeId {

    /** The environment variable that overrides the file. */
    public static final String ENV = "FELIX_NODE_ID";
    /** Longest id accepted, in bytes of UTF-8. */
    public static final int MAX_BYTES = 128;

    private NodeId() {
    }

    /** A node id that cannot be used, naming where it came from. */
    public static final class InvalidNodeIdException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        InvalidNodeIdException(String message) {
            super(message);
        }
    }

    /**
     * The node id for {@code root}: {@value #ENV} from {@code env} when set, else the root's
     * {@code node-id} file, created (through a temporary and an atomic move, fsynced) with a random
     * id when absent. Call it under the root's {@link RootLock} so two processes never both create it.
     */
    public static String resolve(DataRoot root, Map<String, String> env) throws IOException {
        String fromEnv = env.get(ENV);
        if (fromEnv != null) {
            return validate(fromEnv, "environment variable " + ENV);
        }
        Path file = root.identityFile(DataRoot.NODE_ID);
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            return validate(text.endsWith("\n") ? text.substring(0, text.length() - 1) : text, file.toString());
        } catch (NoSuchFileException absent) {
            byte[] random = new byte[8];
            new SecureRandom().nextBytes(random);
            String id = "node-" + HexFormat.of().formatHex(random);
            DurableFiles.replace(file, (id + "\n").getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
            return id;
        }
    }

    /** A fresh random id, as the first offload of a root creates one. */
    public static String random() {
        byte[] random = new byte[8];
        new SecureRandom().nextBytes(random);
        return "node-" + HexFormat.of().formatHex(random);
    }

    /** Makes {@code id} the root's node id file (durably, through {@link DurableFiles}). */
    public static void write(DataRoot root, String id) throws IOException {
        DurableFiles.replace(root.identityFile(DataRoot.NODE_ID),
                (validate(id, "the node id") + "\n").getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
    }

    /**
     * Checks an id: not empty, at most {@value #MAX_BYTES} bytes, no {@code /}, no whitespace, no
     * control characters, and not {@code .} or {@code ..} (it is a path segment of every key).
     */
    public static String validate(String id, String source) {
        if (id.isEmpty()) {
            throw new InvalidNodeIdException("node id from " + source + " is empty");
        }
        if (id.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new InvalidNodeIdException("node id from " + source + " is longer than " + MAX_BYTES + " bytes");
        }
        if (id.equals(".") || id.equals("..")) {
            throw new InvalidNodeIdException("node id from " + source + " may not be '" + id + "'");
        }
        for (int i = 0; i < id.length(); ) {
            int cp = id.codePointAt(i);
            if (cp == '/' || cp == '\\' || Character.isWhitespace(cp) || Character.isSpaceChar(cp)
                    || Character.isISOControl(cp) || Character.getType(cp) == Character.FORMAT) {
                throw new InvalidNodeIdException(String.format("node id from %s holds a forbidden character U+%04X "
                        + "at index %d ('/', '\\', whitespace and control characters are not allowed)", source, cp, i));
            }
            i += Character.charCount(cp);
        }
        return id;
    }
}
