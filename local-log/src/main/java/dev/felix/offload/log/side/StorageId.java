package dev.felix.offload.log.side;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A data directory's identity: 16 random bytes, held as two big-endian halves so that equality is
 * value equality. A new one is made the first time a directory is opened, and again whenever a crash
 * may have lost acknowledged records or the directory turns out older than the node's registration.
 *
 * @param high bytes 0..8 of the id, big-endian
 * @param low  bytes 8..16 of the id, big-endian
 */
public record StorageId(long high, long low) {

    /** The id's length in bytes. */
    public static final int LENGTH = 16;

    /** A fresh id of 16 bytes from {@code random}. */
    public static StorageId random(SecureRandom random) {
        byte[] bytes = new byte[LENGTH];
        random.nextBytes(bytes);
        return fromBytes(bytes);
    }

    /** The id of exactly 16 bytes. */
    public static StorageId fromBytes(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("a storage id is " + LENGTH + " bytes, got " + bytes.length);
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        return new StorageId(buf.getLong(0), buf.getLong(8));
    }

    /** The id's 16 bytes. */
    public byte[] bytes() {
        return ByteBuffer.allocate(LENGTH).putLong(high).putLong(low).array();
    }

    /** The id as 32 lowercase hex digits. */
    @Override
    public String toString() {
        return HexFormat.of().formatHex(bytes());
    }
}
