package dev.felix.offload.store;

/** A failure that may pass: an I/O error, a reset connection, a timeout, or HTTP 5xx. Retried with backoff; thrown once the retry budget is spent. */
public class TransientStoreException extends StoreException {
    private static final long serialVersionUID = 1L;

    public TransientStoreException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

    @Override
    public boolean isRetryable() {
        return true;
    }
}
