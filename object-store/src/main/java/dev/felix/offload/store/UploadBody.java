package dev.felix.offload.store;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongConsumer;
import java.util.zip.CRC32;

/**
 * The bytes of a put: a whole file, a byte range of a file, or an array. The length is known up
 * front and the body can be read any number of times (a retried request reads it again), so the
 * file must not change while a put of it runs.
 *
 * <p>A {@link #paced} body hands its streams' bytes out in slices of at most {@link #PACE_SLICE},
 * asking its pacer for each slice first (a rate limiter, say), so a bandwidth limit holds from the
 * first byte sent rather than from the next body on. Each byte is asked for once per paced body:
 * a client that reads a range twice (the AWS SDK hashes a body to sign it over plain HTTP, then
 * sends it) pays for it once. Its CRC32s are computed unpaced.
 */
public final class UploadBody {
    /** The most bytes a paced stream hands out before it asks its pacer again. */
    public static final int PACE_SLICE = 64 * 1024;
    /** The most bytes a stream over a file reads from it at once. */
    static final int READ_CHUNK = 64 * 1024;

    private final Path file;
    private final long offset;
    private final long length;
    private final byte[] bytes;
    private final LongConsumer pacer;
    /** For a paced body: how far into the body the streams starting at each position have been paid for. */
    private final java.util.concurrent.ConcurrentHashMap<Long, Long> paidTo;
    /** Digests the caller took of these bytes, or null: the store then takes its own. */
    private final BodyDigests digests;

    private UploadBody(Path file, long offset, long length, byte[] bytes, LongConsumer pacer, BodyDigests digests) {
        this.file = file;
        this.offset = offset;
        this.length = length;
        this.bytes = bytes;
        this.pacer = pacer;
        this.paidTo = pacer == null ? null : new java.util.concurrent.ConcurrentHashMap<>();
        this.digests = digests;
    }

    private UploadBody(Path file, long offset, long length, byte[] bytes) {
        this(file, offset, length, bytes, null, null);
    }

    /**
     * This body, its transfer streams ({@link #open}) asking {@code pacer} for every slice before
     * handing it out. {@link #file()} answers empty for it, so a client that would read the file by
     * itself goes through the paced streams instead.
     */
    public UploadBody paced(LongConsumer pacer) {
        return new UploadBody(file, offset, length, bytes, Objects.requireNonNull(pacer, "pacer"), digests);
    }

    /**
     * This body with digests its caller took of the bytes (in the same read as its own checks, say),
     * so that a store needing digests of slices of that size does not read the body for them again.
     * The store sends them as they are: if the bytes changed since, a server that checks them
     * refuses the upload.
     */
    public UploadBody withDigests(BodyDigests precomputed) {
        if (precomputed.length() != length) {
            throw new IllegalArgumentException("digests of " + precomputed.length() + " bytes for a body of " + length);
        }
        return new UploadBody(file, offset, length, bytes, pacer, precomputed);
    }

    /** The digests its caller took ({@link #withDigests}), empty when none were given. */
    public java.util.Optional<BodyDigests> givenDigests() {
        return java.util.Optional.ofNullable(digests);
    }

    /** Whether its reads are paced ({@link #paced}). */
    public boolean isPaced() {
        return pacer != null;
    }

    /**
     * The digests of this body in slices of {@code partSize}, MD5s included: the ones it was given
     * where they fit that size, else taken now in one sequential read (not paced: nothing is sent).
     */
    public BodyDigests digests(long partSize) throws IOException {
        return digests(partSize, true);
    }

    /**
     * As {@link #digests(long)}, with the part MD5s only if {@code md5} asks for them (given digests
     * without them do not fit a request for them).
     */
    public BodyDigests digests(long partSize, boolean md5s) throws IOException {
        if (digests != null && digests.fits(partSize) && (digests.hasMd5s() || !md5s)) {
            return digests;
        }
        if (partSize <= 0) {
            throw new IllegalArgumentException("part size must be positive: " + partSize);
        }
        int partCount = BodyDigests.partCount(length, partSize);
        long[] crcs = new long[partCount];
        byte[][] partMd5s = md5s ? new byte[partCount][] : null;
        byte[] buffer = new byte[256 * 1024];
        CRC32 whole = new CRC32();
        CRC32 crc = new CRC32();
        java.security.MessageDigest md5 = BodyDigests.md5();
        try (InputStream in = openRaw(0, length)) {
            for (int i = 0; i < partCount; i++) {
                crc.reset();
                long left = Math.min(partSize, length - i * partSize);
                while (left > 0) {
                    int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                    if (n < 0) {
                        throw new IOException("body ended " + left + " bytes before the end of part " + (i + 1));
                    }
                    crc.update(buffer, 0, n);
                    whole.update(buffer, 0, n);
                    if (md5s) {
                        md5.update(buffer, 0, n);
                    }
                    left -= n;
                }
                crcs[i] = crc.getValue();
                if (md5s) {
                    partMd5s[i] = md5.digest();
                }
            }
        }
        return new BodyDigests(length, partSize, whole.getValue(), crcs, partMd5s);
    }

