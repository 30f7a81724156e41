package dev.felix.offload.store;

import java.util.Set;

/**
 * A place that holds objects under keys: every role at once, plus what the store can do.
 *
 * <p>Keys follow {@link KeyRules}, identically on every store, so a key that works on one store
 * works on all. A store is safe for concurrent use by many threads.
 */
public interface ObjectStore extends ObjectUploader, ObjectFetcher, ObjectLister, ObjectDeleter, AutoCloseable {
    /**
     * What this store can do. A remote store may ask its server once (a small probe object
     * written and deleted under its prefix) and remembers the answer.
     */
    Set<StoreCapability> capabilities() throws StoreException;

    /** A one-line description for logs: kind, location, never credentials. */
    String describe();

    @Override
    void close();
}
