package dev.felix.offload.manifest;

import java.util.Objects;

/**
 * One sealed segment with a verified copy in the object store, as {@code offload.manifest} records
 * it. Every number is a u64 (or for {@code objectCrc32} a u32) held in a Java {@code long} (or
 * {@code int}) and compared unsigned.
 *
 * <p>The key is the object's full name, stored and used as written. Keys from 0.6.0-preview.3
 * lack the node id that later builds put first; they still name their objects, so nothing here
 * parses a key or rebuilds one from the other fields. What is checked is only that the key is a
 * relative object name ({@link #keyProblem}): every key any build writes is one, and a key that
 * climbs out with {@code ..} or starts at {@code /} can only come from damage or tampering, so it is
 * refused here rather than left for each store to refuse at the moment it is used.
 *
 * @param segmentId             the segment id, the number in the local file's name (not an offset)
 * @param baseOffset            the logical offset of the segment's first record
 * @param lastOffset            the logical offset of its last record, inclusive; never below {@code baseOffset}
 * @param sizeBytes             bytes in the object: the segment's valid bytes
 * @param oldestTimestampMicros timestamp_micros of the first record
 * @param newestTimestampMicros timestamp_micros of the last record
 * @param objectCrc32           CRC-32 (IEEE) over the object's bytes
 * @param objectKey             the object's key; at most {@link #MAX_KEY_BYTES} bytes of UTF-8
 */
public record ManifestEntry(long segmentId, long baseOffset, long lastOffset, long sizeBytes,
                            long oldestTimestampMicros, long newestTimestampMicros, int objectCrc32,
                            String objectKey) {

    /** A key's length is stored as a u16. */
    public static final int MAX_KEY_BYTES = 0xFFFF;

    public ManifestEntry {
        Objects.requireNonNull(objectKey, "objectKey");
        if (Long.compareUnsigned(baseOffset, lastOffset) > 0) {
            throw new IllegalArgumentException("base offset " + Long.toUnsignedString(baseOffset)
                    + " is above last offset " + Long.toUnsignedString(lastOffset));
        }
        String problem = keyProblem(objectKey);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        long keyBytes = utf8Length(objectKey);
        if (keyBytes < 0) {
            // A lone surrogate has no UTF-8 form; writing it would store '?' and lose the real key.
            throw new IllegalArgumentException("object key holds a lone UTF-16 surrogate: " + objectKey);
        }
        if (keyBytes > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("object key is " + keyBytes + " bytes of UTF-8, at most "
                    + MAX_KEY_BYTES + " fit");
        }
    }

    /**
     * Why {@code key} is not a relative object name, or null when it is one: not empty, not starting
     * with {@code /}, {@code /}-separated parts none of which is empty, {@code .} or {@code ..}, and no
     * backslash or control character (U+0000-U+001F, U+007F). The object store applies these rules and
     * more (its own reserved names, a length limit) to every key; this module cannot depend on it, and
     * the manifest only needs the part that keeps a key from naming something outside the store.
     */
    public static String keyProblem(String key) {
        if (key.isEmpty()) {
            return "object key is empty";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return String.format("object key holds control character U+%04X at index %d", (int) c, i);
            }
            if (c == '\\') {
                return "object key '" + shown(key) + "' holds a backslash at index " + i;
            }
        }
        if (key.startsWith("/")) {
            return "object key '" + shown(key) + "' starts with '/'; keys are relative to the store";
        }
        for (String part : key.split("/", -1)) {
            if (part.isEmpty()) {
                return "object key '" + shown(key) + "' holds an empty part ('//' or a trailing '/')";
            }
            if (part.equals(".") || part.equals("..")) {
                return "object key '" + shown(key) + "' holds a '" + part + "' part; keys are relative to the store";
            }
        }
        return null;
    }

    /** A key for a message: at most 200 characters of it (a key may be 64 KiB). */
    private static String shown(String key) {
        return key.length() <= 200 ? key : key.substring(0, 200) + "...";
    }

    /** True when this entry holds the record at {@code offset}. */
    public boolean holds(long offset) {
        return Long.compareUnsigned(baseOffset, offset) <= 0 && Long.compareUnsigned(offset, lastOffset) <= 0;
    }

    /** Bytes of UTF-8 in {@code s}, or -1 when it holds a lone surrogate; counted without encoding. */
    static long utf8Length(String s) {
        long bytes = 0;
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    bytes += 4;
                    i++;
                } else {
                    return -1;
                }
            } else if (Character.isLowSurrogate(c)) {
                return -1;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    @Override
    public String toString() {
        return "ManifestEntry[segment " + Long.toUnsignedString(segmentId)
                + ", offsets " + Long.toUnsignedString(baseOffset) + ".." + Long.toUnsignedString(lastOffset)
                + ", " + Long.toUnsignedString(sizeBytes) + " bytes"
                + ", timestamps " + Long.toUnsignedString(oldestTimestampMicros)
                + ".." + Long.toUnsignedString(newestTimestampMicros)
                + ", crc32 " + String.format("%08x", objectCrc32)
                + ", key " + objectKey + "]";
    }
}
