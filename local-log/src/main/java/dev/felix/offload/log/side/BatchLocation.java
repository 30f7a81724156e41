package dev.felix.offload.log.side;

/**
 * Where one of a producer's recent batches landed in the log.
 *
 * @param first the offset of the batch's first (batch-open) record, an unsigned 64-bit value
 * @param len   the batch's record count from its tag, an unsigned 32-bit value held in a long
 */
public record BatchLocation(long first, long len) {

    /** @throws IllegalArgumentException when {@code len} is not an unsigned 32-bit value */
    public BatchLocation {
        SideFiles.requireU32(len, "batch len");
    }
}
