package dev.felix.offload.store;

/**
 * A call refused without sending anything, because the process is stopping
 * ({@link RequestGate#stopRequests()}). Not the store's doing, and not retried.
 */
public class StoreStoppedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public StoreStoppedException(String message, String key) {
        super(message, key, StoreAnswer.NONE, null);
    }
}
