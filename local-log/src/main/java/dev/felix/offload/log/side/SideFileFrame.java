package dev.felix.offload.log.side;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The frame that the root's and the shard's small side files share, and the manifest with them.
 * All integers big-endian:
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic     the file kind's four ASCII letters
 *   4      2     version   the one version this build writes and reads
 *   6      2     reserved  0 (or, for a file that says so, two bytes of its own)
 *   8      n     body      the file's own fields
 *  8+n     4     crc       CRC-32 (IEEE) over every byte before it
 * </pre>
 *
 * <p>A fixed-length file ({@link #fixed}) ends at its CRC, and bytes after it are content errors; a
 * variable-length one ({@link #variable}) keeps its CRC in its last four bytes. {@link #open} runs the
 * checks every such codec runs, in one order: the length against the shortest file
 * ({@code Truncated}), the magic ({@code SideFileMagic}), the version ({@code SideFileVersion};
 * before the CRC, since a file of another version need not end in one), the CRC
 * ({@code SideFileChecksum}, before any field is used), and the reserved bytes
 * ({@code SideFileContent}). The codec then checks its own fields and, for a fixed-length file,
 * calls {@link #requireNothingAfter} last.
 */
public final class SideFileFrame {
    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int VERSION_LENGTH = 2;
    public static final int RESERVED_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int RESERVED_LENGTH = 2;
    /** Where a file's own fields start. */
    public static final int BODY_OFFSET = RESERVED_OFFSET + RESERVED_LENGTH;
    public static final int CRC_LENGTH = 4;

    private final String name;
    private final int magic;
    private final int version;
    private final int minLength;
    private final boolean fixedLength;
    private final boolean reservedIsZero;

    private SideFileFrame(String name, int magic, int version, int minLength, boolean fixedLength,
            boolean reservedIsZero) {
        if (minLength < BODY_OFFSET + CRC_LENGTH) {
            throw new IllegalArgumentException("a framed file takes at least " + (BODY_OFFSET + CRC_LENGTH) + " bytes");
        }
        this.name = name;
        this.magic = magic;
        this.version = version;
        this.minLength = minLength;
        this.fixedLength = fixedLength;
        this.reservedIsZero = reservedIsZero;
    }

    /** A file of exactly {@code length} bytes, its CRC in the last four, bytes 6..8 reserved as 0. */
    public static SideFileFrame fixed(String name, int magic, int version, int length) {
        return new SideFileFrame(name, magic, version, length, true, true);
    }

    /** As {@link #fixed}, for a file whose bytes 6..8 are fields of its own, checked by its codec. */
    public static SideFileFrame fixedWithOwnBytes6To8(String name, int magic, int version, int length) {
        return new SideFileFrame(name, magic, version, length, true, false);
    }

    /** A file of at least {@code minLength} bytes, its CRC in the last four, bytes 6..8 reserved as 0. */
    public static SideFileFrame variable(String name, int magic, int version, int minLength) {
        return new SideFileFrame(name, magic, version, minLength, false, true);
    }

    /** A buffer of {@code length} bytes with magic and version written and the reserved bytes 0. */
    public ByteBuffer start(int length) {
        if (length < minLength || (fixedLength && length != minLength)) {
            throw new IllegalArgumentException("a " + name + " file cannot be " + length + " bytes long");
        }
        ByteBuffer buf = ByteBuffer.allocate(length);
        writeHead(buf, magic, version);
        return buf;
    }

    /** Writes the CRC over everything before it into the last four bytes; returns the file's bytes. */
    public byte[] seal(ByteBuffer buf) {
        int crcAt = buf.capacity() - CRC_LENGTH;
        writeCrc(buf, Crc.CRC32, crcAt, 0, crcAt);
        return buf.array();
    }

    /**
     * Checks the frame of a whole file (the bytes from {@code bytes}' position to its limit, not
     * consumed) and returns them as a buffer of their own, index 0 at the magic.
     */
    public ByteBuffer open(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = openHead(bytes, site, minLength, fixedLength ? name + " file" : name + " header and crc",
                magic, name, version);
        int crcAt = crcOffset(buf);
        checkCrc(buf, site, Crc.CRC32, crcAt, 0, crcAt,
                fixedLength ? name + " bytes 0.." + crcAt : name + " of " + buf.limit() + " bytes");
        if (reservedIsZero) {
            int reserved = Short.toUnsignedInt(buf.getShort(RESERVED_OFFSET));
            if (reserved != 0) {
                throw SideFiles.content(site, RESERVED_OFFSET, String.format("reserved 0x%04x, expected 0", reserved));
            }
        }
        return buf;
    }

    /** Where the CRC of an opened file stands: the end of the body. */
    public int crcOffset(ByteBuffer opened) {
        return (fixedLength ? minLength : opened.limit()) - CRC_LENGTH;
    }

    /** For a fixed-length file: nothing may follow the CRC. */
    public void requireNothingAfter(ByteBuffer opened, CorruptionSite site) throws CorruptionException {
        int length = opened.limit();
        if (fixedLength && length > minLength) {
            throw SideFiles.content(site, minLength, (length - minLength) + " bytes after the crc");
        }
    }

    /**
     * The start every framed file shares, the variable-length ones that lay out the rest in their
     * own way included: at least {@code minLength} bytes ({@code Truncated}, naming
     * {@code truncatedWhat}), then the magic and the version. Returns the file's bytes as a buffer of
     * their own, index 0 at the magic. {@code versionWhat} names the version field in the error.
     */
    public static ByteBuffer openHead(ByteBuffer bytes, CorruptionSite site, int minLength, String truncatedWhat,
            int magic, String versionWhat, int version) throws CorruptionException {
        ByteBuffer buf = bytes.slice();
        int length = buf.remaining();
        if (length < minLength) {
            throw CorruptionException.truncated(site.at(0), truncatedWhat, minLength, length);
        }
        int found = buf.getInt(MAGIC_OFFSET);
        if (found != magic) {
            throw SideFiles.magic(site, found, magic, letters(magic));
        }
        int foundVersion = Short.toUnsignedInt(buf.getShort(VERSION_OFFSET));
        if (foundVersion != version) {
            throw SideFiles.version(site, VERSION_OFFSET, versionWhat, foundVersion, version);
        }
        return buf;
    }

    /** Writes the magic and version into a new file's first six bytes. */
    public static void writeHead(ByteBuffer buf, int magic, int version) {
        buf.putInt(MAGIC_OFFSET, magic);
        buf.putShort(VERSION_OFFSET, (short) version);
    }

    /** Which CRC a file carries. */
    public enum Crc {
        /** CRC-32 (IEEE), the side files' and the manifest's. */
        CRC32,
        /** CRC-32C (Castagnoli), {@code keys.idx}'s. */
        CRC32C;

        int over(ByteBuffer buf, int from, int length) {
            return this == CRC32 ? SideFiles.crc32(buf, from, length) : SideFiles.crc32c(buf, from, length);
        }
    }

    /**
     * Checks the CRC stored at {@code crcAt} against the bytes {@code from .. from+length}
     * ({@code SideFileChecksum} at the stored CRC, printing both values; {@code what} names the bytes).
     */
    public static void checkCrc(ByteBuffer buf, CorruptionSite site, Crc kind, int crcAt, int from, int length,
            String what) throws CorruptionException {
        int stored = buf.getInt(crcAt);
        int computed = kind.over(buf, from, length);
        if (stored != computed) {
            throw CorruptionException.checksum(CorruptionKind.SIDE_FILE_CHECKSUM, site.at(crcAt), what, stored, computed);
        }
    }

    /** Stores the CRC of the bytes {@code from .. from+length} at {@code crcAt}. */
    public static void writeCrc(ByteBuffer buf, Crc kind, int crcAt, int from, int length) {
        buf.putInt(crcAt, kind.over(buf, from, length));
    }

    private static String letters(int magic) {
        return new String(ByteBuffer.allocate(4).putInt(magic).array(), StandardCharsets.US_ASCII);
    }
}
