package dev.felix.offload.log;

import dev.felix.offload.log.format.IndexedScan;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordHeader;

import java.util.ArrayList;
import java.util.List;

/**
 * What one read may still take: at most a number of records, and no more than a number of encoded
 * bytes unless the first record alone is larger (it is taken anyway, so a reader always makes
 * progress).
 */
final class ReadBudget implements IndexedScan.Sink {

    private final int maxRecords;
    private final long maxBytes;
    private final List<Record> records = new ArrayList<>();
    private long bytes;
    private boolean stopped;

    ReadBudget(int maxRecords, long maxBytes) {
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
    }

    /**
     * True when the record {@code h} opens may be taken without breaking the byte limit. When it may
     * not, the read is over: records come back in order, so nothing after it may be taken either.
     */
    @Override
    public boolean fits(RecordHeader h) {
        if (records.isEmpty() || bytes + h.totalLength() <= maxBytes) {
            return true;
        }
        stopped = true;
        return false;
    }

    @Override
    public void take(Record r, long end) {
        records.add(r);
        bytes += r.encodedLength();
    }

    /** True when no more records may be taken. */
    @Override
    public boolean full() {
        return stopped || records.size() >= maxRecords || bytes >= maxBytes;
    }

    List<Record> records() {
        return records;
    }

    /** One past the last record taken, or {@code otherwise} when none was. */
    long nextOffset(long otherwise) {
        return records.isEmpty() ? otherwise : records.get(records.size() - 1).offset() + 1;
    }
}
