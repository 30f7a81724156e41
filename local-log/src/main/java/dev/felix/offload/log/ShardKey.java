package dev.felix.offload.log;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Identifies one stream shard: tenant, namespace, stream and shard number, plus the stream's
 * incarnation (0 for every stream created before incarnations existed).
 *
 * <p>Its directory name is {@code <readable>-<hash>} and, for a non-zero incarnation,
 * {@code -<incarnation>}: the readable part is the four components joined by {@code _}, with every
 * character outside {@code [A-Za-z0-9-]} replaced by {@code _} and each text component cut to at
 * most {@link #MAX_TENANT_CHARS}, {@link #MAX_NAMESPACE_CHARS} and {@link #MAX_STREAM_CHARS}
 * characters; the hash is the FNV-1a 64-bit hash of {@link #keyBytes()} as 16 lowercase hex digits;
 * the incarnation is 16 hex digits. The readable part is lossy, the hash is what makes names unique.
 * A name is at most 48 + 48 + 96 + 10 + 3 + 17 + 17 = 239 ASCII bytes, within every filesystem's 255,
 * and holds no dot, so no component can ever spell {@code ..}.
 *
 * @param tenant      the tenant
 * @param namespace   the namespace
 * @param stream      the stream
 * @param shard       the shard number, an unsigned 32-bit value
 * @param incarnation the stream's incarnation, 0 for none
 */
public record ShardKey(String tenant, String namespace, String stream, int shard, long incarnation) {

    public static final int MAX_TENANT_CHARS = 48;
    public static final int MAX_NAMESPACE_CHARS = 48;
    public static final int MAX_STREAM_CHARS = 96;

    private static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    public ShardKey {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(stream, "stream");
    }

    /** A shard of a stream without incarnation. */
    public ShardKey(String tenant, String namespace, String stream, int shard) {
        this(tenant, namespace, stream, shard, 0);
    }

    /**
     * The exact bytes hashed: tenant, namespace and stream each as a u64 big-endian byte length and
     * its UTF-8 bytes, then the shard as a u32 big-endian.
     */
    public byte[] keyBytes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String part : new String[] {tenant, namespace, stream}) {
            byte[] utf8 = part.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(ByteBuffer.allocate(Long.BYTES).putLong(0, utf8.length).array());
            out.writeBytes(utf8);
        }
        out.writeBytes(ByteBuffer.allocate(Integer.BYTES).putInt(0, shard).array());
        return out.toByteArray();
    }

    /** FNV-1a, 64 bits, of {@link #keyBytes()}. */
    public long hash() {
        long h = FNV_OFFSET_BASIS;
        for (byte b : keyBytes()) {
            h ^= b & 0xff;
            h *= FNV_PRIME;
        }
        return h;
    }

    /** The shard's directory name under the data root. */
    public String directoryName() {
        StringBuilder name = new StringBuilder()
                .append(readable(tenant, MAX_TENANT_CHARS)).append('_')
                .append(readable(namespace, MAX_NAMESPACE_CHARS)).append('_')
                .append(readable(stream, MAX_STREAM_CHARS)).append('_')
                .append(Integer.toUnsignedString(shard))
                .append('-').append(String.format("%016x", hash()));
        if (incarnation != 0) {
            name.append('-').append(String.format("%016x", incarnation));
        }
        return name.toString();
    }

    private static String readable(String component, int maxChars) {
        StringBuilder out = new StringBuilder(Math.min(component.length(), maxChars));
        component.codePoints().limit(maxChars).forEach(cp -> {
            boolean keep = (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '-';
            out.append(keep ? (char) cp : '_');
        });
        return out.toString();
    }
}
