package dev.felix.offload.pass;

import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The keys one listing of a shard's prefix showed absent, each good for one create-only put of the
 * pass that listed them.
 *
 * <p>Where the server ignores {@code If-None-Match}, a put that must never replace an object heads
 * its key first: a second request for every segment, and for small segments most of what an upload
 * costs beyond its bytes. A shard pass with several segments to send lists the shard's prefix once
 * instead, and puts a key that listing did not hold without the head.
 *
 * <p>Why the listing proves as much as the head: keys under {@code <node>/<shard>/} are created only
 * by the process holding the node's claim (the store holds this pass's requests, the listing
 * included, until the claim stands) and, in that process, only by the shard's one pass (the root
 * lock). A key the listing did not hold is therefore still absent when the pass puts it, as long as
 * the store's listings show what was written before them, which AWS S3, Ceph RGW within one zone,
 * MinIO and S3Proxy do. The head it replaces rests on the same single-writer argument: another
 * writer could slip in between a head and its put as well; the window is longer, not different. A
 * key is taken once: a second put of it (after a failed verification deleted the first) is headed.
 *
 * <p>The listing is taken only where it is cheaper than the heads it saves: its pages, bounded by a
 * budget of a quarter of the segments to send, or it is abandoned and every put is headed as before.
 */
final class ListedAbsence {
    private static final Logger LOG = LoggerFactory.getLogger(ListedAbsence.class);

    /** Keys per listing page asked for. */
    static final int PAGE_KEYS = 1000;
    /** Heads one listing page has to save at least to be worth its request. */
    static final int HEADS_PER_PAGE = 4;

    /** Proves nothing: every put is headed. */
    static final ListedAbsence NONE = new ListedAbsence(null, null);

    private final String prefix;
    /** What the listing held; null for {@link #NONE}. */
    private final Set<String> present;
    private final Set<String> taken = ConcurrentHashMap.newKeySet();

    private ListedAbsence(String prefix, Set<String> present) {
        this.prefix = prefix;
        this.present = present;
    }

    /**
     * Lists {@code shardPrefix} if that costs fewer requests than heading {@code pending} keys:
     * never where the store refuses an existing key itself (no head to save), and within a budget of
     * {@code pending / HEADS_PER_PAGE} pages, guessed beforehand from the shard's manifest entries (a
     * segment and perhaps an index object each).
     *
     * @param shard the shard's name, for the log
     */
    static ListedAbsence listIfWorthIt(ObjectStore store, String shard, String shardPrefix, int pending, int entries) {
        int budget = pending / HEADS_PER_PAGE;
        long guessedPages = 2L * entries / PAGE_KEYS + 1;
        if (budget < 1 || guessedPages > budget) {
            return NONE;
        }
        try {
            if (store.capabilities().contains(StoreCapability.CREATE_ONLY_PUT)) {
                return NONE;
            }
            Optional<dev.felix.offload.store.RequestHold> hold = store.requestHold();
            if (hold.isPresent()) {
                hold.get().awaitRelease(); // the listing counts only once the node's claim stands
            }
            Set<String> present = new HashSet<>();
            String continuation = null;
            for (int pages = 1; ; pages++) {
                ListPage page = store.listPage(shardPrefix, continuation, PAGE_KEYS);
                for (ObjectSummary o : page.entries()) {
                    present.add(o.key());
                }
                if (page.continuation().isEmpty()) {
                    return new ListedAbsence(shardPrefix, present);
                }
                if (pages >= budget) {
                    LOG.debug("{}: listing of {} abandoned after {} pages: every put is headed", shard, shardPrefix, pages);
                    return NONE;
                }
                continuation = page.continuation().get();
            }
        } catch (StoreException e) {
            LOG.debug("{}: {} not listed ({}): every put is headed", shard, shardPrefix, e.toString());
            return NONE;
        }
    }

    /** Whether {@code key} may be put without a head: the listing did not hold it and no put of it came before. */
    boolean take(String key) {
        return present != null && key.startsWith(prefix) && !present.contains(key) && taken.add(key);
    }
}
