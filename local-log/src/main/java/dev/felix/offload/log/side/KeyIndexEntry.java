package dev.felix.offload.log.side;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One key of a cache shard's key index: the composite key and the record that currently defines it.
 *
 * <p>A composite key of a cache value (kind 0) is {@code kind u8 = 0 | key_len u32 | key}, with no slot
 * or field; kinds 1 to 3 (hashes, sets, lists) are reserved and never appear in a cache's index.
 *
 * @param compositeKey    the composite key bytes (copied in and out)
 * @param offset          the offset of the record that defines the key
 * @param version         the version a conditional write compares against
 * @param expiresAtMillis the absolute expiry in epoch milliseconds, 0 for none
 * @param bytes           the record's payload length, an unsigned 32-bit value held in a long
 */
public record KeyIndexEntry(byte[] compositeKey, long offset, long version, long expiresAtMillis, long bytes) {

    /** The kind byte of a cache value's composite key. */
    public static final int CACHE_KIND = 0;

    public static final int KIND_OFFSET = 0;
    public static final int KIND_LENGTH = 1;
    public static final int INNER_KEY_LEN_OFFSET = KIND_OFFSET + KIND_LENGTH;
    public static final int INNER_KEY_LEN_LENGTH = 4;
    /** Where the key starts within a composite key; also the composite key of an empty key's length. */
    public static final int INNER_KEY_OFFSET = INNER_KEY_LEN_OFFSET + INNER_KEY_LEN_LENGTH;

    /**
     * @throws IllegalArgumentException when the key is not a cache key ({@link #cacheKeyProblem}) or
     *                                  {@code bytes} is not an unsigned 32-bit value
     */
    public KeyIndexEntry {
        compositeKey = compositeKey.clone();
        String problem = cacheKeyProblem(compositeKey);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        SideFiles.requireU32(bytes, "entry bytes");
    }

    /** An entry for the cache value {@code key}. */
    public static KeyIndexEntry ofCacheKey(byte[] key, long offset, long version, long expiresAtMillis, long bytes) {
        return new KeyIndexEntry(cacheKey(key), offset, version, expiresAtMillis, bytes);
    }

    /** The composite key of the cache value {@code key}: {@code 0 | key_len u32 | key}. */
    public static byte[] cacheKey(byte[] key) {
        return ByteBuffer.allocate(INNER_KEY_OFFSET + key.length)
                .put((byte) CACHE_KIND).putInt(key.length).put(key).array();
    }

    /**
     * Why {@code composite} is not the composite key of a cache value, or null when it is: its kind
     * byte must be 0 and its {@code key_len} must account for exactly the bytes after it.
     */
    static String cacheKeyProblem(byte[] composite) {
        if (composite.length < INNER_KEY_OFFSET) {
            return "a composite key of " + composite.length + " bytes is shorter than its kind and key_len ("
                    + INNER_KEY_OFFSET + ")";
        }
        int kind = Byte.toUnsignedInt(composite[KIND_OFFSET]);
        if (kind != CACHE_KIND) {
            return "composite key kind " + kind + " is not a cache value (" + CACHE_KIND + ")";
        }
        long inner = Integer.toUnsignedLong(ByteBuffer.wrap(composite).getInt(INNER_KEY_LEN_OFFSET));
        if (inner != composite.length - INNER_KEY_OFFSET) {
            return "composite key's key_len " + inner + " does not match the " + (composite.length - INNER_KEY_OFFSET)
                    + " key bytes it holds (a cache value has no slot or field)";
        }
        return null;
    }

    @Override
    public byte[] compositeKey() {
        return compositeKey.clone();
    }

    /** The cache value's key: the composite key without its kind and key_len. */
    public byte[] key() {
        return Arrays.copyOfRange(compositeKey, INNER_KEY_OFFSET, compositeKey.length);
    }

    /** The composite key's length in bytes. */
    public int compositeKeyLength() {
        return compositeKey.length;
    }

    /** Orders entries by composite key, compared as unsigned bytes: the order of the file. */
    public int compareKeyTo(KeyIndexEntry other) {
        return Arrays.compareUnsigned(compositeKey, other.compositeKey);
    }

    /** The stored array, not copied: for the codec, which only reads it. */
    byte[] compositeKeyUnsafe() {
        return compositeKey;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyIndexEntry e && Arrays.equals(compositeKey, e.compositeKey) && offset == e.offset
                && version == e.version && expiresAtMillis == e.expiresAtMillis && bytes == e.bytes;
    }

    @Override
    public int hashCode() {
        int h = Arrays.hashCode(compositeKey);
        h = 31 * h + Long.hashCode(offset);
        h = 31 * h + Long.hashCode(version);
        h = 31 * h + Long.hashCode(expiresAtMillis);
        return 31 * h + Long.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "KeyIndexEntry[key=" + HexFormat.of().formatHex(compositeKey) + ", offset=" + Long.toUnsignedString(offset)
                + ", version=" + Long.toUnsignedString(version) + ", expiresAtMillis=" + expiresAtMillis
                + ", bytes=" + bytes + "]";
    }
}
