package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

/**
 * The object keys the manifests of a root's live shards name (segment and index), and which shards
 * name each: every manifest read once, under the root's lock, before anything deletes. A manifest that
 * cannot be read is listed in {@link #unreadable()}: what it names is unknown, so {@link KeyOwnership}
 * lets no key be deleted while one is.
 *
 * <p>Read with the node's {@link SegmentKeys}, it holds in memory only the keys a manifest names
 * outside its own shard's prefix (a legacy key, another shard's or another node's): a key in a live
 * shard's own prefix is answered from that shard's manifest when asked (a few shards' keys cached), so
 * the heap grows with the root's shards and its unusual keys, not with the objects it has offloaded. A
 * manifest unreadable when asked counts as naming the key.
 */
public final class LiveKeys {

    /** Shards whose keys are held at once when answered from their manifests. */
    private static final int SHARDS_CACHED = 8;

    private final Map<String, Set<String>> namedBy;
    private final List<String> unreadable;
    /** The node's keys, or null when every named key is in {@link #namedBy}. */
    private final SegmentKeys keys;
    /** The live shards by name, for the keys in their own prefixes (empty without {@link #keys}). */
    private final Map<String, Path> shards;
    private final com.github.benmanes.caffeine.cache.Cache<String, Set<String>> ownKeys;

    private LiveKeys(Map<String, Set<String>> namedBy, List<String> unreadable, SegmentKeys keys, Map<String, Path> shards) {
        this.namedBy = namedBy;
        this.unreadable = List.copyOf(unreadable);
        this.keys = keys;
        this.shards = shards;
        this.ownKeys = com.github.benmanes.caffeine.cache.Caffeine.newBuilder().maximumSize(SHARDS_CACHED).build();
    }

    /** As {@link #read(DataRoot, SegmentKeys)}, holding every named key in memory. */
    public static LiveKeys read(DataRoot root) throws IOException {
        return read(root, null);
    }

    /**
     * Reads the manifest of every live shard of the root, as {@link DataRoot#list()} lists them (a
     * directory holding only a manifest is a shard too; what is under {@code .deleted/} is not live).
     * A name the listing could not examine counts as an unreadable manifest, unless it is a link to
     * nothing or a second name of a listed shard, which name nothing of their own.
     *
     * @param keys the node's keys: a key in a shard's own prefix under them is not held but answered
     *             from that shard's manifest when asked; null to hold every key
     */
    public static LiveKeys read(DataRoot root, SegmentKeys keys) throws IOException {
        return read(root, keys, () -> false).orElseThrow();
    }

    /** Manifests read between two asks of {@code abandon}: a few milliseconds of reading. */
    public static final int MANIFESTS_PER_ASK = 64;

    /**
     * As {@link #read(DataRoot, SegmentKeys)}, asking {@code abandon} while the root is listed (see
     * {@link DataRoot#list(BooleanSupplier)}) and after every {@value #MANIFESTS_PER_ASK} manifests, and answering empty as soon as it says yes: a reader that
     * holds the root's lock for the read lets another pass waiting for it go first, instead of keeping
     * it for every manifest of a large root (seconds at tens of thousands of shards).
     */
    public static Optional<LiveKeys> read(DataRoot root, SegmentKeys keys, BooleanSupplier abandon)
            throws IOException {
        Map<String, Set<String>> named = new HashMap<>();
        List<String> unreadable = new ArrayList<>();
        Optional<DataRoot.Listing> listed = root.list(abandon);
        if (listed.isEmpty()) {
            return Optional.empty();
        }
        DataRoot.Listing listing = listed.get();
        Map<String, Path> dirs = new java.util.TreeMap<>();
        for (DataRoot.Shard s : listing.shards()) {
            dirs.put(s.name(), s.directory());
        }
        // Where the shards really are is needed only to tell a second name of one from an unreadable
        // entry; resolving every shard (30,000 paths) for a root with none is most of a re-read's time.
        java.util.Set<Path> listedReal = new java.util.HashSet<>();
        if (!listing.unreadable().isEmpty()) {
            for (DataRoot.Shard s : listing.shards()) {
                try {
                    listedReal.add(s.directory().toRealPath());
                } catch (IOException e) {
                    // examined a moment ago; if it cannot be resolved now its manifest read below says so
                }
            }
        }
        for (DataRoot.Unreadable u : listing.unreadable()) {
            if (!Files.exists(u.path())) {
                continue; // a link to nothing holds no manifest
            }
            try {
                if (listedReal.contains(u.path().toRealPath())) {
                    continue; // another name of a listed shard, whose manifest is read under that name
                }
            } catch (IOException e) {
                // cannot be resolved: what it names is unknown
            }
            unreadable.add(u.name());
        }
        int read = 0;
        for (Map.Entry<String, Path> d : dirs.entrySet()) {
            if (++read % MANIFESTS_PER_ASK == 0 && abandon.getAsBoolean()) {
                return Optional.empty();
            }
            String shard = d.getKey();
            List<ManifestEntry> entries;
            try {
                entries = ManifestStore.read(d.getValue()).entries();
            } catch (NoSuchFileException gone) {
                continue; // no manifest (offload never ran there), or removed meanwhile
            } catch (CorruptionException e) {
                unreadable.add(shard);
                continue;
            }
            for (ManifestEntry e : entries) {
                if (keys != null && shard.equals(ownerOf(keys, e.objectKey()))) {
                    continue; // in its own prefix: answered from this manifest when asked
                }
                named.computeIfAbsent(e.objectKey(), k -> new TreeSet<>()).add(shard);
                if (e.objectKey().endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                    named.computeIfAbsent(SegmentKeys.indexKeyFor(e.objectKey()), k -> new TreeSet<>()).add(shard);
                }
            }
        }
        return Optional.of(new LiveKeys(named, unreadable, keys, keys == null ? Map.of() : dirs));
    }

