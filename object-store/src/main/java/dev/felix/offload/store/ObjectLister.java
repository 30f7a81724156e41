package dev.felix.offload.store;

/**
 * Lists keys.
 *
 * <p>Contract: a listing returns every key that starts with the prefix (an empty prefix lists all),
 * relative to the store (never including a store's own prefix), in ascending UTF-8 byte order,
 * each once. Pages hold at most {@code maxKeys} entries; the continuation token of one page fetches
 * the next. Keys written or deleted while a listing runs may or may not appear.
 */
public interface ObjectLister {
    /** One page: entries after {@code continuation} (null for the first page). */
    ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException;

    /** A listing that fetches pages of up to 1000 entries only as they are consumed. */
    default ObjectListing list(String prefix) {
        return new ObjectListing(this, prefix, 1000);
    }
}
