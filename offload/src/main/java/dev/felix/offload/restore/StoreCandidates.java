package dev.felix.offload.restore;

import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectLister;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The segment objects a store holds for one shard, under its prefix in both key forms (with the
 * node id, and without as 0.6.0-preview.3 wrote them): the {@code <base>-<segment>.segment} keys
 * directly under either, found by listing, or asked for by key where a gap in the history implies one.
 * Index objects are passed over (readers rebuild them); other keys are named as ignored.
 */
final class StoreCandidates {

    private static final Pattern SEGMENT_NAME = Pattern.compile("([0-9]{20})-([0-9]{20})\\.segment");

    /** A segment object found, with what its key says of it. */
    record Candidate(String key, long base, long segmentId, long size, boolean legacy) {
    }

    private final ObjectLister lister;
    private final ObjectFetcher fetcher;
    private final String prefix;
    private final String legacyPrefix;

    /**
     * @param prefix       the shard's prefix with the node id
     * @param legacyPrefix the shard's prefix without one
     */
    StoreCandidates(ObjectLister lister, ObjectFetcher fetcher, String prefix, String legacyPrefix) {
        this.lister = lister;
        this.fetcher = fetcher;
        this.prefix = prefix;
        this.legacyPrefix = legacyPrefix;
    }

    /**
     * Lists both prefixes twice and takes every segment key either listing showed: a page lost to a
     * retry in one is found in the other. Keys that are neither segments nor indexes go to {@code ignored}.
     */
    Map<String, Candidate> listed(List<String> ignored) throws StoreException {
        Map<String, Candidate> out = new LinkedHashMap<>();
        for (int listing = 0; listing < 2; listing++) {
            collect(prefix, false, out, ignored);
            collect(legacyPrefix, true, out, ignored);
        }
        return out;
    }

    /**
     * The segment objects that begin at {@code gap}'s base: a listing of that base's own prefix, then
     * HEADs of the keys the segment chain implies, since a store whose listings lag behind its writes
     * leaves an object out of every listing but answers for it by key.
     */
    Map<String, Candidate> at(EntryGaps.Gap gap) throws StoreException {
        Map<String, Candidate> out = new LinkedHashMap<>();
        String base = pad(gap.base()) + "-";
        collectUnder(prefix, base, false, out);
        collectUnder(legacyPrefix, base, true, out);
        if (out.isEmpty()) {
            headImplied(gap, out);
        }
        return out;
    }

    /** Candidates whose keys are not in {@code named}, by base offset then segment id. */
    static List<Candidate> unnamed(Collection<Candidate> candidates, Set<String> named) {
        List<Candidate> out = new ArrayList<>();
        for (Candidate c : candidates) {
            if (!named.contains(c.key())) {
                out.add(c);
            }
        }
        out.sort(Comparator.comparing(Candidate::base, Long::compareUnsigned)
                .thenComparing(Candidate::segmentId, Long::compareUnsigned));
        return out;
    }

    /**
     * Asks by HEAD for the keys a gap implies: a segment beginning at its base, with each id between
     * those of its neighbours (at most {@value EntryGaps#MAX_IMPLIED_HEADS}), in both key forms.
     */
    private void headImplied(EntryGaps.Gap gap, Map<String, Candidate> out) throws StoreException {
        long from = gap.idAfter() + 1;
        long to = Long.compareUnsigned(gap.idBefore(), from) > 0 ? gap.idBefore() - 1 : from;
        int asked = 0;
        for (long id = from; Long.compareUnsigned(id, to) <= 0 && asked < EntryGaps.MAX_IMPLIED_HEADS; id++, asked++) {
            for (boolean legacy : new boolean[] {false, true}) {
                String under = legacy ? legacyPrefix : prefix;
                String name = pad(gap.base()) + "-" + pad(id) + SegmentKeys.SEGMENT_SUFFIX;
                try {
                    long size = fetcher.head(under + name).size();
                    out.put(under + name, new Candidate(under + name, gap.base(), id, size, legacy));
                } catch (ObjectNotFoundException absent) {
                    // not this id
                }
            }
            if (!out.isEmpty()) {
                return;
            }
        }
    }

    private static String pad(long value) {
        String digits = Long.toUnsignedString(value);
        return "0".repeat(20 - digits.length()) + digits;
    }

    private void collect(String under, boolean legacy, Map<String, Candidate> out, List<String> ignored)
            throws StoreException {
        ObjectListing listing = lister.list(under);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            if (!o.key().startsWith(under) || out.containsKey(o.key())) {
                continue;
            }
            String name = o.key().substring(under.length());
            if (name.endsWith(SegmentKeys.INDEX_SUFFIX)) {
                continue; // rebuilt by readers from the segment when absent; never needed for an entry
            }
            Candidate c = candidate(o, name, legacy);
            if (c == null) {
                if (!ignored.contains(o.key())) {
                    ignored.add(o.key());
                }
                continue;
            }
            out.put(c.key(), c);
        }
    }

    /** The segment keys directly under {@code under} whose object name begins with {@code start}. */
    private void collectUnder(String under, String start, boolean legacy, Map<String, Candidate> out)
            throws StoreException {
        ObjectListing listing = lister.list(under + start);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            if (!o.key().startsWith(under + start)) {
                continue;
            }
            Candidate c = candidate(o, o.key().substring(under.length()), legacy);
            if (c != null) {
                out.put(c.key(), c);
            }
        }
    }

    private static Candidate candidate(ObjectSummary o, String name, boolean legacy) {
        Matcher m = SEGMENT_NAME.matcher(name);
        if (!m.matches()) {
            return null;
        }
        try {
            return new Candidate(o.key(), Long.parseUnsignedLong(m.group(1)), Long.parseUnsignedLong(m.group(2)),
                    o.size(), legacy);
        } catch (NumberFormatException e) {
            return null; // 20 digits above 2^64-1
        }
    }
}
