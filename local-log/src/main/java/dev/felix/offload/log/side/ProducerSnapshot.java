package dev.felix.offload.log.side;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The state of a shard's idempotent producers as of an offset: what the {@code producers} file holds.
 *
 * @param asOf      the state covers every record below this offset (an unsigned 64-bit value)
 * @param open      the batch waiting for records at {@code asOf}, or null when none is
 * @param producers the producers known, at most {@link #MAX_PRODUCERS}, each id once; in the order given
 */
public record ProducerSnapshot(long asOf, OpenBatch open, List<ProducerEntry> producers) {

    /** The most producers a snapshot holds. */
    public static final int MAX_PRODUCERS = 4096;

    /**
     * @throws IllegalArgumentException when there are more than {@link #MAX_PRODUCERS} producers or an id
     *                                  appears twice
     */
    public ProducerSnapshot {
        producers = List.copyOf(producers);
        if (producers.size() > MAX_PRODUCERS) {
            throw new IllegalArgumentException("a snapshot holds at most " + MAX_PRODUCERS + " producers, got "
                    + producers.size());
        }
        Set<Long> ids = new HashSet<>();
        for (ProducerEntry p : producers) {
            if (!ids.add(p.id())) {
                throw new IllegalArgumentException("producer " + Long.toUnsignedString(p.id()) + " appears twice");
            }
        }
    }
}
