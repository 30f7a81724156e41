package dev.felix.offload.store;

/** The key (or the bucket holding it) does not exist: HTTP 404 `NoSuchKey`/`NoSuchBucket`, or no file under the filesystem root. */
public class ObjectNotFoundException extends StoreException {
    private static final long serialVersionUID = 1L;

    public ObjectNotFoundException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
