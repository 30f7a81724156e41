package dev.felix.offload.log;

import dev.felix.offload.log.format.Record;

import java.util.ArrayList;
import java.util.List;

/**
 * What one read may still take: at most a number of records, and no more than a number of encoded
 * bytes unless the first record alone is larger (it is taken anyway, so a reader always makes
 * progress). A reader that must start a segment over can roll back to a mark.
 */
final class ReadBudget {

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
     * True when {@code r} may be taken without breaking the byte limit. When it may not, the read is
     * over: records come back in order, so nothing after it may be taken either.
     */
    boolean fits(Record r) {
        if (records.isEmpty() || bytes + r.encodedLength() <= maxBytes) {
            return true;
        }
        stopped = true;
        return false;
    }

    void take(Record r) {
        records.add(r);
        bytes += r.encodedLength();
    }

    /** True when no more records may be taken. */
    boolean full() {
        return stopped || records.size() >= maxRecords || bytes >= maxBytes;
    }

    /** A point to roll back to. */
    int mark() {
        return records.size();
    }

    /** Drops the records taken since {@code mark}. */
    void rollBack(int mark) {
        List<Record> dropped = records.subList(mark, records.size());
        for (Record r : dropped) {
            bytes -= r.encodedLength();
        }
        dropped.clear();
        stopped = false;
    }

    List<Record> records() {
        return records;
    }

    /** One past the last record taken, or {@code otherwise} when none was. */
    long nextOffset(long otherwise) {
        return records.isEmpty() ? otherwise : records.get(records.size() - 1).offset() + 1;
    }
}
