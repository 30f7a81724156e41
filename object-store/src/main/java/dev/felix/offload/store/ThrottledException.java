package dev.felix.offload.store;

/** The store asked the client to slow down: HTTP 503 `SlowDown` or HTTP 429. Retried with backoff; thrown once the retry budget is spent. */
public class ThrottledException extends StoreException {
    private static final long serialVersionUID = 1L;

    public ThrottledException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

    @Override
    public boolean isRetryable() {
        return true;
    }
}
