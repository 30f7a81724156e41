package dev.felix.offload.log.side;

import java.util.List;

/**
 * What a cache shard's {@code keys.idx} holds: its key index as of {@code coveredThrough}.
 *
 * @param coveredThrough every record below this offset is reflected, none at or past it (unsigned)
 * @param logBytes       payload bytes of every record below {@code coveredThrough}, live or not
 * @param lastChecksum   the checksum of the record at {@code coveredThrough - 1}; 0 when nothing is covered
 * @param entries        the keys, strictly ascending by composite key (unsigned bytes), each pointing
 *                       at an offset below {@code coveredThrough}
 */
public record KeyIndexSnapshot(long coveredThrough, long logBytes, int lastChecksum, List<KeyIndexEntry> entries) {

    /**
     * @throws IllegalArgumentException when the entries are not strictly ascending, an entry points at
     *                                  or past {@code coveredThrough}, or nothing is covered
     *                                  ({@code coveredThrough} 0) yet {@code lastChecksum} is not 0
     */
    public KeyIndexSnapshot {
        entries = List.copyOf(entries);
        if (coveredThrough == 0 && lastChecksum != 0) {
            throw new IllegalArgumentException(zeroCoverageProblem(lastChecksum));
        }
        for (int i = 0; i < entries.size(); i++) {
            KeyIndexEntry e = entries.get(i);
            String problem = entryProblem(i, i == 0 ? null : entries.get(i - 1), e, coveredThrough);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
        }
    }

    static String zeroCoverageProblem(int lastChecksum) {
        return String.format("covered_through is 0 (nothing covered) but last_checksum is 0x%08x, not 0", lastChecksum);
    }

    /** Why entry {@code i} may not follow {@code previous} (null for the first), or null when it may. */
    static String entryProblem(int i, KeyIndexEntry previous, KeyIndexEntry entry, long coveredThrough) {
        if (previous != null && previous.compareKeyTo(entry) >= 0) {
            return "entry " + i + "'s key is not above entry " + (i - 1) + "'s (keys ascend as unsigned bytes, each once)";
        }
        if (Long.compareUnsigned(entry.offset(), coveredThrough) >= 0) {
            return "entry " + i + " points at offset " + Long.toUnsignedString(entry.offset())
                    + ", not below covered_through " + Long.toUnsignedString(coveredThrough);
        }
        return null;
    }
}
