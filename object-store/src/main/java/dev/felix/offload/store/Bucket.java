package dev.felix.offload.store;

/**
 * The bucket on a server a store keeps its objects in, which opening the store does not show to
 * exist: a command asks before it writes anything, so a mistyped bucket is refused as one and not met
 * in the middle of its work. A filesystem store has no such role (its directory is checked where it
 * is opened).
 */
public interface Bucket {

    /**
     * Lists at most one key under {@code prefix} (a policy may allow no wider listing): throws
     * {@link BucketMissingException} when the bucket does not exist, and any other failure of that one
     * request as it comes.
     */
    void requireExists(String prefix) throws StoreException;
}
