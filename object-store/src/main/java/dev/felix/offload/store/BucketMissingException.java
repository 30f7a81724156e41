package dev.felix.offload.store;

/**
 * The store's bucket does not exist (S3 {@code 404 NoSuchBucket}). Not an object that is missing:
 * nothing under the bucket can be read, written or deleted until it is created or the store URI names
 * the right one, so it is a mistake in the configuration, never a reason to go on as if a key were absent.
 */
public class BucketMissingException extends StoreRejectedException {
    private static final long serialVersionUID = 1L;

    public BucketMissingException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }
}
