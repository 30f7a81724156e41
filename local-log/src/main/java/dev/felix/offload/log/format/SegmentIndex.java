package dev.felix.offload.log.format;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * The sparse offset index of one segment ({@code *.index}), and its codec.
 *
 * <pre>
 *  header (24 bytes)
 *   offset  size  field
 *    0      4     magic        0x464C5349 "FLSI"
 *    4      2     version      3 when written; 2 and 4 are read (same layout)
 *    6      2     flags        0
 *    8      8     base_offset  must equal the segment's base_offset
 *   16      8     reserved     0
 *  entries (16 bytes each, strictly ascending by offset)
 *    0      8     offset
 *    8      8     position     byte position of that record in the segment
 * </pre>
 *
 * <p>An index is never trusted: an entry is only a place to start a scan that re-validates real
 * records, and an index that fails to load is rebuilt from its segment. It carries no checksum. A
 * torn final entry, left by a crash mid-append, is dropped on load.
 *
 * <p>Decoding raises {@code IndexMagic}, {@code IndexVersion}, {@code SegmentFlags} (the spec has no
 * separate kind for index flags), {@code Truncated} for a file shorter than its header, and
 * {@code OffsetOutOfOrder} for entries that do not ascend strictly.
 */
public final class SegmentIndex {

    /** "FLSI". */
    public static final int MAGIC = 0x464C5349;
    public static final int VERSION_WRITTEN = 3;

    // Both file kinds begin alike (the spec): magic, version, flags and base offset where a segment
    // header has them; only the magic and what follows the base offset differ.
    public static final int MAGIC_OFFSET = SegmentHeader.MAGIC_OFFSET;
    public static final int MAGIC_LENGTH = SegmentHeader.MAGIC_LENGTH;
    public static final int VERSION_OFFSET = SegmentHeader.VERSION_OFFSET;
    public static final int VERSION_LENGTH = SegmentHeader.VERSION_LENGTH;
    public static final int FLAGS_OFFSET = SegmentHeader.FLAGS_OFFSET;
    public static final int FLAGS_LENGTH = SegmentHeader.FLAGS_LENGTH;
    public static final int BASE_OFFSET_OFFSET = SegmentHeader.BASE_OFFSET_OFFSET;
    public static final int BASE_OFFSET_LENGTH = SegmentHeader.BASE_OFFSET_LENGTH;
    public static final int RESERVED_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH;
    public static final int RESERVED_LENGTH = 8;
    public static final int HEADER_LENGTH = RESERVED_OFFSET + RESERVED_LENGTH;

    public static final int ENTRY_OFFSET_OFFSET = 0;
    public static final int ENTRY_OFFSET_LENGTH = 8;
    public static final int ENTRY_POSITION_OFFSET = ENTRY_OFFSET_OFFSET + ENTRY_OFFSET_LENGTH;
    public static final int ENTRY_POSITION_LENGTH = 8;
    public static final int ENTRY_LENGTH = ENTRY_POSITION_OFFSET + ENTRY_POSITION_LENGTH;

    /**
     * Largest index file loaded: 2^24 entries (256 MiB of index), far beyond any real segment's sparse
     * index. The file size, not a stored count, sizes the arrays, and it is checked first.
     */
    public static final long MAX_FILE_BYTES = HEADER_LENGTH + (long) ENTRY_LENGTH * (1 << 24);

    private final int version;
    private final long baseOffset;
    private final long[] offsets;
    private final long[] positions;

    private SegmentIndex(int version, long baseOffset, long[] offsets, long[] positions) {
        this.version = version;
        this.baseOffset = baseOffset;
        this.offsets = offsets;
        this.positions = positions;
    }

