package dev.felix.offload.read;

import dev.felix.offload.log.format.Record;

import java.util.List;

/** What {@link TieredReader#read} answers. */
public sealed interface TieredRead {

    /** A record and where it came from. */
    record SourcedRecord(Record record, boolean remote) {
    }

    /**
     * Records from the offset asked for, in order, exactly as a local read returns them; empty at or
     * past the end of the log.
     */
    record Records(List<SourcedRecord> records, long nextOffset) implements TieredRead {
        public Records {
            records = List.copyOf(records);
        }
    }

    /**
     * Nothing is held at the offset: below the oldest copy, or in a gap between copies.
     *
     * @param nextAvailable the oldest offset above the one asked for that can be read
     */
    record Trimmed(long nextAvailable) implements TieredRead {
    }
}
