package dev.felix.offload.store;

/**
 * Copies an object to another key inside the store, without its bytes passing through this process
 * (S3's {@code CopyObject}; a file copy on the filesystem store). Stores that can do this implement
 * the role; a caller without it reads the object and puts it.
 *
 * <p>Contract:
 * <ul>
 *   <li>The target never replaces an object: a target that exists fails the copy with
 *       {@link PreconditionFailedException} and is left as it is (a head before the copy, where the
 *       server has no create-only copy), as for {@link PutOptions#withNoReplace()}. So it suits keys
 *       that only one writer means to create.</li>
 *   <li>A missing source is {@link ObjectNotFoundException}.</li>
 *   <li>The answer says what the store left at the target, but proves nothing of its bytes: a caller
 *       that must know them proves the copy as it proves an upload.</li>
 *   <li>An object too large for one copy request (5 GiB on S3) is refused with
 *       {@link CapabilityMissingException}, before any request.</li>
 * </ul>
 */
public interface ObjectCopier {

    /** The largest object one server-side copy request takes on S3. */
    long MAX_COPY_BYTES = 5L * 1024 * 1024 * 1024;

    PutResult copy(String sourceKey, String targetKey) throws StoreException;
}
