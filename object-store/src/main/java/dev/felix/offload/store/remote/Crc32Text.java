package dev.felix.offload.store.remote;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Optional;
import java.util.OptionalLong;

/** The text form S3 gives a CRC32: base64 of its four big-endian bytes. */
public final class Crc32Text {
    private Crc32Text() {}

    /**
     * A multipart object's composite checksum as S3 gives it ({@code xxxx==-N}): the CRC32 of its N
     * part CRC32s laid end to end (each as four big-endian bytes). Not the CRC32 of the object.
     */
    public record Composite(long crc32OfPartCrcs, int parts) {}

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

    /** The composite checksum in {@code text}; empty for anything else, a plain CRC32 included. */
    public static Optional<Composite> compositeFromBase64(String text) {
        if (text == null) {
            return Optional.empty();
        }
        int dash = text.lastIndexOf('-');
        if (dash <= 0 || dash == text.length() - 1 || dash < text.length() - 6) {
            return Optional.empty();
        }
        String count = text.substring(dash + 1);
        if (!count.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        int parts = Integer.parseInt(count);
        OptionalLong crc = fromBase64(text.substring(0, dash));
        if (parts < 1 || crc.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Composite(crc.getAsLong(), parts));
    }
}
