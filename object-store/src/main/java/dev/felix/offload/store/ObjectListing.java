package dev.felix.offload.store;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A lazy listing: the next page is fetched only when the entries already fetched are used up.
 * Not thread-safe. Failures surface as checked exceptions from {@link #hasNext()}, which is why this
 * is not a {@link java.util.Iterator}.
 */
public final class ObjectListing {
    private final ObjectLister lister;
    private final String prefix;
    private final int pageSize;
    private Iterator<ObjectSummary> current = List.<ObjectSummary>of().iterator();
    private String continuation;
    private boolean exhausted;
    private int pagesFetched;

    public ObjectListing(ObjectLister lister, String prefix, int pageSize) {
        if (pageSize < 1 || pageSize > 1000) {
            throw new IllegalArgumentException("list page size must be in [1, 1000]: " + pageSize);
        }
        this.lister = lister;
        this.prefix = prefix == null ? "" : prefix;
        this.pageSize = pageSize;
    }

    public boolean hasNext() throws StoreException {
        while (!current.hasNext() && !exhausted) {
            ListPage page = lister.listPage(prefix, continuation, pageSize);
            pagesFetched++;
            current = page.entries().iterator();
            continuation = page.continuation().orElse(null);
            exhausted = continuation == null;
        }
        return current.hasNext();
    }

    public ObjectSummary next() throws StoreException {
        if (!hasNext()) {
            throw new NoSuchElementException("listing of prefix '" + prefix + "' is exhausted");
        }
        return current.next();
    }

    /** How many pages have been fetched so far. */
    public int pagesFetched() {
        return pagesFetched;
    }

    /** Every remaining entry (fetches all remaining pages). */
    public List<ObjectSummary> toList() throws StoreException {
        List<ObjectSummary> out = new ArrayList<>();
        while (hasNext()) {
            out.add(next());
        }
        return out;
    }
}