    /**
     * An index to write (version 3). Offsets must ascend strictly; both arrays are copied.
     */
    public static SegmentIndex of(long baseOffset, long[] offsets, long[] positions) {
        if (offsets.length != positions.length) {
            throw new IllegalArgumentException("offsets and positions differ in length");
        }
        for (int i = 1; i < offsets.length; i++) {
            if (Long.compareUnsigned(offsets[i], offsets[i - 1]) <= 0) {
                throw new IllegalArgumentException("index offsets must ascend strictly: " + offsets[i - 1]
                        + " then " + offsets[i]);
            }
        }
        return new SegmentIndex(VERSION_WRITTEN, baseOffset, offsets.clone(), positions.clone());
    }

    public int version() {
        return version;
    }

    public long baseOffset() {
        return baseOffset;
    }

    public int size() {
        return offsets.length;
    }

    public long offsetAt(int i) {
        return offsets[i];
    }

    public long positionAt(int i) {
        return positions[i];
    }

    /**
     * Where to start scanning for {@code offset}: the position of the last entry whose offset is at or
     * below it, or -1 when the offset lies below the first entry (scan from the segment header's end).
     */
    public long seekPosition(long offset) {
        int i = entryAtOrBelow(offset);
        return i < 0 ? -1 : positions[i];
    }

    /** The index of the last entry whose offset is at or below {@code offset}, or -1 when there is none. */
    public int entryAtOrBelow(long offset) {
        return countAtOrBelow(offsets, offsets.length, offset) - 1;
    }

    /** This index without the entries at or after {@code offset} (for a segment cut at that offset). */
    public SegmentIndex below(long offset) {
        int keep = countBelow(offsets, offsets.length, offset);
        return new SegmentIndex(VERSION_WRITTEN, baseOffset, Arrays.copyOf(offsets, keep), Arrays.copyOf(positions, keep));
    }

