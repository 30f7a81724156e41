package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScanner;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ShardLog}'s reads over one {@link LogView}: each segment is entered at its index entry
 * at or below the wanted offset (the active one's growing index, a sealed one's loaded index), then
 * scanned with every checksum verified. An index is never trusted: an entry that leads to no valid
 * record is dropped and the segment scanned from its start. The caller holds the structure lock.
 */
final class LogReads {
    private static final Logger LOG = LoggerFactory.getLogger(ShardLog.class);

    private LogReads() {
    }

    /** Records from {@code offset} (at or above the view's first), within the budget; see {@link ShardLog#read}. */
    static ReadResult read(LogView v, String shard, long offset, int maxRecords, long maxBytes)
            throws IOException, CorruptionException {
        ReadBudget budget = new ReadBudget(maxRecords, maxBytes);
        long want = offset;
        int segments = v.sealed().size() + 1;
        for (int i = v.locate(offset); i < segments; i++) {
            boolean isActive = i == v.sealed().size();
            SegmentFile file;
            long end;
            long hitOffset = -1;
            long hitPosition = -1;
            if (isActive) {
                SegmentWriter active = v.active();
                file = active.file();
                end = active.size(); // read once: bytes past it may be half written
                GrowingIndex.Hit hit = active.seek(want);
                if (hit != null) {
                    hitOffset = hit.offset();
                    hitPosition = hit.position();
                }
            } else {
                LogView.Sealed s = v.sealed().get(i);
                if (Long.compareUnsigned(want, s.nextOffset()) >= 0) {
                    continue;
                }
                file = s.file();
                end = s.size();
                int e = s.index().entryAtOrBelow(want);
                if (e >= 0) {
                    hitOffset = s.index().offsetAt(e);
                    hitPosition = s.index().positionAt(e);
                }
            }
            boolean full = readSegment(shard, file, end, hitOffset, hitPosition, want, budget);
            want = budget.nextOffset(want);
            if (full) {
                break;
            }
        }
        return new ReadResult.Records(budget.records(), want);
    }

    /** Reads one segment's records from {@code want}; answers true when a limit was reached. */
    private static boolean readSegment(String shard, SegmentFile file, long end, long hitOffset, long hitPosition, long want,
                                ReadBudget budget) throws IOException, CorruptionException {
        int mark = budget.mark();
        try {
            return scanSegment(shard, file, end, hitOffset, hitPosition, want, budget);
        } catch (CorruptionException e) {
            boolean fromIndex = hitPosition > SegmentHeader.LENGTH;
            if (fromIndex && e.site().position() == hitPosition) {
                // An index is never trusted: its entry led nowhere valid, so scan from the start.
                LOG.warn("{}: index entry for offset {} in {} points at no valid record; scanning from the start",
                        shard, hitOffset, file.indexName());
                budget.rollBack(mark);
                return scanSegment(shard, file, end, -1, -1, want, budget);
            }
            throw e;
        }
    }

    private static boolean scanSegment(String shard, SegmentFile file, long end, long hitOffset, long hitPosition, long want,
                                ReadBudget budget) throws IOException, CorruptionException {
        try (SegmentScanner scanner = SegmentScanner.open(file.log(), shard, file.id(), true, end)) {
            if (hitPosition >= SegmentHeader.LENGTH) {
                scanner.seek(hitPosition, hitOffset);
            }
            // Skip what precedes the wanted offset by headers alone, then read whole records.
            while (Long.compareUnsigned(scanner.nextOffset(), want) < 0) {
                if (scanner.nextHeader() == null) {
                    return false;
                }
            }
            Record r;
            while ((r = scanner.nextRecord()) != null) {
                if (!budget.fits(r)) {
                    return true;
                }
                budget.take(r);
                if (budget.full()) {
                    return true;
                }
            }
            return false;
        }
    }
}
