package dev.felix.offload.store;

import java.util.Optional;
import java.util.Set;

/**
 * A place that holds objects under keys: every role at once, plus what the store can do.
 *
 * <p>Keys follow {@link KeyRules}, identically on every store, so a key that works on one store
 * works on all. A store is safe for concurrent use by many threads.
 *
 * <p>The optional roles ({@link IncompleteUploads}, {@link ObjectCopier}, {@link RequestGate},
 * {@link RequestHold}, {@link Bucket}) are asked of the store through the methods below, never by its class: a
 * decorator answers for the store it wraps, offering a role only where it is offered underneath and
 * its own requests still pass through the decorator.
 */
public interface ObjectStore extends ObjectUploader, ObjectFetcher, ObjectLister, ObjectDeleter, AutoCloseable {
    /**
     * What this store can do. A remote store may ask its server once (a small probe object
     * written and deleted under its prefix) and remembers the answer.
     */
    Set<StoreCapability> capabilities() throws StoreException;

    /** A one-line description for logs: kind, location, never credentials. */
    String describe();

    /** The store's cleanup of multipart uploads left open, where it has multipart uploads; empty otherwise. */
    default Optional<IncompleteUploads> incompleteUploads() {
        return Optional.empty();
    }

    /** Copies inside the store, where it can make them; empty where a copy must pass through the caller. */
    default Optional<ObjectCopier> copier() {
        return Optional.empty();
    }

    /** The way to stop this store's requests, where it sends any to a server; empty otherwise. */
    default Optional<RequestGate> requestGate() {
        return Optional.empty();
    }

    /** Where this store holds its requests back until they may go; empty for a store that sends at once. */
    default Optional<RequestHold> requestHold() {
        return Optional.empty();
    }

    /** The bucket this store keeps its objects in, where it has one that may not exist; empty otherwise. */
    default Optional<Bucket> bucket() {
        return Optional.empty();
    }

    @Override
    void close();
}