    /** For tests and callers that know the names: {@code namedBy} maps keys to the shards naming them. */
    public static LiveKeys of(Map<String, Set<String>> namedBy, List<String> unreadable) {
        Map<String, Set<String>> copy = new HashMap<>();
        namedBy.forEach((k, v) -> copy.put(k, new TreeSet<>(v)));
        return new LiveKeys(copy, unreadable, null, Map.of());
    }

    /** The live shards whose manifests name the key (as a segment or its index), sorted; empty if none. */
    public Set<String> shardsNaming(String key) {
        Set<String> held = namedBy.get(key);
        String owner = keys == null ? null : ownerOf(keys, key);
        if (owner == null || !shards.containsKey(owner) || !ownKeysOf(owner).contains(key)) {
            return held == null ? Set.of() : java.util.Collections.unmodifiableSet(held);
        }
        Set<String> all = new TreeSet<>(held == null ? Set.of() : held);
        all.add(owner);
        return java.util.Collections.unmodifiableSet(all);
    }

    /**
     * Whether a live shard other than {@code shard} names the key: what a live shard's own delete
     * asks, answered without reading its own manifest (its own naming never counts against it).
     */
    public boolean namedByOtherThan(String shard, String key) {
        Set<String> held = namedBy.get(key);
        if (held != null && held.stream().anyMatch(s -> !s.equals(shard))) {
            return true;
        }
        String owner = keys == null ? null : ownerOf(keys, key);
        return owner != null && !owner.equals(shard) && shards.containsKey(owner) && ownKeysOf(owner).contains(key);
    }

    /** Live shards whose manifest could not be read. */
    public List<String> unreadable() {
        return unreadable;
    }

    /** How many keys are held in memory (the rest are answered from manifests when asked). */
    public int keysHeld() {
        return namedBy.size();
    }

    /**
     * The shard whose own prefix under {@code keys} holds {@code key} directly ({@code
     * <node prefix><shard>/<file>}), or null.
     */
    private static String ownerOf(SegmentKeys keys, String key) {
        String node = keys.nodePrefix();
        int slash = key.lastIndexOf('/');
        if (!key.startsWith(node) || slash <= node.length()) {
            return null;
        }
        return key.substring(node.length(), slash);
    }

    /** The keys {@code shard}'s manifest names now (segments and their indexes); null-safe on a failed read. */
    private Set<String> ownKeysOf(String shard) {
        return ownKeys.get(shard, s -> {
            Set<String> out = new java.util.HashSet<>();
            try {
                for (ManifestEntry e : ManifestStore.read(shards.get(s)).entries()) {
                    out.add(e.objectKey());
                    if (e.objectKey().endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                        out.add(SegmentKeys.indexKeyFor(e.objectKey()));
                    }
                }
                return out;
            } catch (NoSuchFileException gone) {
                return out; // removed since: it names nothing now
            } catch (IOException | CorruptionException e) {
                return new NamesEverything(); // unknown now: counts as naming whatever is asked
            }
        });
    }

    /** What a manifest unreadable when asked names, as far as a delete may assume: everything. */
    private static final class NamesEverything extends java.util.AbstractSet<String> {
        @Override
        public boolean contains(Object o) {
            return true;
        }

        @Override
        public java.util.Iterator<String> iterator() {
            return java.util.Collections.emptyIterator();
        }

        @Override
        public int size() {
            return 0;
        }
    }
}
