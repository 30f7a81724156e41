package dev.felix.offload.store;

/** A ranged read asked for bytes the object does not hold (HTTP 416 `InvalidRange`, or a range that ends past the object's end). */
public class InvalidRangeException extends StoreException {
    private static final long serialVersionUID = 1L;

    public InvalidRangeException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
