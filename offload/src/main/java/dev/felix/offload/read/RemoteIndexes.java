package dev.felix.offload.read;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.IndexedScan;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Where a read of a remote segment starts: the segment's start for a segment small enough to have no
 * index object ({@link SegmentKeys#hasIndexObject}); else the companion index of the object (at
 * {@link SegmentKeys#indexKeyFor}), fetched whole, or for a large segment in runs of entries around
 * the one needed, and kept by the object's identity within a bound on memory. A missing or unusable
 * index answers "from the segment's start", never a failure: the scan that follows checks every
 * record anyway. {@code TieredReader} routes reads; this class only answers where one begins.
 *
 * <p>Safe for the reader's threads at once: its state is in concurrent caches, {@link Caches} shared
 * by every reader of one chunk cache (the daemon's readers of all shards), so what they keep of
 * remote indexes has one bound in all, not one a shard. They are keyed by the segment object's
 * identity, so readers of different shards never see each other's.
 */
final class RemoteIndexes {

    private static final Logger LOG = LoggerFactory.getLogger(RemoteIndexes.class);

    /** The remote indexes one reader keeps, by their size in memory (an entry is two longs). */
    static final long INDEX_CACHE_BYTES = 16L * 1024 * 1024;
    private static final int INDEX_ENTRY_BYTES = 16;
    private static final int INDEX_OVERHEAD_BYTES = 128;

    private final String shard;
    private final ObjectFetcher store;
    /** Entries fetched at a time from a large remote index. */
    private final int indexWindowEntries;
    /** What the readers of one chunk cache keep of remote indexes, within {@link #INDEX_CACHE_BYTES} twice over. */
    static final class Caches {
        /**
         * Remote indexes by the segment object's identity (key, size, CRC32: a reset shard's new history
         * reuses keys); an empty index marks one that is missing or unusable. A reader drops its shard's,
         * with the headers, whenever its manifest changes.
         */
        final Cache<ObjectIdentity, SegmentIndex> indexes = Caffeine.newBuilder()
                .maximumWeight(INDEX_CACHE_BYTES)
                .weigher((ObjectIdentity k, SegmentIndex v) -> INDEX_OVERHEAD_BYTES + v.size() * INDEX_ENTRY_BYTES)
                .build();
        /**
         * Runs of entries of remote indexes too large to fetch whole for one read, by object, kept by
         * their size in memory within the same bound as whole indexes; and the sizes of those indexes.
         */
        final Cache<ObjectIdentity, List<IndexWindow>> indexWindows = Caffeine.newBuilder()
                .maximumWeight(INDEX_CACHE_BYTES)
                .weigher((ObjectIdentity k, List<IndexWindow> v) -> INDEX_OVERHEAD_BYTES
                        + v.stream().mapToInt(w -> INDEX_OVERHEAD_BYTES + w.entries().size() * INDEX_ENTRY_BYTES).sum())
                .build();
        final Cache<ObjectIdentity, Long> indexSizes = Caffeine.newBuilder().maximumSize(4096).build();
    }

    private final Cache<ObjectIdentity, SegmentIndex> indexes;
    private final Cache<ObjectIdentity, List<IndexWindow>> indexWindows;
    private final Cache<ObjectIdentity, Long> indexSizes;

    RemoteIndexes(String shard, ObjectFetcher store, int indexWindowEntries, Caches caches) {
        this.indexes = caches.indexes;
        this.indexWindows = caches.indexWindows;
        this.indexSizes = caches.indexSizes;
        this.shard = shard;
        this.store = store;
        this.indexWindowEntries = indexWindowEntries;
    }

    /** Forgets the indexes of {@code objects}: the manifest that named them changed, so they may be another history's. */
    void forget(java.util.Collection<ObjectIdentity> objects) {
        indexes.invalidateAll(objects);
        indexWindows.invalidateAll(objects);
        indexSizes.invalidateAll(objects);
    }

    /** {@code object}'s index pointed at no valid record: its reads start from the segment's start from now on. */
    void unusable(ObjectIdentity object, ManifestEntry entry) {
        indexes.put(object, empty(entry));
    }

    /** The index entry at or below {@code want} to start the scan from, {@code NONE} for the segment's start. */
    IndexedScan.Entry indexedStart(ObjectIdentity object, ManifestEntry entry, long want) {
        if (!SegmentKeys.hasIndexObject(entry.sizeBytes())) {
            // Offloaded without an index object: one chunk holds the whole segment, scanned from its start.
            return IndexedScan.Entry.NONE;
        }
        SegmentIndex whole = indexes.getIfPresent(object);
        // Only a segment whose index at the default spacing would exceed two runs is worth a HEAD
        // to learn its index's size; smaller ones are fetched whole, as they always were.
        boolean large = entry.sizeBytes() / SegmentWriter.DEFAULT_INDEX_SPACING_BYTES > 2L * indexWindowEntries;
        if (whole == null && large) {
            long entries = indexEntries(object, entry);
            if (entries > 2L * indexWindowEntries) {
                IndexedScan.Entry found = fromWindows(object, entry, want, (int) entries);
                if (found != null) {
                    return found;
                }
            }
        }
        if (whole == null) {
            whole = indexFor(object, entry);
            indexWindows.invalidate(object);
        }
        int e = whole.entryAtOrBelow(want);
        return e < 0 ? IndexedScan.Entry.NONE : new IndexedScan.Entry(whole.offsetAt(e), whole.positionAt(e));
    }

    /** A run of a remote index's entries: entries {@code [first, first + entries.size())} of {@code total}. */
    private record IndexWindow(int first, int total, SegmentIndex entries) {
        boolean reachesEnd() {
            return first + entries.size() >= total;
        }
    }

    /**
     * How many whole entries the object's remote index holds, by its size (one HEAD per object, kept);
     * -1 when that is unknown, so the whole index is read (or found missing) the usual way.
     */
    private long indexEntries(ObjectIdentity object, ManifestEntry entry) {
        Long cached = indexSizes.getIfPresent(object);
        if (cached == null) {
            String indexKey = SegmentKeys.indexKeyFor(object.key());
            try {
                cached = store.head(indexKey).size();
            } catch (StoreException e) {
                return -1; // missing or unreachable: the whole-index path says which, and copes
            }
            indexSizes.put(object, cached);
        }
        long size = cached;
        if (size < SegmentIndex.HEADER_LENGTH || size > SegmentIndex.MAX_FILE_BYTES) {
            return -1;
        }
        return (size - SegmentIndex.HEADER_LENGTH) / SegmentIndex.ENTRY_LENGTH;
    }

    /**
     * Finds the entry at or below {@code want} by fetching runs of {@link #indexWindowEntries} entries
     * of a large remote index instead of all of it: the first run where the offset's share of the
     * segment's offsets puts it, the next (if that missed) where the entries seen say it lies. Runs
     * are kept by bytes with the indexes. Null when a few runs did not find it, or one could not be
     * read, or this is not the first read of the object to need one: the caller reads the whole
     * index, which is kept and answers every later read. Each request costs far more than its bytes
     * on the servers measured (a 32 KiB run took 7.4 ms on S3Proxy, the whole 0.5 MiB index 8.9 ms),
     * so a run pays for a reader that reads a segment once, and the whole index for one that returns.
     */
    private IndexedScan.Entry fromWindows(ObjectIdentity object, ManifestEntry entry, long want, int total) {
        boolean returning = !indexWindows.asMap().getOrDefault(object, List.of()).isEmpty();
        String indexKey = SegmentKeys.indexKeyFor(object.key());
        long span = entry.lastOffset() - entry.baseOffset() + 1;
        double share = span <= 0 ? 0 : Math.max(0, Math.min(1, (want - entry.baseOffset()) / (double) span));
        long guess = (long) (share * total);
        for (int attempt = 0; attempt < 3; attempt++) {
            int first = (int) Math.max(0, Math.min(total - indexWindowEntries, guess - indexWindowEntries / 2));
            IndexWindow w = cachedWindow(object, want);
            if (w == null) {
                if (returning) {
                    return null; // a reader back for more of this segment: the whole index from now on
                }
                w = fetchWindow(object, entry, indexKey, first, total);
                if (w == null) {
                    return null;
                }
            }
            SegmentIndex run = w.entries();
            int n = run.size();
            long lowest = run.offsetAt(0);
            long highest = run.offsetAt(n - 1);
            double perEntry = n > 1 ? Math.max(1, (highest - lowest) / (double) (n - 1)) : 1;
            if (Long.compareUnsigned(want, lowest) < 0) {
                if (w.first() == 0) {
                    return IndexedScan.Entry.NONE; // below the first entry: from the segment's start
                }
                guess = w.first() - 1 - (long) ((lowest - want) / perEntry);
            } else if (Long.compareUnsigned(want, highest) <= 0 || w.reachesEnd() || want - highest <= 2 * perEntry) {
                // Inside the run, past the index's end, or within two entries' worth of offsets past
                // the run's end: starting at its last entry costs a scan of about two index spacings.
                int e = run.entryAtOrBelow(want);
                return new IndexedScan.Entry(run.offsetAt(e), run.positionAt(e));
            } else {
                guess = w.first() + n + (long) ((want - highest) / perEntry);
            }
        }
        return null;
    }

    /** A kept run of {@code object}'s index entries that settles where {@code want} starts, if any. */
    private IndexWindow cachedWindow(ObjectIdentity object, long want) {
        for (IndexWindow w : indexWindows.asMap().getOrDefault(object, List.of())) {
            SegmentIndex run = w.entries();
            boolean aboveFirst = Long.compareUnsigned(want, run.offsetAt(0)) >= 0 || w.first() == 0;
            boolean belowLast = Long.compareUnsigned(want, run.offsetAt(run.size() - 1)) <= 0 || w.reachesEnd();
            if (aboveFirst && belowLast) {
                return w;
            }
        }
        return null;
    }

    private IndexWindow fetchWindow(ObjectIdentity object, ManifestEntry entry, String indexKey, int first, int total) {
        int count = Math.min(indexWindowEntries, total - first);
        long at = SegmentIndex.HEADER_LENGTH + (long) first * SegmentIndex.ENTRY_LENGTH;
        CorruptionSite site = CorruptionSite.inFile(shard, indexKey, 0);
        SegmentIndex run;
        try {
            if (first == 0) {
                // From the file's start: the header comes along, and is checked like a whole index's.
                byte[] bytes = store.readRange(indexKey, ByteRange.of(0, (int) at + count * SegmentIndex.ENTRY_LENGTH));
                run = SegmentIndex.decode(ByteBuffer.wrap(bytes), site);
                if (run.baseOffset() != entry.baseOffset()) {
                    LOG.info("{}: index {} begins at offset {}, its segment at {}; reading the segment from its start",
                            shard, indexKey, Long.toUnsignedString(run.baseOffset()),
                            Long.toUnsignedString(entry.baseOffset()));
                    indexes.put(object, empty(entry));
                    return null;
                }
            } else {
                byte[] bytes = store.readRange(indexKey, ByteRange.of(at, count * SegmentIndex.ENTRY_LENGTH));
                run = SegmentIndex.decodeEntries(ByteBuffer.wrap(bytes), at, entry.baseOffset(), site);
            }
        } catch (CorruptionException e) {
            LOG.info("{}: no usable index at {} ({}); reading the segment from its start", shard, indexKey, e.getMessage());
            indexes.put(object, empty(entry));
            return null;
        } catch (StoreException e) {
            LOG.info("{}: fetching part of index {} failed ({}); reading it whole", shard, indexKey, e.getMessage());
            indexSizes.invalidate(object); // it may have changed size: ask again next time
            return null;
        }
        if (run.size() == 0) {
            return null;
        }
        IndexWindow w = new IndexWindow(first, total, run);
        // Only a segment's first read fetches runs (at most three), so the list stays short.
        List<IndexWindow> kept = new ArrayList<>(indexWindows.asMap().getOrDefault(object, List.of()));
        kept.add(w);
        indexWindows.put(object, List.copyOf(kept));
        return w;
    }

    private SegmentIndex indexFor(ObjectIdentity object, ManifestEntry entry) {
        SegmentIndex cached = indexes.getIfPresent(object);
        if (cached != null) {
            return cached;
        }
        SegmentIndex index;
        String indexKey = SegmentKeys.indexKeyFor(object.key());
        try {
            byte[] bytes = store.readAll(indexKey, (int) Math.min(SegmentIndex.MAX_FILE_BYTES, Integer.MAX_VALUE - 16),
                    OptionalLong.empty());
            index = SegmentIndex.decode(ByteBuffer.wrap(bytes), CorruptionSite.inFile(shard, indexKey, 0));
            if (index.baseOffset() != entry.baseOffset()) {
                index = empty(entry);
            }
        } catch (ObjectNotFoundException | CorruptionException e) {
            LOG.info("{}: no usable index at {} ({}); reading the segment from its start", shard, indexKey,
                    e.getMessage());
            index = empty(entry);
        } catch (StoreException e) {
            LOG.warn("{}: fetching index {} failed ({}); reading the segment from its start", shard, indexKey,
                    e.getMessage());
            return empty(entry); // not cached: the next read tries again
        }
        indexes.put(object, index);
        return index;
    }

    private static SegmentIndex empty(ManifestEntry entry) {
        return SegmentIndex.of(entry.baseOffset(), new long[0], new long[0]);
    }
}
