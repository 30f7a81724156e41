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
     * Nothing is held at the offset because it lies below the shard's history: below the oldest copy
     * (remote retention expired what was older), or below the local log with nothing copied.
     *
     * @param nextAvailable the oldest offset above the one asked for that can be read
     */
    record Trimmed(long nextAvailable) implements TieredRead {
    }

    /**
     * Nothing is held at the offset though the history goes on after it: a gap between two copies,
     * or between the newest copy and the local log. Records that were offloaded may be missing from
     * the manifest there (restore reports such holes, and the orphan sweep keeps their objects).
     *
     * @param firstMissing  the offset asked for, the first one held nowhere
     * @param lastMissing   the last offset held nowhere before {@code nextAvailable}
     * @param nextAvailable the next offset that can be read
     */
    record Gap(long firstMissing, long lastMissing, long nextAvailable) implements TieredRead {
    }
}
