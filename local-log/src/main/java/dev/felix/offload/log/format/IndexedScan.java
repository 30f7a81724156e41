package dev.felix.offload.log.format;

import java.io.IOException;

/**
 * Reads a segment's records from a wanted offset, entering it at an index entry: the one way every
 * reader (a shard log, a reader of another process's shard, a reader of offloaded copies) finds
 * its records, whatever {@link SegmentSource} holds the bytes.
 *
 * <p>An index is never trusted (the spec keeps no checksums in it). An entry is used only when it
 * points inside the segment's records; the scan then checks the record there like any other, and
 * when that very record fails, the entry led nowhere: the reader is told, and the segment is
 * scanned from its start. A failure anywhere else is the segment's, and is thrown, after one
 * {@link SegmentSource#refetch} of the bytes from the failing record on, for a source whose bytes
 * may have been damaged on their way. Records before the wanted offset are stepped over by their
 * headers; every record taken had its checksum verified.
 */
public final class IndexedScan {

    private IndexedScan() {
    }

    /** An index entry: the record at byte {@code position} should carry {@code offset}. */
    public record Entry(long offset, long position) {
        /** No entry: scan from the segment's start. */
        public static final Entry NONE = new Entry(-1, -1);
    }

    /** Opens the segment anew, at its start. */
    @FunctionalInterface
    public interface Segment {
        SegmentScanner open() throws IOException, CorruptionException;
    }

    /** Told when an index entry led to no valid record; the scan goes on from the segment's start. */
    @FunctionalInterface
    public interface Distrust {
        void entryLedNowhere(Entry entry, CorruptionException why);
    }

    /** Where the records read go, and how many it may still take. */
    public interface Sink {
        /** True when nothing more may be taken. */
        boolean full();

        /** Whether the record {@code h} opens may be taken; false ends the scan before its payload is read. */
        boolean fits(RecordHeader h);

        /** Takes a verified record, which ends at byte {@code end} of the segment. */
        void take(Record record, long end);
    }

    /**
     * How a scan ended.
     *
     * @param stopped    true when the sink was full or refused a record, false at the segment's end
     * @param nextOffset the offset of the first record not taken (one past the segment's last at its end)
     */
    public record Outcome(boolean stopped, long nextOffset) {
    }

    /**
     * Scans {@code segment} from {@code entry} (or its start) into {@code sink}, taking records at
     * and after {@code want}.
     *
     * @throws CorruptionException when the segment's bytes fail a check other than the entry's record
     */
    public static Outcome read(Segment segment, Entry entry, long want, Sink sink, Distrust distrust)
            throws IOException, CorruptionException {
        Entry untrusted = entry;
        long resumeAt = -1;
        long resumeOffset = -1;
        long refetchedAt = -1;
        while (true) {
            SegmentScanner scanner = segment.open();
            try (scanner) {
                if (resumeAt >= 0) {
                    scanner.seek(resumeAt, resumeOffset);
                } else if (untrusted.position() > SegmentHeader.LENGTH && untrusted.position() < scanner.fileSize()) {
                    scanner.seek(untrusted.position(), untrusted.offset());
                } else {
                    untrusted = Entry.NONE;
                }
                return scan(scanner, want, sink);
            } catch (CorruptionException e) {
                long at = e.site().position();
                if (untrusted != Entry.NONE && at == untrusted.position()) {
                    distrust.entryLedNowhere(untrusted, e);
                    untrusted = Entry.NONE;
                    resumeAt = -1;
                    continue;
                }
                if (at != refetchedAt && at >= SegmentHeader.LENGTH && scanner.source().refetch(e)) {
                    refetchedAt = at;
                    resumeAt = scanner.position();
                    resumeOffset = scanner.nextOffset();
                    continue;
                }
                throw e;
            }
        }
    }

    private static Outcome scan(SegmentScanner scanner, long want, Sink sink) throws IOException, CorruptionException {
        while (Long.compareUnsigned(scanner.nextOffset(), want) < 0) {
            if (scanner.nextHeader() == null) {
                return new Outcome(false, scanner.nextOffset());
            }
        }
        while (!sink.full()) {
            RecordHeader h = scanner.peekHeader();
            if (h == null) {
                return new Outcome(false, scanner.nextOffset());
            }
            if (!sink.fits(h)) {
                return new Outcome(true, scanner.nextOffset());
            }
            Record r = scanner.nextRecord();
            sink.take(r, scanner.position());
        }
        return new Outcome(true, scanner.nextOffset());
    }
}
