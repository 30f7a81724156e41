package dev.felix.offload.log;

import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Appends to one segment: the active segment of a shard, or a segment written on its own. The header
 * is written and fsynced before any record; records are appended in offset order; the sparse index
 * (an entry for the first record, then one each time {@code indexSpacingBytes} of segment data have
 * passed) is kept in memory for readers and appended to the {@code .index} file as it grows, without
 * a flush: an index is derived, and a torn final entry is dropped on load.
 *
 * <p>One thread appends. {@link #size()} and {@link #nextOffset()} are published after the bytes are
 * written, so a reader bounded by {@link #size()} only ever sees whole records.
 *
 * <p>It refuses what the format forbids rather than writing it: an offset that does not follow, or a
 * record kind the segment version cannot hold.
 */
public final class SegmentWriter implements Closeable {

    /** Default spacing of index entries. */
    public static final int DEFAULT_INDEX_SPACING_BYTES = 4096;

    private final FileChannel channel;
    private final FileChannel indexChannel;
    private final SegmentFile file;
    private final SegmentHeader header;
    private final GrowingIndex index;
    private volatile long size;
    private volatile long nextOffset;
    private long indexFileSize;
    private boolean closed;

    private SegmentWriter(FileChannel channel, FileChannel indexChannel, SegmentFile file, SegmentHeader header,
                          GrowingIndex index, long size, long nextOffset) throws IOException {
        this.channel = channel;
        this.indexChannel = indexChannel;
        this.file = file;
        this.header = header;
        this.index = index;
        this.size = size;
        this.nextOffset = nextOffset;
        this.indexFileSize = indexChannel.size();
    }

    /**
     * Creates {@code file.log()} (which must not exist) with {@code header}, and a fresh index file
     * beside it. The header is written to a temporary, fsynced, and moved into place atomically (then
     * the directory is fsynced), so a crash never leaves a segment file without its whole header: the
     * segment either does not exist or has a durable header. (Segment-header damage is never
     * repairable, so a process killed mid-creation must not be able to leave a blank segment behind.)
     */
    public static SegmentWriter create(SegmentFile file, SegmentHeader header, int indexSpacingBytes) throws IOException {
        requirePositive(indexSpacingBytes);
        if (Files.exists(file.log(), LinkOption.NOFOLLOW_LINKS)) {
            throw new FileAlreadyExistsException(file.log().toString());
        }
        Path temp = file.log().resolveSibling(file.logName() + DurableFiles.TEMP_SUFFIX);
        try (FileChannel t = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            writeFully(t, ByteBuffer.wrap(header.encode()), 0);
            t.force(true);
        } catch (IOException e) {
            throw DurableFiles.naming(temp, e);
        }
        Files.move(temp, file.log(), StandardCopyOption.ATOMIC_MOVE);
        DurableFiles.fsyncDirectory(file.log().toAbsolutePath().getParent());
        FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.WRITE);
        try {
            GrowingIndex index = new GrowingIndex(header.baseOffset(), indexSpacingBytes);
            FileChannel ich = openIndex(file, index.snapshot());
            return new SegmentWriter(ch, ich, file, header, index, SegmentHeader.LENGTH, header.baseOffset());
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Reopens an existing segment for appending after recovery: its valid records end at
     * {@code validEnd} (the file must already have been cut there) and the next record carries
     * {@code nextOffset}. {@code index} is the segment's index, rebuilt from its records; it replaces
     * the index file.
     */
    public static SegmentWriter reopen(SegmentFile file, SegmentHeader header, long validEnd, long nextOffset,
                                       SegmentIndex index, int indexSpacingBytes) throws IOException {
        requirePositive(indexSpacingBytes);
        FileChannel ch = FileChannel.open(file.log(), StandardOpenOption.WRITE);
        try {
            if (ch.size() != validEnd) {
                throw new IllegalStateException(file.log() + " is " + ch.size() + " bytes, expected " + validEnd
                        + " after recovery");
            }
            FileChannel ich = openIndex(file, index);
            return new SegmentWriter(ch, ich, file, header, GrowingIndex.of(index, indexSpacingBytes), validEnd,
                    nextOffset);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static void requirePositive(int indexSpacingBytes) {
        if (indexSpacingBytes <= 0) {
            throw new IllegalArgumentException("index spacing must be positive, got " + indexSpacingBytes);
        }
    }

    private static FileChannel openIndex(SegmentFile file, SegmentIndex index) throws IOException {
        DurableFiles.replace(file.index(), index.encode(), DurableFiles.Sync.NONE);
        return FileChannel.open(file.index(), StandardOpenOption.WRITE);
    }

    /** Appends a record; its offset must be the next one. Not synced: call {@link #sync()}. */
    public void append(Record record) throws IOException {
        appendAll(List.of(record));
    }

    /**
     * Appends records with one write; their offsets must follow on from {@link #nextOffset()}. Either
     * every record is checked before a byte is written, or none is written.
     */
    public void appendAll(List<Record> records) throws IOException {
        if (closed) {
            throw new IllegalStateException(file.logName() + " is sealed or closed");
        }
        long expected = nextOffset;
        int total = 0;
        for (Record r : records) {
            if (r.offset() != expected) {
                throw new IllegalArgumentException("record offset " + r.offset() + " does not follow; expected "
                        + expected);
            }
            if (!header.allows(r.kind())) {
                throw new IllegalArgumentException("a " + r.kind().label() + " record needs a segment of version "
                        + r.kind().minimumSegmentVersion() + "; " + file.logName() + " is version " + header.version());
            }
            total = Math.addExact(total, r.encodedLength());
            expected++;
        }
        ByteBuffer buf = ByteBuffer.allocate(total);
        long at = size;
        ByteBuffer newEntries = ByteBuffer.allocate(records.size() * SegmentIndex.ENTRY_LENGTH);
        for (Record r : records) {
            long recordPosition = at + buf.position();
            if (index.due(recordPosition)) {
                index.add(r.offset(), recordPosition);
                newEntries.putLong(r.offset()).putLong(recordPosition);
            }
            RecordCodec.encodeInto(r, buf);
        }
        try {
            writeFully(channel, buf.flip(), at);
        } catch (IOException e) {
            throw DurableFiles.naming(file.log(), e);
        }
        if (newEntries.position() > 0) {
            newEntries.flip();
            int n = newEntries.remaining();
            try {
                writeFully(indexChannel, newEntries, indexFileSize);
            } catch (IOException e) {
                throw DurableFiles.naming(file.index(), e);
            }
            indexFileSize += n;
        }
        nextOffset = expected;
        size = at + total; // published last: readers bounded by size see whole records only
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        long p = at;
        while (buf.hasRemaining()) {
            p += ch.write(buf, p);
        }
    }

    /** fsyncs the records appended so far. */
    public void sync() throws IOException {
        try {
            channel.force(false);
        } catch (IOException e) {
            throw DurableFiles.naming(file.log(), e);
        }
    }

    /**
     * Seals the segment: its data and index are flushed and it is never written again. Closes the
     * writer.
     */
    public void seal() throws IOException {
        if (closed) {
            return;
        }
        try {
            channel.force(true);
        } catch (IOException e) {
            throw DurableFiles.naming(file.log(), e);
        }
        try {
            indexChannel.force(true);
        } catch (IOException e) {
            throw DurableFiles.naming(file.index(), e);
        }
        close();
    }

    /** The index of the records appended so far. */
    public SegmentIndex index() {
        return index.snapshot();
    }

    /** Looks up where to start reading for {@code offset}; safe from any thread. */
    GrowingIndex.Hit seek(long offset) {
        return index.seek(offset);
    }

    /**
     * Flushes the index file. It already holds every entry (entries are appended as records are), so
     * this only matters to a caller that wants the index on the device before sealing.
     */
    public void writeIndex() throws IOException {
        if (!closed) {
            indexChannel.force(true);
        }
    }

    public SegmentHeader header() {
        return header;
    }

    public SegmentFile file() {
        return file;
    }

    /** Bytes written so far, header included; safe from any thread. */
    public long size() {
        return size;
    }

    /** The offset the next record must carry; safe from any thread. */
    public long nextOffset() {
        return nextOffset;
    }

    /** True when no record has been appended. */
    public boolean isEmpty() {
        return nextOffset == header.baseOffset();
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try (indexChannel) {
            channel.close();
        }
    }
}
