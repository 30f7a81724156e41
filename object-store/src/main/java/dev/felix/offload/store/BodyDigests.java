package dev.felix.offload.store;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The digests of an upload body taken in one read of its bytes: the CRC32 of the whole, and the
 * CRC32 and, where asked for, MD5 of each {@code partSize} slice (the last one shorter). A body of
 * one part (its length at most {@code partSize}) has the whole body's MD5 as its one part MD5.
 * Without MD5s ({@link #hasMd5s()} false) they serve stores that send only CRC32s.
 *
 * <p>Computing all of them from the same read is what makes them worth something together: the
 * CRC32 a caller recorded is checked against {@link #crc32()}, and the server is asked to check
 * the MD5s taken from those very bytes, so a server that accepts the MD5s holds the bytes whose
 * CRC32 the caller recorded.
 */
public final class BodyDigests {
    private final long length;
    private final long partSize;
    private final long crc32;
    private final long[] partCrc32s;
    private final byte[][] partMd5s;

    /**
     * @param length     the body's length
     * @param partSize   the length of every slice but the last (positive)
     * @param crc32      the whole body's CRC32
     * @param partCrc32s each slice's CRC32
     * @param partMd5s   each slice's MD5 (16 bytes each), or null where none were taken
     */
    public BodyDigests(long length, long partSize, long crc32, long[] partCrc32s, byte[][] partMd5s) {
        if (length < 0 || partSize <= 0) {
            throw new IllegalArgumentException("digests need a length >= 0 and a positive part size: " + length + ", "
                    + partSize);
        }
        int parts = partCount(length, partSize);
        if (partCrc32s.length != parts || (partMd5s != null && partMd5s.length != parts)) {
            throw new IllegalArgumentException(parts + " parts of " + partSize + " bytes in " + length + " bytes, but "
                    + partCrc32s.length + " CRC32s and " + (partMd5s == null ? 0 : partMd5s.length) + " MD5s");
        }
        if (partMd5s != null) {
            for (byte[] md5 : partMd5s) {
                if (md5 == null || md5.length != 16) {
                    throw new IllegalArgumentException("an MD5 has 16 bytes");
                }
            }
        }
        this.length = length;
        this.partSize = partSize;
        this.crc32 = crc32;
        this.partCrc32s = partCrc32s.clone();
        this.partMd5s = partMd5s == null ? null : Arrays.stream(partMd5s).map(byte[]::clone).toArray(byte[][]::new);
    }

    /** How many slices of {@code partSize} make {@code length} bytes: at least one, even for none. */
    public static int partCount(long length, long partSize) {
        long parts = Math.max(1, (length + partSize - 1) / partSize);
        if (parts > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(length + " bytes in parts of " + partSize + " are too many parts");
        }
        return (int) parts;
    }

    public long length() {
        return length;
    }

    public long partSize() {
        return partSize;
    }

    public int partCount() {
        return partCrc32s.length;
    }

    /** Whether these digests are of slices of {@code size}: of that size, or a single part either way. */
    public boolean fits(long size) {
        return size == partSize || (partCount() == 1 && size >= length);
    }

    /** Whether the part MD5s were taken too. */
    public boolean hasMd5s() {
        return partMd5s != null;
    }

    public long crc32() {
        return crc32;
    }

    public long[] partCrc32s() {
        return partCrc32s.clone();
    }

    /** The MD5 of part {@code index} (from 0), base64 as {@code Content-MD5} carries it. */
    public String contentMd5(int index) {
        requireMd5s();
        return Base64.getEncoder().encodeToString(partMd5s[index]);
    }

    /**
     * The ETag an S3 server answers for these bytes when its ETags are MD5s: uploaded in one request,
     * the hex MD5 of the body; in these parts, the hex MD5 of the part MD5s one after another, a dash
     * and the part count.
     */
    public String md5Etag(boolean multipart) {
        requireMd5s();
        if (!multipart) {
            if (partCount() != 1) {
                throw new IllegalStateException("a body of " + partCount() + " parts has no single-request MD5 here");
            }
            return HexFormat.of().formatHex(partMd5s[0]);
        }
        MessageDigest md5 = md5();
        for (byte[] part : partMd5s) {
            md5.update(part);
        }
        return HexFormat.of().formatHex(md5.digest()) + "-" + partCount();
    }

    private void requireMd5s() {
        if (partMd5s == null) {
            throw new IllegalStateException("these digests were taken without MD5s: " + this);
        }
    }

    /** A fresh MD5 digest; every JVM has one. */
    public static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no MD5", e);
        }
    }

    @Override
    public String toString() {
        return String.format("%d bytes in %d part(s) of %d, crc32 %08x%s", length, partCount(), partSize, crc32,
                partMd5s == null ? ", no MD5s" : "");
    }
}
