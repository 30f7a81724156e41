package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.IndexedScan;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScanner;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads a shard directory that another process (the broker) owns and appends to: it never writes,
 * never repairs, and treats a torn record at the end of the newest segment as the end of the data
 * (the writer may be in the middle of it). Every record returned had its checksum verified; other
 * damage is a {@link CorruptionException}. Segments may disappear between two reads (retention,
 * offload); a read then simply sees the new first offset.
 *
 * <p>Safe for concurrent use.
 */
public final class ShardReader {

    private final Path dir;
    private final String shard;
    /** Headers of segments seen, by id: a header never changes once written. */
    private final Map<Long, SegmentHeader> headers = new ConcurrentHashMap<>();
    /** Indexes of segments seen while sealed, by id; only a start position, re-validated on use. */
    private final Map<Long, SegmentIndex> indexes = new ConcurrentHashMap<>();

    public ShardReader(Path dir) {
        this(dir, DataRoot.Shard.nameOf(dir));
    }

    /** A reader of {@code dir}, naming it {@code shard} (its path under the data root) in errors. */
    public ShardReader(Path dir, String shard) {
        this.dir = dir;
        this.shard = shard;
    }

    /** A segment as it is now. */
    private record Seg(SegmentFile file, SegmentHeader header, boolean newest) {
    }

    private List<Seg> segments() throws IOException, CorruptionException {
        List<SegmentFile> files = SegmentFile.list(dir);
        List<Seg> out = new ArrayList<>(files.size());
        for (int i = 0; i < files.size(); i++) {
            SegmentFile f = files.get(i);
            SegmentHeader h = headers.get(f.id());
            if (h == null) {
                try {
                    h = readHeader(f);
                } catch (NoSuchFileException gone) {
                    continue; // removed since the listing
                }
                headers.put(f.id(), h);
            }
            out.add(new Seg(f, h, i == files.size() - 1));
        }
        return out;
    }

    private SegmentHeader readHeader(SegmentFile f) throws IOException, CorruptionException {
        try (FileChannel ch = FileChannel.open(f.log(), StandardOpenOption.READ)) {
            ByteBuffer head = ByteBuffer.allocate(SegmentHeader.LENGTH);
            while (head.hasRemaining()) {
                if (ch.read(head) < 0) {
                    break; // a file shorter than a header: the decode names it truncated
                }
            }
            return SegmentHeader.decode(head.flip(), new CorruptionSite(shard, f.id(), 0));
        }
    }

    /** The oldest offset held locally, or empty when the directory holds no segment. */
    public OptionalLong firstOffset() throws IOException, CorruptionException {
        List<Seg> segs = segments();
        return segs.isEmpty() ? OptionalLong.empty() : OptionalLong.of(segs.get(0).header().baseOffset());
    }

    /** Where {@link #endOffset} last got to in the newest segment, so the next call resumes there. */
    private record End(long segmentId, long position, long offset) {
    }

    private volatile End end;

    /**
     * One past the last whole record held locally (a torn record the writer is still finishing does not
     * count), or empty when the directory holds no segment. Walks only record headers of the newest
     * segment, from where the last call ended.
     */
    public OptionalLong endOffset() throws IOException, CorruptionException {
        List<Seg> segs = segments();
        if (segs.isEmpty()) {
            return OptionalLong.empty();
        }
        Seg newest = segs.get(segs.size() - 1);
        End known = end;
        try (SegmentScanner scanner = SegmentScanner.open(newest.file().log(), shard, newest.file().id(), ScanDepth.HEADERS)) {
            if (known != null && known.segmentId() == newest.file().id() && known.position() > SegmentHeader.LENGTH
                    && known.position() <= scanner.fileSize()) {
                scanner.seek(known.position(), known.offset());
            }
            try {
                while (scanner.nextHeader() != null) {
                    // headers only: each one verified, no payload read
                }
            } catch (CorruptionException e) {
                if (e.kind() != CorruptionKind.TRUNCATED) {
                    throw e;
                }
            }
            end = new End(newest.file().id(), scanner.position(), scanner.nextOffset());
            return OptionalLong.of(scanner.nextOffset());
        } catch (NoSuchFileException gone) {
            end = null;
            return endOffset(); // the newest segment went away while we read (a reset): list again
        }
    }

    /**
     * Records from {@code offset}, as {@link ShardLog#read} answers them: at most {@code maxRecords},
     * within {@code maxBytes} unless the first record alone is larger; {@link ReadResult.Trimmed}
     * below the first offset; an empty result at or past the end.
     */
    public ReadResult read(long offset, int maxRecords, long maxBytes) throws IOException, CorruptionException {
        if (maxRecords <= 0) {
            throw new IllegalArgumentException("maxRecords must be positive, got " + maxRecords);
        }
        List<Seg> segs = segments();
        if (segs.isEmpty()) {
            return new ReadResult.Records(List.of(), offset);
        }
        long first = segs.get(0).header().baseOffset();
        if (Long.compareUnsigned(offset, first) < 0) {
            return new ReadResult.Trimmed(first);
        }
        int start = 0;
        for (int i = 0; i < segs.size(); i++) {
            if (Long.compareUnsigned(segs.get(i).header().baseOffset(), offset) <= 0) {
                start = i;
            }
        }
        ReadBudget budget = new ReadBudget(maxRecords, maxBytes);
        long want = offset;
        for (int i = start; i < segs.size() && !budget.full(); i++) {
            Seg seg = segs.get(i);
            try {
                want = readSegment(seg, want, budget);
            } catch (NoSuchFileException gone) {
                continue; // removed by retention or offload while we read: the next segment goes on
            } catch (CorruptionException e) {
                if (seg.newest() && e.kind() == CorruptionKind.TRUNCATED) {
                    break; // the writer's record in progress
                }
                throw e;
            }
        }
        // Records may have been taken from a segment that then ended in a torn tail.
        return new ReadResult.Records(budget.records(), budget.nextOffset(want));
    }

    /** Reads one segment's records from {@code want} into the budget; answers the next offset wanted. */
    private long readSegment(Seg seg, long want, ReadBudget budget) throws IOException, CorruptionException {
        IndexedScan.read(() -> SegmentScanner.open(seg.file().log(), shard, seg.file().id(), ScanDepth.RECORDS), entryFor(seg, want),
                want, budget, (bad, why) -> indexes.put(seg.file().id(), noIndex(seg)));
        return budget.nextOffset(want);
    }

    /** The sealed segment's index entry for {@code want}, when its index loads. */
    private IndexedScan.Entry entryFor(Seg seg, long want) throws IOException {
        if (seg.newest()) {
            return IndexedScan.Entry.NONE; // its index is still growing: scan from the start
        }
        SegmentIndex index = indexes.get(seg.file().id());
        if (index == null) {
            try {
                index = SegmentIndex.read(seg.file().index(), shard, seg.file().id());
            } catch (NoSuchFileException | CorruptionException e) {
                index = noIndex(seg);
            }
            if (index.baseOffset() != seg.header().baseOffset()) {
                index = noIndex(seg);
            }
            indexes.put(seg.file().id(), index);
        }
        int e = index.entryAtOrBelow(want);
        return e < 0 ? IndexedScan.Entry.NONE : new IndexedScan.Entry(index.offsetAt(e), index.positionAt(e));
    }

    private static SegmentIndex noIndex(Seg seg) {
        return SegmentIndex.of(seg.header().baseOffset(), new long[0], new long[0]);
    }
}
