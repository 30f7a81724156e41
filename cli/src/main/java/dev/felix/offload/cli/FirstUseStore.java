package dev.felix.offload.cli;

import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;

import java.io.IOException;
import java.util.Optional;

/**
 * A store whose first request is preceded by a check that needs the store too (the reader's node-claim
 * check), so a command that turns out to need nothing from the store (a {@code read} served by local
 * segments) never contacts it: no client is built and no request is sent. Every call goes to the
 * store it wraps once the check ran; a check that fails fails that first call, and every later one
 * (an I/O failure of a local file it reads as a {@link StoreRejectedException} naming it).
 */
final class FirstUseStore extends ForwardingObjectStore {

    /** What runs once, before the first request. */
    @FunctionalInterface
    interface Check {
        void run(ObjectStore store) throws IOException, StoreException;
    }

    private final Check check;
    private boolean checked;
    private StoreException failure;
    private RuntimeException refusal;

    FirstUseStore(ObjectStore store, Check check) {
        super(store);
        this.check = check;
    }

    /** Whether the store was needed (and so checked). */
    synchronized boolean used() {
        return checked;
    }

    /** Every request goes to the wrapped store once the check ran, and only if it passed. */
    @Override
    protected synchronized ObjectStore target() throws StoreException {
        if (!checked) {
            checked = true;
            try {
                check.run(delegate());
            } catch (StoreException e) {
                failure = e;
            } catch (IOException e) {
                // a local file the check reads (the root's node id, say): the read fails as a store read would
                failure = new StoreRejectedException(dev.felix.offload.log.IoProblem.describe(e), null, null, e);
            } catch (RuntimeException e) {
                // a refusal (a missing bucket is a usage error): every later call meets it too
                refusal = e;
            }
        }
        if (refusal != null) {
            throw refusal;
        }
        if (failure != null) {
            throw failure;
        }
        return delegate();
    }

    /**
     * What the check refused the store with, other than a store failure (a missing bucket, as a usage
     * error), for the command to report as its own whatever a reader made of it on the way.
     */
    synchronized Optional<RuntimeException> refusal() {
        return Optional.ofNullable(refusal);
    }
}
