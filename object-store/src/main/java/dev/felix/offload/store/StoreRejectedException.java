package dev.felix.offload.store;

/** Any other refusal by the store (an HTTP 4xx not covered by a narrower type, 501, or a local file system refusal such as a key that collides with an existing object's path). The message carries the status and error code. */
public class StoreRejectedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public StoreRejectedException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
