package dev.felix.offload.log.format;

/**
 * The four kinds of record, told apart by the top three bits of {@code payload_len}. At most one of
 * the bits may be set; a record with none is {@link #PLAIN}.
 */
public enum RecordKind {
    /** No kind bit: an ordinary record, readable in every segment version. */
    PLAIN("plain", 0, SegmentHeader.VERSION_2),
    /** Bit 31: opens an idempotent producer's batch; a 20-byte tag follows the header. Version 3+. */
    BATCH_OPEN("batch-open", 1 << 31, SegmentHeader.VERSION_3),
    /** Bit 30: continues the batch of the record before it. Version 3+. */
    BATCH_CONTINUE("batch-continue", 1 << 30, SegmentHeader.VERSION_3),
    /** Bit 29: a leader's generation-start record; its payload is the generation as a u64. Version 4. */
    GENERATION_START("generation-start", 1 << 29, SegmentHeader.VERSION_4);

    private final String label;
    private final int bit;
    private final int minimumSegmentVersion;

    RecordKind(String label, int bit, int minimumSegmentVersion) {
        this.label = label;
        this.bit = bit;
        this.minimumSegmentVersion = minimumSegmentVersion;
    }

    /** The name used in machine-readable output: plain, batch-open, batch-continue, generation-start. */
    public String label() {
        return label;
    }

    /** The bit this kind sets in {@code payload_len}; 0 for {@link #PLAIN}. */
    public int bit() {
        return bit;
    }

    /** The oldest segment version that may hold this kind. */
    public int minimumSegmentVersion() {
        return minimumSegmentVersion;
    }

    /** True when a 20-byte tag follows the record header. */
    public boolean hasTag() {
        return this == BATCH_OPEN;
    }
}
