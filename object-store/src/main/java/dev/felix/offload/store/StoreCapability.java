package dev.felix.offload.store;

/** Things a store may or may not do, as reported by {@link ObjectStore#capabilities()}. */
public enum StoreCapability {
    /** A create-only put fails with {@link PreconditionFailedException} when the key exists. */
    CREATE_ONLY_PUT,
    /** A put whose given CRC32 does not match its bytes fails with {@link IntegrityRejectedException}. */
    CRC32_VERIFIED_ON_PUT,
    /** {@link ObjectFetcher#head(String)} reports the CRC32 of a single-part object. */
    CRC32_STORED,
    /** User metadata given at put time comes back from head. */
    USER_METADATA
}
