package dev.felix.offload.store;

/**
 * A contiguous run of bytes in an object: {@code length} bytes starting at {@code offset}. Reads
 * into memory allocate {@code length} bytes, so the length is capped at {@link #MAX_LENGTH}.
 *
 * @param offset first byte, zero-based, not negative
 * @param length number of bytes, at least 1 and at most {@link #MAX_LENGTH}
 */
public record ByteRange(long offset, int length) {
    /** The largest range read into one array (a little under the JVM's array limit). */
    public static final int MAX_LENGTH = Integer.MAX_VALUE - 16;

    public ByteRange {
        if (offset < 0) {
            throw new IllegalArgumentException("byte range offset must not be negative: " + offset);
        }
        if (length < 1 || length > MAX_LENGTH) {
            throw new IllegalArgumentException("byte range length must be in [1, " + MAX_LENGTH + "]: " + length);
        }
        if (offset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("byte range end overflows: offset " + offset + ", length " + length);
        }
    }

    public static ByteRange of(long offset, int length) {
        return new ByteRange(offset, length);
    }

    /** The last byte's offset, inclusive (as HTTP {@code Range: bytes=first-last} wants it). */
    public long lastInclusive() {
        return offset + length - 1;
    }

    /** One past the last byte. */
    public long end() {
        return offset + length;
    }

    @Override
    public String toString() {
        return "bytes " + offset + "-" + lastInclusive();
    }
}
