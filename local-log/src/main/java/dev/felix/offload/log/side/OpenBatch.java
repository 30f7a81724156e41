package dev.felix.offload.log.side;

/**
 * A producer's batch still waiting for records: its batch-open record and some of its batch-continue
 * records are in the log, its last record is not yet.
 *
 * @param producerId the producer's id, an unsigned 64-bit value
 * @param sequence   the batch's sequence, an unsigned 64-bit value
 * @param len        the batch's record count from its tag, an unsigned 32-bit value held in a long
 * @param first      the offset of the batch-open record
 * @param held       how many of the batch's records the log holds, an unsigned 32-bit value held in a
 *                   long: at least 1 (the batch-open record) and fewer than {@code len}
 */
public record OpenBatch(long producerId, long sequence, long len, long first, long held) {

    /**
     * @throws IllegalArgumentException when {@code len} or {@code held} is not an unsigned 32-bit value,
     *                                  or {@code held} is not between 1 and {@code len - 1}
     */
    public OpenBatch {
        SideFiles.requireU32(len, "open batch len");
        SideFiles.requireU32(held, "open batch held");
        String problem = heldProblem(len, held);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** Why an open batch cannot hold {@code held} of {@code len} records, or null when it can. */
    static String heldProblem(long len, long held) {
        if (held < 1 || held >= len) {
            return "an open batch holds at least its first record and fewer than all of its " + len
                    + " records, not " + held;
        }
        return null;
    }
}
