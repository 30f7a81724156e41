package dev.felix.offload.log.side;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers the side-file tests share: hand-typed bytes, CRCs computed here, damage, guarded decoding. */
final class SideFileBytes {

    private SideFileBytes() {
    }

    /** Hex bytes, whitespace ignored, {@code #} starting a comment to the end of the line. */
    static byte[] hex(String annotated) {
        StringBuilder digits = new StringBuilder();
        for (String line : annotated.split("\n")) {
            int hash = line.indexOf('#');
            digits.append((hash < 0 ? line : line.substring(0, hash)).replaceAll("\\s+", ""));
        }
        return HexFormat.of().parseHex(digits);
    }

    static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] p : parts) {
            length += p.length;
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    static int crc32(byte[] bytes, int from, int to) {
        CRC32 crc = new CRC32();
        crc.update(bytes, from, to - from);
        return (int) crc.getValue();
    }

    static int crc32c(byte[] bytes, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, to - from);
        return (int) crc.getValue();
    }

    static byte[] u32(int value) {
        return ByteBuffer.allocate(4).putInt(value).array();
    }

    /** {@code bytes} with the 4-byte big-endian {@code value} written at {@code at}. */
    static byte[] withInt(byte[] bytes, int at, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putInt(at, value);
        return copy;
    }

    static byte[] withShort(byte[] bytes, int at, int value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putShort(at, (short) value);
        return copy;
    }

    static byte[] withLong(byte[] bytes, int at, long value) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putLong(at, value);
        return copy;
    }

    static byte[] withByte(byte[] bytes, int at, int value) {
        byte[] copy = bytes.clone();
        copy[at] = (byte) value;
        return copy;
    }

    /** {@code bytes} with bit {@code bit % 8} (0 the lowest) of byte {@code bit / 8} flipped. */
    static byte[] flipBit(byte[] bytes, int bit) {
        byte[] copy = bytes.clone();
        copy[bit / 8] ^= (byte) (1 << (bit % 8));
        return copy;
    }

    /** The CRC-32 at {@code crcAt}, recomputed over {@code [from, to)}. */
    static byte[] resealCrc32(byte[] bytes, int crcAt, int from, int to) {
        return withInt(bytes, crcAt, crc32(bytes, from, to));
    }

    /** A decoder under test. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException;
    }

    /** What decoding gave: a value or the typed error, never anything else. */
    record Outcome<T>(T value, CorruptionException error) {
        CorruptionKind kind() {
            return error == null ? null : error.kind();
        }
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /**
     * Decodes {@code bytes}, failing the test on anything but a value or a {@link CorruptionException},
     * and on an allocation over {@code allocationLimit} bytes (measured on a second, identical decode,
     * so the JVM's one-off linking of the error path is not counted). An allocation sized by a damaged
     * count or length would exceed it.
     */
    static <T> Outcome<T> decodeGuarded(Decoder<T> decoder, byte[] bytes, CorruptionSite site, long allocationLimit,
                                        String what) {
        attempt(decoder, bytes, site, what);
        boolean measurable = THREADS.isThreadAllocatedMemorySupported();
        if (measurable) {
            THREADS.setThreadAllocatedMemoryEnabled(true);
        }
        long before = measurable ? THREADS.getCurrentThreadAllocatedBytes() : 0;
        Outcome<T> outcome = attempt(decoder, bytes, site, what);
        if (measurable) {
            long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            assertThat(allocated).as("%s: bytes allocated decoding %d bytes", what, bytes.length)
                    .isLessThan(allocationLimit);
        }
        return outcome;
    }

    private static <T> Outcome<T> attempt(Decoder<T> decoder, byte[] bytes, CorruptionSite site, String what) {
        try {
            return new Outcome<>(decoder.decode(ByteBuffer.wrap(bytes), site), null);
        } catch (CorruptionException e) {
            return new Outcome<>(null, e);
        } catch (Throwable t) {
            throw new AssertionError(what + ": decode threw " + t, t);
        }
    }

    /** Writes {@code bytes} as {@code name} in {@code dir}, replacing what is there. */
    static Path write(Path dir, String name, byte[] bytes) throws IOException {
        Files.createDirectories(dir);
        return Files.write(dir.resolve(name), bytes);
    }

    /** Every prefix of {@code bytes} shorter than it, from empty up. */
    static byte[] cut(byte[] bytes, int length) {
        return Arrays.copyOf(bytes, length);
    }
}
