package dev.felix.offload.log.format;

import java.nio.ByteBuffer;

/**
 * The 32-byte header at the start of every segment file ({@code *.log}).
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic              0x464C5347 "FLSG"
 *   4      2     version            3 when written; 4 for a segment holding a generation-start
 *                                   record; 2 is still read
 *   6      2     flags              0; anything else is rejected (SegmentFlags)
 *   8      8     base_offset        logical offset of the segment's first record
 *  16      8     created_at_micros  wall clock at creation, informational
 *  24      4     header_crc         CRC-32 (IEEE) over bytes 0..24
 *  28      4     reserved           0 (not covered by the CRC, not checked)
 * </pre>
 *
 * <p>Checks run in this order: length ({@code Truncated}), magic, version, flags, CRC. The version is
 * checked before the CRC because a header of an unknown version need not keep its CRC at byte 24;
 * the spec asks that a v1 segment be reported as {@code SegmentVersion} naming the version found.
 *
 * <p>The file name of a segment is an id, never an offset: {@link #baseOffset()} is authoritative.
 *
 * @param version         2, 3 or 4
 * @param baseOffset      the logical offset of the segment's first record
 * @param createdAtMicros wall-clock creation time in microseconds, informational only
 */
public record SegmentHeader(int version, long baseOffset, long createdAtMicros) {

    /** "FLSG". */
    public static final int MAGIC = 0x464C5347;
    public static final int VERSION_2 = 2;
    /** The version written unless a generation-start record must be held. */
    public static final int VERSION_3 = 3;
    /** The version written to hold a generation-start record. */
    public static final int VERSION_4 = 4;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int VERSION_LENGTH = 2;
    public static final int FLAGS_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int FLAGS_LENGTH = 2;
    public static final int BASE_OFFSET_OFFSET = FLAGS_OFFSET + FLAGS_LENGTH;
    public static final int BASE_OFFSET_LENGTH = 8;
    public static final int CREATED_AT_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH;
    public static final int CREATED_AT_LENGTH = 8;
    public static final int HEADER_CRC_OFFSET = CREATED_AT_OFFSET + CREATED_AT_LENGTH;
    public static final int HEADER_CRC_LENGTH = 4;
    public static final int RESERVED_OFFSET = HEADER_CRC_OFFSET + HEADER_CRC_LENGTH;
    public static final int RESERVED_LENGTH = 4;
    /** Size of the header; the first record starts here. */
    public static final int LENGTH = RESERVED_OFFSET + RESERVED_LENGTH;

    public SegmentHeader {
        if (!isReadableVersion(version)) {
            throw new IllegalArgumentException("segment version must be 2, 3 or 4, got " + version);
        }
    }

    /** A header as written by default: version 3. */
    public static SegmentHeader v3(long baseOffset, long createdAtMicros) {
        return new SegmentHeader(VERSION_3, baseOffset, createdAtMicros);
    }

    /** A version 4 header, for a segment that will hold a generation-start record. */
    public static SegmentHeader v4(long baseOffset, long createdAtMicros) {
        return new SegmentHeader(VERSION_4, baseOffset, createdAtMicros);
    }

    static boolean isReadableVersion(int version) {
        return version == VERSION_2 || version == VERSION_3 || version == VERSION_4;
    }

    /** True when records of {@code kind} may live in a segment of this version. */
    public boolean allows(RecordKind kind) {
        return kind.minimumSegmentVersion() <= version;
    }

    /** The 32 bytes of this header. */
    public byte[] encode() {
        ByteBuffer buf = ByteBuffer.allocate(LENGTH);
        buf.putInt(MAGIC_OFFSET, MAGIC);
        buf.putShort(VERSION_OFFSET, (short) version);
        buf.putShort(FLAGS_OFFSET, (short) 0);
        buf.putLong(BASE_OFFSET_OFFSET, baseOffset);
        buf.putLong(CREATED_AT_OFFSET, createdAtMicros);
        buf.putInt(HEADER_CRC_OFFSET, Crc32s.of(buf, 0, HEADER_CRC_OFFSET));
        buf.putInt(RESERVED_OFFSET, 0);
        return buf.array();
    }

    /**
     * Decodes a header from the bytes between {@code bytes}' position and limit (fewer than
     * {@link #LENGTH} is {@code Truncated}). {@code site} names the file; its position is ignored and
     * every error is reported at byte 0, the header's start.
     */
    public static SegmentHeader decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        CorruptionSite at = site.at(0);
        int available = bytes.remaining();
        if (available < LENGTH) {
            throw CorruptionException.truncated(at, "segment header", LENGTH, available);
        }
        ByteBuffer buf = bytes.slice(bytes.position(), LENGTH);
        int magic = buf.getInt(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw CorruptionException.of(CorruptionKind.SEGMENT_MAGIC, at,
                    String.format("magic 0x%08x, expected 0x%08x (FLSG)", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(buf.getShort(VERSION_OFFSET));
        if (!isReadableVersion(version)) {
            throw CorruptionException.of(CorruptionKind.SEGMENT_VERSION, at,
                    "segment version " + version + " is not readable (2, 3 and 4 are)");
        }
        int flags = Short.toUnsignedInt(buf.getShort(FLAGS_OFFSET));
        if (flags != 0) {
            throw CorruptionException.of(CorruptionKind.SEGMENT_FLAGS, at,
                    String.format("segment flags 0x%04x, expected 0", flags));
        }
        int stored = buf.getInt(HEADER_CRC_OFFSET);
        int computed = Crc32s.of(buf, 0, HEADER_CRC_OFFSET);
        if (stored != computed) {
            throw CorruptionException.checksum(CorruptionKind.SEGMENT_HEADER_CHECKSUM, at, "segment header", stored, computed);
        }
        return new SegmentHeader(version, buf.getLong(BASE_OFFSET_OFFSET), buf.getLong(CREATED_AT_OFFSET));
    }
}
