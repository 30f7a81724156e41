package dev.felix.offload.log;

import dev.felix.offload.log.format.Record;

import java.util.List;

/** What {@link ShardLog#read} answers. */
public sealed interface ReadResult {

    /**
     * Records from the offset asked for, in order; empty when it is at or past the end of the log.
     *
     * @param records    the records read
     * @param nextOffset the offset to ask for next
     */
    record Records(List<Record> records, long nextOffset) implements ReadResult {
        public Records {
            records = List.copyOf(records);
        }
    }

    /**
     * The offset lies below the log's first offset: those records are gone from this log (retention,
     * or a history that began later).
     *
     * @param firstOffset the oldest offset the log holds
     */
    record Trimmed(long firstOffset) implements ReadResult {
    }
}
