package dev.felix.offload.log.format;

/**
 * The 20-byte tag of a batch-open record: whose batch it is and how many records it has.
 *
 * @param producerId  the idempotent producer's id (u64)
 * @param sequence    the batch's sequence number (u64)
 * @param recordCount records in the batch, this one included (u32, held as a long)
 */
public record BatchTag(long producerId, long sequence, long recordCount) {

    public static final int PRODUCER_ID_OFFSET = 0;
    public static final int PRODUCER_ID_LENGTH = 8;
    public static final int SEQUENCE_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH;
    public static final int SEQUENCE_LENGTH = 8;
    public static final int RECORD_COUNT_OFFSET = SEQUENCE_OFFSET + SEQUENCE_LENGTH;
    public static final int RECORD_COUNT_LENGTH = 4;
    public static final int LENGTH = RECORD_COUNT_OFFSET + RECORD_COUNT_LENGTH;

    public BatchTag {
        if (recordCount < 0 || recordCount > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("batch record count must fit a u32, got " + recordCount);
        }
    }
}
