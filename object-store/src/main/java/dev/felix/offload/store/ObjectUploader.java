package dev.felix.offload.store;

/**
 * Writes objects.
 *
 * <p>Contract:
 * <ul>
 *   <li>A put either stores the whole body under the key or leaves the key as it was: no reader,
 *       on any store, ever sees part of a body. A put over an existing key replaces it.</li>
 *   <li>With {@link PutOptions#crc32()} given, a body whose bytes do not have that CRC32 is refused
 *       with {@link IntegrityRejectedException} where the store declares
 *       {@link StoreCapability#CRC32_VERIFIED_ON_PUT}; stores that cannot check it still store the
 *       bytes they were given.</li>
 *   <li>With {@link PutOptions#createOnly()}, the put fails with {@link PreconditionFailedException}
 *       if the key exists, on stores declaring {@link StoreCapability#CREATE_ONLY_PUT}; other stores
 *       refuse such a put with {@link CapabilityMissingException} rather than risk an overwrite. A
 *       create-only put retried after a lost answer may report {@link PreconditionFailedException}
 *       for the object it wrote itself; compare {@link ObjectFetcher#head(String)} to tell.</li>
 *   <li>With {@link PutOptions#withNoReplace()}, every store fails the put of an existing key with
 *       {@link PreconditionFailedException}: where the server ignores {@code If-None-Match}, by a
 *       head before the put.</li>
 *   <li>User metadata given with a put comes back from head where the store declares
 *       {@link StoreCapability#USER_METADATA}; elsewhere a put carrying metadata is refused with
 *       {@link CapabilityMissingException}.</li>
 *   <li>Large bodies may travel as a multipart upload; one that fails is aborted so no parts are
 *       left behind to be paid for.</li>
 *   <li>Throttling, 5xx and I/O failures are retried within the store's retry budget; a retryable
 *       exception reaching the caller means the budget is spent.</li>
 * </ul>
 */
public interface ObjectUploader {
    PutResult put(String key, UploadBody body, PutOptions options) throws StoreException;

    /**
     * The digests a put of a body of {@code length} bytes would take ({@link UploadBody#digests(long,
     * boolean)}): the slice size, and whether MD5s are among them. A caller reading the bytes anyway
     * can take them on the way ({@link UploadBody#withDigests}) and spare the store a read, and
     * skip the MD5 where the store sends none; empty where the store takes no digests.
     */
    default java.util.Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return java.util.Optional.empty();
    }

    /**
     * Told the upload limit of the pass about to put (bytes per second over all its uploads, 0 for
     * none), for a store that chooses how to send a body by how long it would take.
     */
    default void uploadsPacedAt(long bytesPerSecond) {
    }

    /**
     * How this store sent the bodies put so far and why (one PUT or parts), for a pass's summary;
     * empty where there is nothing to say.
     */
    default java.util.Optional<String> describeUploads() {
        return java.util.Optional.empty();
    }

    default PutResult put(String key, UploadBody body) throws StoreException {
        return put(key, body, PutOptions.defaults());
    }
}
