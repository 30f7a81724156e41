package dev.felix.offload.store.remote;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.OptionalLong;

/** The text form S3 gives a CRC32: base64 of its four big-endian bytes. */
public final class Crc32Text {
    private Crc32Text() {}

    public static String toBase64(long crc32) {
        return Base64.getEncoder().encodeToString(ByteBuffer.allocate(4).putInt((int) crc32).array());
    }

    /**
     * The CRC32 in {@code text}; empty for null, for a multipart composite ({@code xxxx==-N}, a CRC
     * of part CRCs, not of the object) and for anything that is not four base64-encoded bytes.
     */
    public static OptionalLong fromBase64(String text) {
        if (text == null || text.isEmpty() || text.contains("-") || text.length() > 12) {
            return OptionalLong.empty();
        }
        try {
            byte[] bytes = Base64.getDecoder().decode(text);
            if (bytes.length != 4) {
                return OptionalLong.empty();
            }
            return OptionalLong.of(ByteBuffer.wrap(bytes).getInt() & 0xFFFF_FFFFL);
        } catch (IllegalArgumentException e) {
            return OptionalLong.empty();
        }
    }
}
