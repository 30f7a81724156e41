package dev.felix.offload.store;

/**
 * A store that holds its requests back until something outside it decides whether they may go (a
 * pass's node claim, checked on a thread of its own): every request waits, then goes or fails unsent.
 * A caller whose step writes something locally before its request (the journal of pending writes)
 * waits here first, so a step whose request will never be sent writes nothing either.
 */
public interface RequestHold {

    /**
     * Returns once requests may go; throws what a request would throw unsent when they never may (the
     * check failed, or the wait was interrupted).
     */
    void awaitRelease() throws StoreException;
}
