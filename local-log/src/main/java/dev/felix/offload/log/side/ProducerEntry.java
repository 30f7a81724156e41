package dev.felix.offload.log.side;

import java.util.List;

/**
 * One idempotent producer's place in the log: the newest sequence held and where its recent batches
 * landed, oldest first.
 *
 * @param id           the producer's id, an unsigned 64-bit value
 * @param lastSequence the newest sequence the log holds from it
 * @param batches      its last batches, at most {@link #MAX_BATCHES}, their first offsets strictly
 *                     ascending (unsigned)
 */
public record ProducerEntry(long id, long lastSequence, List<BatchLocation> batches) {

    /** The most batches remembered per producer. */
    public static final int MAX_BATCHES = 64;

    /**
     * @throws IllegalArgumentException when there are more than {@link #MAX_BATCHES} batches or their
     *                                  first offsets do not strictly ascend
     */
    public ProducerEntry {
        batches = List.copyOf(batches);
        if (batches.size() > MAX_BATCHES) {
            throw new IllegalArgumentException("a producer keeps at most " + MAX_BATCHES + " batches, got "
                    + batches.size());
        }
        for (int i = 1; i < batches.size(); i++) {
            String problem = orderProblem(batches.get(i - 1), batches.get(i));
            if (problem != null) {
                throw new IllegalArgumentException("batch " + i + ": " + problem);
            }
        }
    }

    /** Why {@code next} may not follow {@code previous} in one producer's list, or null when it may. */
    static String orderProblem(BatchLocation previous, BatchLocation next) {
        if (Long.compareUnsigned(next.first(), previous.first()) <= 0) {
            return "first offset " + Long.toUnsignedString(next.first()) + " is not above the previous batch's "
                    + Long.toUnsignedString(previous.first());
        }
        return null;
    }
}
