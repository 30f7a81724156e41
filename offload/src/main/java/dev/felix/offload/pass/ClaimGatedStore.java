package dev.felix.offload.pass;

import dev.felix.offload.store.DigestPlan;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.RequestHold;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;

/**
 * The store as a pass's shards see it while the node claim is still being checked on a thread of its
 * own (see {@link OffloadPass}): a shard may plan and read its segments meanwhile
 * ({@link #digestPlan} answers at once), but every request to the store waits until the check
 * passed, and fails without being sent if it did not. So nothing is uploaded, deleted or even asked
 * of the store on a shard's behalf before the claim is known to be this root's.
 */
final class ClaimGatedStore extends ForwardingObjectStore implements RequestHold {

    /**
     * A request this store did not send because the claim check did not pass (or was interrupted): the
     * pass reports the check's failure once, so a shard says nothing more of it.
     */
    static final class NotSentException extends StoreRejectedException {
        private static final long serialVersionUID = 1L;

        NotSentException(String message, Throwable cause) {
            super(message, null, null, cause);
        }
    }

    private final CountDownLatch checked = new CountDownLatch(1);
    private volatile Throwable refused;
    /** Where requests go once the check passed: the store through the node's lease, as the check gave it. */
    private volatile ObjectStore gated;

    ClaimGatedStore(ObjectStore store) {
        super(store);
    }

    /** The check passed: requests go, through {@code through} (the store behind the node's lease). */
    void passed(ObjectStore through) {
        gated = through;
        checked.countDown();
    }

    /** The check failed (a refusal, or a store that did not answer): no request goes. */
    void failed(Throwable why) {
        refused = why;
        checked.countDown();
    }

    /** Every request waits here for the check, and goes through the store it gave, or fails unsent. */
    @Override
    protected ObjectStore target() throws StoreException {
        try {
            checked.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NotSentException("not sent: interrupted while the node claim was checked", e);
        }
        Throwable why = refused;
        if (why != null) {
            // the pass reports the check's failure itself, once
            throw new NotSentException("not sent: the node claim check did not pass", why);
        }
        return gated;
    }

    /**
     * Waits for the check as a request would, and fails unsent the same way: for a step that writes
     * locally before its request (the pending-keys journal), so that a refused pass writes nothing.
     */
    @Override
    public void awaitRelease() throws StoreException {
        target();
    }

    @Override
    public Optional<RequestHold> requestHold() {
        return Optional.of(this);
    }

    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        return delegate().digestPlan(length); // answers at once: a plan asks nothing of the store
    }

    @Override
    public void close() {
        // the pass's owner closes the store it wraps
    }
}