    /**
     * How many of the first {@code n} entries of {@code sorted} (strictly ascending, read as unsigned
     * 64-bit offsets, as the format defines them) are at or below {@code offset}.
     */
    public static int countAtOrBelow(long[] sorted, int n, long offset) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(sorted[mid], offset) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** How many of the first {@code n} entries of {@code sorted} lie strictly below {@code offset} (unsigned). */
    public static int countBelow(long[] sorted, int n, long offset) {
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(sorted[mid], offset) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The file's bytes, at version 3. */
    public byte[] encode() {
        ByteBuffer buf = ByteBuffer.allocate(HEADER_LENGTH + ENTRY_LENGTH * offsets.length);
        buf.putInt(MAGIC_OFFSET, MAGIC);
        buf.putShort(VERSION_OFFSET, (short) VERSION_WRITTEN);
        buf.putShort(FLAGS_OFFSET, (short) 0);
        buf.putLong(BASE_OFFSET_OFFSET, baseOffset);
        buf.putLong(RESERVED_OFFSET, 0);
        for (int i = 0; i < offsets.length; i++) {
            int at = HEADER_LENGTH + i * ENTRY_LENGTH;
            buf.putLong(at + ENTRY_OFFSET_OFFSET, offsets[i]);
            buf.putLong(at + ENTRY_POSITION_OFFSET, positions[i]);
        }
        return buf.array();
    }

    /** Decodes an index from the bytes between {@code bytes}' position and limit. */
    public static SegmentIndex decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        int p = bytes.position();
        int available = bytes.remaining();
        if (available < HEADER_LENGTH) {
            throw CorruptionException.truncated(site.at(0), "index header", HEADER_LENGTH, available);
        }
        int magic = bytes.getInt(p + MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw CorruptionException.of(CorruptionKind.INDEX_MAGIC, site.at(0),
                    String.format("magic 0x%08x, expected 0x%08x (FLSI)", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(bytes.getShort(p + VERSION_OFFSET));
        if (!SegmentHeader.isReadableVersion(version)) {
            throw CorruptionException.of(CorruptionKind.INDEX_VERSION, site.at(0),
                    "index version " + version + " is not readable (2, 3 and 4 are)");
        }
        int flags = Short.toUnsignedInt(bytes.getShort(p + FLAGS_OFFSET));
        if (flags != 0) {
            throw CorruptionException.of(CorruptionKind.SEGMENT_FLAGS, site.at(0),
                    String.format("index flags 0x%04x, expected 0", flags));
        }
        long base = bytes.getLong(p + BASE_OFFSET_OFFSET);
        // A torn final entry is what a crash mid-append leaves: read up to the last whole entry.
        int count = (available - HEADER_LENGTH) / ENTRY_LENGTH;
        long[] offsets = new long[count];
        long[] positions = new long[count];
        for (int i = 0; i < count; i++) {
            int at = p + HEADER_LENGTH + i * ENTRY_LENGTH;
            offsets[i] = bytes.getLong(at + ENTRY_OFFSET_OFFSET);
            positions[i] = bytes.getLong(at + ENTRY_POSITION_OFFSET);
            if (i > 0 && Long.compareUnsigned(offsets[i], offsets[i - 1]) <= 0) {
                throw CorruptionException.of(CorruptionKind.OFFSET_OUT_OF_ORDER, site.at(at - p),
                        "index entry " + i + " has offset " + Long.toUnsignedString(offsets[i]) + ", not above "
                                + Long.toUnsignedString(offsets[i - 1]));
            }
        }
        return new SegmentIndex(version, base, offsets, positions);
    }

    /**
     * Decodes a run of whole entries cut from the middle of an index file, {@code fileOffset} being
     * where the run starts in the file (which must be at an entry's start): for a reader that fetched
     * only the part of a large remote index it needs. The header is not among these bytes, so
     * {@code baseOffset} is taken from the caller; like every index entry these are only places to
     * start a scan that checks what it finds there. Entries must ascend strictly.
     */
    public static SegmentIndex decodeEntries(ByteBuffer bytes, long fileOffset, long baseOffset, CorruptionSite site)
            throws CorruptionException {
        if (fileOffset < HEADER_LENGTH || (fileOffset - HEADER_LENGTH) % ENTRY_LENGTH != 0) {
            throw new IllegalArgumentException("byte " + fileOffset + " is not the start of an index entry");
        }
        int p = bytes.position();
        int count = bytes.remaining() / ENTRY_LENGTH;
        long[] offsets = new long[count];
        long[] positions = new long[count];
        for (int i = 0; i < count; i++) {
            int at = p + i * ENTRY_LENGTH;
            offsets[i] = bytes.getLong(at + ENTRY_OFFSET_OFFSET);
            positions[i] = bytes.getLong(at + ENTRY_POSITION_OFFSET);
            if (i > 0 && Long.compareUnsigned(offsets[i], offsets[i - 1]) <= 0) {
                throw CorruptionException.of(CorruptionKind.OFFSET_OUT_OF_ORDER, site.at(fileOffset + (long) i * ENTRY_LENGTH),
                        "index entry " + ((fileOffset - HEADER_LENGTH) / ENTRY_LENGTH + i) + " has offset "
                                + Long.toUnsignedString(offsets[i]) + ", not above " + Long.toUnsignedString(offsets[i - 1]));
            }
        }
        return new SegmentIndex(VERSION_WRITTEN, baseOffset, offsets, positions);
    }

    /** Reads and decodes an index file; the file size is bounded by {@link #MAX_FILE_BYTES} before reading. */
    public static SegmentIndex read(Path file, String shard, long segmentId) throws IOException, CorruptionException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            CorruptionSite site = new CorruptionSite(shard, segmentId, 0, file.getFileName().toString());
            if (size > MAX_FILE_BYTES) {
                throw CorruptionException.of(CorruptionKind.INDEX_MAGIC, site, "index file of " + size
                        + " bytes is over the limit of " + MAX_FILE_BYTES + "; not an index");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            for (int n = 0; n >= 0 && buf.hasRemaining(); ) {
                n = ch.read(buf); // a file that shrank meanwhile decodes as truncated
            }
            return decode(buf.flip(), site);
        }
    }

    @Override
    public String toString() {
        return "SegmentIndex{version=" + version + ", baseOffset=" + baseOffset + ", entries=" + offsets.length + "}";
    }
}
