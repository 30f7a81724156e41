package dev.felix.offload.log;

import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Writes one new segment file: the header first, fsynced before any record, then records appended in
 * offset order, with the sparse index kept in memory (an entry for the first record, then one each
 * time {@code indexSpacingBytes} of segment data have passed) and written beside it on demand.
 *
 * <p>It refuses what the format forbids rather than writing it: an offset that does not follow, a
 * record kind the segment version cannot hold, a payload over the limit.
 */
public final class SegmentWriter implements Closeable {

    /** Default spacing of index entries. */
    public static final int DEFAULT_INDEX_SPACING_BYTES = 4096;

    private final FileChannel channel;
    private final SegmentFile file;
    private final SegmentHeader header;
    private final int indexSpacingBytes;
    private long position = SegmentHeader.LENGTH;
    private long nextOffset;
    private long lastIndexedPosition = -1;
    private long[] indexOffsets = new long[16];
    private long[] indexPositions = new long[16];
    private int indexCount;

    private SegmentWriter(FileChannel channel, SegmentFile file, SegmentHeader header, int indexSpacingBytes) {
        this.channel = channel;
        this.file = file;
        this.header = header;
        this.indexSpacingBytes = indexSpacingBytes;
        this.nextOffset = header.baseOffset();
    }

    /**
     * Creates {@code file.log()} (which must not exist) with {@code header}, syncing the header and the
     * directory entry before returning.
     */
    public static SegmentWriter create(SegmentFile file, SegmentHeader header, int indexSpacingBytes) throws IOException {
        if (indexSpacingBytes <= 0) {
            throw new IllegalArgumentException("index spacing must be positive, got " + indexSpacingBytes);
        }
        FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            writeFully(ch, ByteBuffer.wrap(header.encode()), 0);
            ch.force(true);
            DurableFiles.fsyncDirectory(file.log().toAbsolutePath().getParent());
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        return new SegmentWriter(ch, file, header, indexSpacingBytes);
    }

    /** Appends a record; its offset must be the next one. Not synced: call {@link #sync()}. */
    public void append(Record record) throws IOException {
        if (record.offset() != nextOffset) {
            throw new IllegalArgumentException("record offset " + record.offset() + " does not follow; expected "
                    + nextOffset);
        }
        if (!header.allows(record.kind())) {
            throw new IllegalArgumentException("a " + record.kind().label() + " record needs a segment of version "
                    + record.kind().minimumSegmentVersion() + "; " + file.logName() + " is version " + header.version());
        }
        byte[] bytes = RecordCodec.encode(record);
        if (lastIndexedPosition < 0 || position - lastIndexedPosition >= indexSpacingBytes) {
            addIndexEntry(record.offset(), position);
        }
        writeFully(channel, ByteBuffer.wrap(bytes), position);
        position += bytes.length;
        nextOffset++;
    }

    private void addIndexEntry(long offset, long at) {
        if (indexCount == indexOffsets.length) {
            indexOffsets = Arrays.copyOf(indexOffsets, indexCount * 2);
            indexPositions = Arrays.copyOf(indexPositions, indexCount * 2);
        }
        indexOffsets[indexCount] = offset;
        indexPositions[indexCount] = at;
        indexCount++;
        lastIndexedPosition = at;
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        long p = at;
        while (buf.hasRemaining()) {
            p += ch.write(buf, p);
        }
    }

    /** fsyncs the records appended so far. */
    public void sync() throws IOException {
        channel.force(false);
    }

    /** The index of the records appended so far. */
    public SegmentIndex index() {
        return SegmentIndex.of(header.baseOffset(), Arrays.copyOf(indexOffsets, indexCount),
                Arrays.copyOf(indexPositions, indexCount));
    }

    /** Writes {@link #index()} to {@code file.index()} through a temporary and a rename (it is derived: no fsync). */
    public void writeIndex() throws IOException {
        DurableFiles.replace(file.index(), index().encode(), DurableFiles.Sync.NONE);
    }

    public SegmentHeader header() {
        return header;
    }

    public SegmentFile file() {
        return file;
    }

    /** Bytes written so far, header included. */
    public long size() {
        return position;
    }

    /** The offset the next record must carry. */
    public long nextOffset() {
        return nextOffset;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
