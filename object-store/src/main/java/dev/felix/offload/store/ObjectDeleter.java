package dev.felix.offload.store;

import java.util.Collection;

/**
 * Deletes objects.
 *
 * <p>Contract: deleting a key that does not exist succeeds, so a delete can be repeated freely.
 * {@link #deleteAll} deletes each key (in batches of at most 1000 per request where the store has
 * batch deletes); when some keys could not be deleted it throws after trying all of them, typed by
 * the first failure, its message naming how many failed and the first few keys.
 */
public interface ObjectDeleter {
    void delete(String key) throws StoreException;

    void deleteAll(Collection<String> keys) throws StoreException;
}
