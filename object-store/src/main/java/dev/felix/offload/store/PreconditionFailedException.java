package dev.felix.offload.store;

/** A conditional request's condition was false: HTTP 412, e.g. a create-only put of a key that already exists. */
public class PreconditionFailedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public PreconditionFailedException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
