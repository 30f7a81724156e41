package dev.felix.offload.store;

/**
 * The key does not exist: HTTP 404 {@code NoSuchKey} (or a bare 404, as HEAD answers carry no code), or no
 * file under the filesystem root. A bucket that does not exist is {@link BucketMissingException}.
 */
public class ObjectNotFoundException extends StoreException {
    private static final long serialVersionUID = 1L;

    public ObjectNotFoundException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