    /** The whole file, its length taken now. */
    public static UploadBody ofFile(Path file) throws IOException {
        return new UploadBody(file, 0, Files.size(file), null);
    }

    /** {@code length} bytes of {@code file} starting at {@code offset}; the range must lie in the file. */
    public static UploadBody ofFileRange(Path file, long offset, long length) throws IOException {
        Objects.requireNonNull(file, "file");
        long size = Files.size(file);
        if (offset < 0 || length < 0 || offset > size || length > size - offset) {
            throw new IllegalArgumentException(
                    "upload range " + offset + "+" + length + " does not lie within " + file + " (" + size + " bytes)");
        }
        return new UploadBody(file, offset, length, null);
    }

    /** A copy of {@code bytes}. */
    public static UploadBody ofBytes(byte[] bytes) {
        return new UploadBody(null, 0, bytes.length, bytes.clone());
    }

    public long length() {
        return length;
    }

    /** The file behind this body, empty for an array body and for a paced one. */
    public Optional<Path> file() {
        return pacer == null ? Optional.ofNullable(file) : Optional.empty();
    }

    /** Where this body starts in its file (0 for an array body). */
    public long fileOffset() {
        return offset;
    }

    /** A fresh stream over the whole body. */
    public InputStream open() throws IOException {
        return open(0, length);
    }

    /** A fresh stream over {@code count} bytes starting {@code from} bytes into the body. */
    public InputStream open(long from, long count) throws IOException {
        InputStream raw = openRaw(from, count);
        return pacer == null ? raw : new PacedInputStream(raw, from);
    }

    private InputStream openRaw(long from, long count) throws IOException {
        if (from < 0 || count < 0 || from > length || count > length - from) {
            throw new IllegalArgumentException("slice " + from + "+" + count + " outside body of " + length + " bytes");
        }
        if (bytes != null) {
            return new ByteArrayInputStream(bytes, (int) from, (int) count);
        }
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        channel.position(offset + from);
        // The HTTP client's entity copies a body 4 KiB at a time: unbuffered, each copy was a read of the
        // file (262,144 reads a GiB, counted with strace); a read of up to READ_CHUNK serves 16 of them.
        int chunk = (int) Math.max(1, Math.min(READ_CHUNK, count));
        return new BoundedInputStream(new BufferedInputStream(Channels.newInputStream(channel), chunk), count);
    }

    /** The whole body as an array; only for bodies under 2 GiB. */
    public byte[] readAll() throws IOException {
        if (bytes != null) {
            return bytes.clone();
        }
        if (length > ByteRange.MAX_LENGTH) {
            throw new IOException("body of " + length + " bytes is too large for one array");
        }
        byte[] out = new byte[(int) length];
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.wrap(out);
            long position = offset;
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, position);
                if (n < 0) {
                    throw new IOException(file + " shrank while being read");
                }
                position += n;
            }
        }
        return out;
    }

    /** CRC32 of {@code count} bytes starting {@code from} bytes into the body (reads them). */
    public long crc32(long from, long count) throws IOException {
        if (bytes != null) {
            CRC32 crc = new CRC32();
            crc.update(bytes, (int) from, (int) count);
            return crc.getValue();
        }
        CRC32 crc = new CRC32();
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = openRaw(from, count)) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                crc.update(buffer, 0, n);
            }
        }
        return crc.getValue();
    }

    /**
     * The CRC32 of each {@code partSize} slice of the body (the last one shorter), in one sequential
     * read (not paced: nothing is sent).
     */
    public long[] crc32s(long partSize) throws IOException {
        return digests(partSize, false).partCrc32s();
    }

    /** CRC32 of the whole body. */
    public long crc32() throws IOException {
        return crc32(0, length);
    }

    @Override
    public String toString() {
        return bytes != null ? "bytes[" + length + "]" : file + "@" + offset + "+" + length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UploadBody other && Objects.equals(file, other.file) && offset == other.offset
                && length == other.length && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(file, offset, length);
    }

    /** A stream whose single-byte read goes through its array read. */
    private abstract static class ArrayReadStream extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }
    }

    /** Hands bytes out in slices, asking the pacer for those not yet paid for by a stream from the same start. */
    private final class PacedInputStream extends ArrayReadStream {
        private final InputStream in;
        private final long start;
        private long position;

        PacedInputStream(InputStream in, long start) {
            this.in = in;
            this.start = start;
            this.position = start;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            int n = in.read(b, off, Math.min(len, PACE_SLICE));
            if (n > 0) {
                long end = position + n;
                long paid = paidTo.getOrDefault(start, start);
                if (end > paid) {
                    pacer.accept(end - Math.max(paid, position));
                    paidTo.merge(start, end, Math::max);
                }
                position = end;
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** Ends after a fixed count of bytes; reports a short file as an error instead of a short body. */
    private static final class BoundedInputStream extends ArrayReadStream {
        private final InputStream in;
        private long remaining;

        BoundedInputStream(InputStream in, long remaining) {
            this.in = in;
            this.remaining = remaining;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n < 0) {
                throw new IOException("file ended " + remaining + " bytes before the upload body's end");
            }
            remaining -= n;
            return n;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(in.available(), remaining);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
