package dev.felix.offload.log.side;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What this broker knows of one stream name, as its {@code .streams/} marker records it: which
 * incarnation of the stream it holds, whether a delete of it is unfinished, and through which
 * incarnation the control plane said the name is deleted. Incarnations are unsigned 64-bit values;
 * incarnation 0 is every stream from before incarnations, so "none" is kept apart from 0.
 *
 * @param tenant           the stream's tenant
 * @param namespace        the stream's namespace
 * @param stream           the stream's name
 * @param heldIncarnation  the incarnation whose directories this broker holds; empty when it holds none
 * @param deleteUnfinished true while a delete of the held incarnation has not finished (its directories
 *                         may still be waiting to move into {@code .deleted/})
 * @param deletedThrough   the highest incarnation the control plane said is deleted; empty when it
 *                         said none is
 */
public record StreamMarker(String tenant, String namespace, String stream, OptionalLong heldIncarnation,
                           boolean deleteUnfinished, OptionalLong deletedThrough) {

    /** The most characters of each name part a marker's file name keeps, as shard directory names do. */
    public static final int MAX_TENANT_CHARS = 48;
    public static final int MAX_NAMESPACE_CHARS = 48;
    public static final int MAX_STREAM_CHARS = 96;

    private static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    /**
     * @throws IllegalArgumentException when a name holds a line break or has no exact UTF-8 encoding
     */
    public StreamMarker {
        requireName(tenant, "tenant");
        requireName(namespace, "namespace");
        requireName(stream, "stream");
        Objects.requireNonNull(heldIncarnation, "heldIncarnation");
        Objects.requireNonNull(deletedThrough, "deletedThrough");
    }

    private static void requireName(String name, String what) {
        Objects.requireNonNull(name, what);
        if (name.indexOf('\n') >= 0 || name.indexOf('\r') >= 0) {
            throw new IllegalArgumentException(what + " may not hold a line break");
        }
        SideFiles.utf8Exact(name, what);
    }

    /** This marker's file name under {@code .streams/}. */
    public String fileName() {
        return fileName(tenant, namespace, stream);
    }

    /**
     * The file name of a stream's marker: {@code <readable>-<hash>}, where the readable part is tenant,
     * namespace and stream joined by {@code _}, each cut to 48, 48 and 96 characters with every
     * character outside {@code [A-Za-z0-9-]} replaced by {@code _}, and the hash is the FNV-1a 64-bit
     * hash of the three names, each as a u64 big-endian byte length and its UTF-8 bytes, in 16
     * lowercase hex digits. These are the rules of shard directory names without the shard number,
     * so the name holds no dot and is unique by its hash.
     */
    public static String fileName(String tenant, String namespace, String stream) {
        long h = FNV_OFFSET_BASIS;
        for (String part : new String[] {tenant, namespace, stream}) {
            byte[] utf8 = part.getBytes(StandardCharsets.UTF_8);
            for (byte b : ByteBuffer.allocate(Long.BYTES).putLong(0, utf8.length).array()) {
                h = (h ^ (b & 0xff)) * FNV_PRIME;
            }
            for (byte b : utf8) {
                h = (h ^ (b & 0xff)) * FNV_PRIME;
            }
        }
        return readable(tenant, MAX_TENANT_CHARS) + '_' + readable(namespace, MAX_NAMESPACE_CHARS) + '_'
                + readable(stream, MAX_STREAM_CHARS) + '-' + String.format("%016x", h);
    }

    private static String readable(String part, int maxChars) {
        StringBuilder out = new StringBuilder(Math.min(part.length(), maxChars));
        part.codePoints().limit(maxChars).forEach(cp -> {
            boolean keep = (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '-';
            out.append(keep ? (char) cp : '_');
        });
        return out.toString();
    }

    /**
     * True when {@code fileName} has the shape of a marker's file name: characters of
     * {@code [A-Za-z0-9_-]}, ending in {@code -} and 16 lowercase hex digits. Anything else under
     * {@code .streams/} (a temporary, a stray file) is not a marker.
     */
    public static boolean isMarkerName(String fileName) {
        return MARKER_NAME.matcher(fileName).matches();
    }

    private static final java.util.regex.Pattern MARKER_NAME =
            java.util.regex.Pattern.compile("[A-Za-z0-9_-]*-[0-9a-f]{16}");

    /** True when this marker names the stream {@code tenant}/{@code namespace}/{@code stream}. */
    public boolean names(String otherTenant, String otherNamespace, String otherStream) {
        return tenant.equals(otherTenant) && namespace.equals(otherNamespace) && stream.equals(otherStream);
    }
}
