package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.IndexedScan;
import dev.felix.offload.log.format.SegmentScanner;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ShardLog}'s reads over one {@link LogView}: each segment is entered at its index entry
 * at or below the wanted offset (the active one's growing index, a sealed one's loaded index) by an
 * {@link IndexedScan}, which never trusts the entry and verifies every checksum. The caller holds the
 * structure lock.
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
            SegmentFile file;
            long end;
            IndexedScan.Entry entry = IndexedScan.Entry.NONE;
            if (i == v.sealed().size()) {
                SegmentWriter active = v.active();
                file = active.file();
                end = active.size(); // read once: bytes past it may be half written
                GrowingIndex.Hit hit = active.seek(want);
                if (hit != null) {
                    entry = new IndexedScan.Entry(hit.offset(), hit.position());
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
                    entry = new IndexedScan.Entry(s.index().offsetAt(e), s.index().positionAt(e));
                }
            }
            IndexedScan.Outcome outcome = IndexedScan.read(
                    () -> SegmentScanner.open(file.log(), shard, file.id(), ScanDepth.RECORDS, end), entry, want, budget,
                    (bad, why) -> LOG.warn("{}: index entry for offset {} in {} points at no valid record; scanning from"
                            + " the start", shard, bad.offset(), file.indexName()));
            want = budget.nextOffset(want);
            if (outcome.stopped()) {
                break;
            }
        }
        return new ReadResult.Records(budget.records(), want);
    }
}
