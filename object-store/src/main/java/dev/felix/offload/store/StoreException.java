package dev.felix.offload.store;

import java.util.Optional;

/**
 * Root of the checked exceptions a store operation throws. Each subtype names one kind of
 * answer, so callers branch on types, never on messages. {@link #isRetryable()} says whether
 * trying the same request again can help; the stores' retry loop uses it, and a caller receives
 * a retryable exception only after the retry budget is spent.
 */
public abstract class StoreException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String key;
    private final StoreAnswer answer;

    protected StoreException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, cause);
        this.key = key;
        this.answer = answer == null ? StoreAnswer.NONE : answer;
    }

    /** The key the operation was about, when it was about one. */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /** The store's answer (status and error code), {@link StoreAnswer#NONE} when there was none. */
    public StoreAnswer answer() {
        return answer;
    }

    /** Whether the same request may succeed when sent again. */
    public boolean isRetryable() {
        return false;
    }
}
