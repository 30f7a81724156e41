package dev.felix.offload.log.format;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Walks a segment record by record, checking everything the format promises.
 *
 * <p>{@link #open} reads and checks the 32-byte header. Then either:
 * <ul>
 *   <li>{@link #nextHeader()} steps from header to header ({@code position + 28}, {@code + 20} when a
 *       batch opens, {@code + payload_len}) without reading payloads: what an index rebuild or a
 *       position lookup needs. Record checksums are not verified in this mode.</li>
 *   <li>{@link #nextRecord()} reads each record whole and verifies its checksum.</li>
 * </ul>
 * Both check, for every record: enough bytes for a header ({@code Truncated}), the header CRC before
 * any other field is used ({@code RecordHeaderChecksum}), the kind bits against the segment version
 * ({@code RecordFlags}), the length limit before any allocation ({@code RecordTooLarge}), offsets
 * contiguous from the header's base offset ({@code OffsetOutOfOrder}), and that the file holds the
 * whole record ({@code Truncated}, measured against the file size, so no bytes are read for it).
 *
 * <p>On a {@link CorruptionException} the scanner stays at the damaged record: {@link #position()}
 * is the end of the last valid record, which is where a repair would truncate. Scanning further
 * after an exception is not allowed.
 *
 * <p>The file size is taken once at open (or given as an end position); bytes appended later are not
 * seen.
 *
 * <p>The bytes come from a {@link SegmentSource}: a local file for {@link #open}, any other holder
 * for {@link #over}. The checks are the same whatever the source.
 */
public final class SegmentScanner implements Closeable {

    /** Read-ahead when only headers are wanted: small, since payloads are skipped. */
    static final int HEADER_WINDOW = 4 * 1024;
    /** Read-ahead when whole records are read. */
    static final int RECORD_WINDOW = 256 * 1024;

    private final SegmentSource source;
    private final CorruptionSite site;
    private final long fileSize;
    private final SegmentHeader header;

    private final java.util.zip.CRC32 validBytesCrc = new java.util.zip.CRC32();
    private long position = SegmentHeader.LENGTH;
    private long nextOffset;
    private long recordCount;
    private boolean failed;
    /** False once bytes were skipped, so the running CRC no longer covers everything before position. */
    private boolean crcValid = true;
    /** The header {@link #peekHeader()} checked, until its record is stepped over or read. */
    private RecordHeader peeked;

    private SegmentScanner(SegmentSource source, CorruptionSite site) throws IOException, CorruptionException {
        this.source = source;
        this.site = site;
        this.fileSize = source.size();
        ByteBuffer head = source.read(0, (int) Math.min(SegmentHeader.LENGTH, fileSize));
        this.header = SegmentHeader.decode(head.duplicate(), site);
        validBytesCrc.update(head.duplicate());
        this.nextOffset = header.baseOffset();
    }

    private SegmentScanner(SegmentSource source, CorruptionSite site, SegmentHeader header) {
        this.source = source;
        this.site = site;
        this.fileSize = source.size();
        this.header = header;
        this.nextOffset = header.baseOffset();
        this.crcValid = false;
    }

    /**
     * Opens a segment and checks its header.
     *
     * @param file            the segment file
     * @param shard           the shard directory name, for error sites
     * @param segmentId       the segment id, for error sites ({@link CorruptionSite#UNKNOWN_SEGMENT} if none)
     * @param depth           {@link ScanDepth#RECORDS} to read whole records ({@link #nextRecord()}), {@link ScanDepth#HEADERS} to step over bodies
     */
    public static SegmentScanner open(Path file, String shard, long segmentId, ScanDepth depth)
            throws IOException, CorruptionException {
        return open(file, shard, segmentId, depth, -1);
    }

    /**
     * Opens a segment and checks its header, seeing only its first {@code endPosition} bytes (all of
     * it when negative): a reader of a segment being appended to passes the size published by the
     * writer, so it never sees a record that is not yet whole.
     */
    public static SegmentScanner open(Path file, String shard, long segmentId, ScanDepth depth, long endPosition)
            throws IOException, CorruptionException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        try {
            CorruptionSite site = new CorruptionSite(shard, segmentId, 0);
            return new SegmentScanner(new FileSegmentSource(channel, site,
                    depth.wholeRecords() ? RECORD_WINDOW : HEADER_WINDOW, endPosition), site);
        } catch (IOException | CorruptionException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * A scanner of the segment {@code source} holds, which reads and checks its header first;
     * {@code site} names the segment in errors. Closing the scanner closes the source.
     */
    public static SegmentScanner over(SegmentSource source, CorruptionSite site) throws IOException, CorruptionException {
        return new SegmentScanner(source, site);
    }

    /**
     * A scanner of the segment {@code source} holds whose header the caller has already read and
     * checked (it keeps headers of segments it reads often). {@link #validBytesCrc32()} is not
     * available: the header's bytes were not read here.
     */
    public static SegmentScanner over(SegmentSource source, CorruptionSite site, SegmentHeader header) {
        return new SegmentScanner(source, site, header);
    }

    /**
     * As {@link #open(Path, String, long, ScanDepth)}, over a channel already open on the segment (one
     * that counts or digests what is read, say); the scanner owns it from here and closes it.
     */
    public static SegmentScanner open(FileChannel channel, String shard, long segmentId, ScanDepth depth)
            throws IOException, CorruptionException {
        try {
            CorruptionSite site = new CorruptionSite(shard, segmentId, 0);
            return new SegmentScanner(new FileSegmentSource(channel, site,
                    depth.wholeRecords() ? RECORD_WINDOW : HEADER_WINDOW, -1), site);
        } catch (IOException | CorruptionException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Moves the scan to a record boundary known from elsewhere (an index entry): the record at
     * {@code position} must carry {@code offset}. Only before the first record is read. An index is
     * never trusted, so a wrong position shows up as corruption at that position; the caller then
     * scans from the start instead.
     */
    public void seek(long position, long offset) {
        if (recordCount != 0 || failed || peeked != null) {
            throw new IllegalStateException("seek only before the first record");
        }
        if (position < SegmentHeader.LENGTH || position > fileSize) {
            throw new IllegalArgumentException("position " + position + " outside the segment's records (32.."
                    + fileSize + ")");
        }
        this.position = position;
        this.nextOffset = offset;
        this.crcValid = position == SegmentHeader.LENGTH;
    }

    public SegmentHeader header() {
        return header;
    }

    /** The segment's size as this scan sees it: the file's at open or the end given, else the source's. */
    public long fileSize() {
        return fileSize;
    }

    /** Byte position just past the last record returned: the valid length of the segment so far. */
    public long position() {
        return position;
    }

    /** The offset the next record must carry: one past the last record returned, or the base offset. */
    public long nextOffset() {
        return nextOffset;
    }

    /** Records returned so far. */
    public long recordCount() {
        return recordCount;
    }

    /** The file this scanner reads, as an error site at byte 0. */
    public CorruptionSite site() {
        return site;
    }

    SegmentSource source() {
        return source;
    }

    /**
     * The next record's header, checked as the class comment says, without reading its payload; null
     * at a clean end of file.
     */
    public RecordHeader nextHeader() throws IOException, CorruptionException {
        RecordHeader h = peekHeader();
        if (h != null) {
            crcValid = false; // payload bytes were not read
            advance(h);
        }
        return h;
    }

    /**
     * The next record's header, checked as {@link #nextHeader()} checks it, without moving past it:
     * the next {@link #nextHeader()} or {@link #nextRecord()} is about that record. Lets a reader
     * decide on a record's length before its payload is read. Null at a clean end of file.
     */
    public RecordHeader peekHeader() throws IOException, CorruptionException {
        if (peeked == null) {
            peeked = checkedHeader();
        }
        return peeked;
    }

    /**
     * CRC-32 of the bytes from the start of the file to {@link #position()}: the header and every
     * record returned by {@link #nextRecord()}. What an upload of the segment's valid bytes must carry.
     *
     * @throws IllegalStateException after {@link #nextHeader()} or {@link #seek}, which skip bytes
     */
    public long validBytesCrc32() {
        if (!crcValid) {
            throw new IllegalStateException("the CRC covers whole reads from the start only");
        }
        return validBytesCrc.getValue();
    }

    /** The next record, read whole and checksum-verified; null at a clean end of file. */
    public Record nextRecord() throws IOException, CorruptionException {
        RecordHeader h = peekHeader();
        if (h == null) {
            return null;
        }
        // Bounded: totalLength <= MAX_HEADER_LENGTH + MAX_PAYLOAD_BYTES, checked in decodePrefix.
        ByteBuffer bytes = source.read(h.position(), h.totalLength());
        Record record;
        try {
            record = RecordCodec.decodeBody(h, bytes.duplicate(), site, source.buffersStay());
        } catch (CorruptionException e) {
            failed = true;
            throw e;
        }
        passed(h, bytes);
        return record;
    }

    /**
     * The next record's header, after its whole record was read and checksum-verified as
     * {@link #nextRecord()} verifies it, and counted in {@link #validBytesCrc32()}; its payload is
     * neither copied nor kept. For readers that check a segment and take only what headers say
     * (recovery, the offload's one pass), so the payload bytes are not copied a second time. Null
     * at a clean end of file.
     */
    public RecordHeader nextChecked() throws IOException, CorruptionException {
        RecordHeader h = peekHeader();
        if (h == null) {
            return null;
        }
        // Bounded: totalLength <= MAX_HEADER_LENGTH + MAX_PAYLOAD_BYTES, checked in decodePrefix.
        ByteBuffer bytes = source.read(h.position(), h.totalLength());
        try {
            RecordCodec.verifyBody(h, bytes, site);
        } catch (CorruptionException e) {
            failed = true;
            throw e;
        }
        passed(h, bytes);
        return h;
    }

    private void passed(RecordHeader h, ByteBuffer bytes) {
        if (crcValid) {
            validBytesCrc.update(bytes);
        }
        advance(h);
    }

    private void advance(RecordHeader h) {
        peeked = null;
        position = h.end();
        nextOffset = h.offset() + 1;
        recordCount++;
    }

    private RecordHeader checkedHeader() throws IOException, CorruptionException {
        if (failed) {
            throw new IllegalStateException("scanner stopped at corruption; position " + position);
        }
        try {
            long available = fileSize - position;
            if (available == 0) {
                return null;
            }
            if (available < RecordCodec.HEADER_LENGTH) {
                throw CorruptionException.truncated(site.at(position), "record header", RecordCodec.HEADER_LENGTH, available);
            }
            int headerBytes = (int) Math.min(available, RecordCodec.MAX_HEADER_LENGTH);
            ByteBuffer bytes = source.read(position, headerBytes);
            RecordHeader h = RecordCodec.decodePrefix(bytes, position, header.version(), site);
            // Offset before length: a wrong offset is damage, not a torn write, wherever the file ends.
            if (h.offset() != nextOffset) {
                throw CorruptionException.of(CorruptionKind.OFFSET_OUT_OF_ORDER, site.at(position), "record offset "
                        + Long.toUnsignedString(h.offset()) + ", expected " + Long.toUnsignedString(nextOffset)
                        + (recordCount == 0 ? " (the segment's base offset)" : ""));
            }
            if (available < h.totalLength()) {
                throw CorruptionException.truncated(site.at(position), "record " + Long.toUnsignedString(h.offset()), h.totalLength(),
                        available);
            }
            return h.kind().hasTag() ? RecordCodec.withTag(h, bytes) : h;
        } catch (CorruptionException e) {
            failed = true;
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        source.close();
    }
}
