package dev.felix.offload.pass;

/**
 * The steps one segment goes through in an offload pass, in order; see {@link ShardOffload}.
 * {@link #RECORDED} is the commit point.
 */
public enum OffloadStep {
    /** Chosen: sealed, below the commit offset, not yet in the manifest. */
    SELECTED,
    /** Scanned in full, every record's checksum verified. */
    VALIDATED,
    /** Its valid bytes are in the store. */
    UPLOADED,
    /** What the store holds is proven to have the local CRC32 and size. */
    VERIFIED,
    /**
     * Its sparse index is in the store (best effort: an index is derived, and a reader rebuilds a
     * missing one). It goes after the proven copy, so that nothing a stop or crash cuts short leaves
     * an index object beside no segment. A segment of at most 4 MiB has no index object
     * ({@link dev.felix.offload.root.SegmentKeys#hasIndexObject}): it reaches this step with none sent.
     */
    INDEX_UPLOADED,
    /** The manifest naming it is durable: the commit point. */
    RECORDED,
    /** The local file and its index are unlinked. */
    UNLINKED
}
