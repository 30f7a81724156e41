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
import java.util.Set;
import java.util.TreeSet;

/**
 * The object keys the manifests of a root's live shards name (segment and index), and which shards
 * name each: read once, under the root's lock, before anything deletes. A manifest that cannot be
 * read is listed in {@link #unreadable()}: what it names is unknown, so {@link KeyOwnership} lets no
 * key be deleted while one is.
 */
public final class LiveKeys {

    private final Map<String, Set<String>> namedBy;
    private final List<String> unreadable;

    private LiveKeys(Map<String, Set<String>> namedBy, List<String> unreadable) {
        this.namedBy = namedBy;
        this.unreadable = List.copyOf(unreadable);
    }

    /**
     * Reads the manifest of every live shard of the root, as {@link DataRoot#list()} lists them (a
     * directory holding only a manifest is a shard too; what is under {@code .deleted/} is not live).
     * A name the listing could not examine counts as an unreadable manifest, unless it is a link to
     * nothing or a second name of a listed shard, which name nothing of their own.
     */
    public static LiveKeys read(DataRoot root) throws IOException {
        Map<String, Set<String>> named = new HashMap<>();
        List<String> unreadable = new ArrayList<>();
        DataRoot.Listing listing = root.list();
        Map<String, Path> dirs = new java.util.TreeMap<>();
        java.util.Set<Path> listedReal = new java.util.HashSet<>();
        for (DataRoot.Shard s : listing.shards()) {
            dirs.put(s.name(), s.directory());
            try {
                listedReal.add(s.directory().toRealPath());
            } catch (IOException e) {
                // examined a moment ago; if it cannot be resolved now its manifest read below says so
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
        for (Map.Entry<String, Path> d : dirs.entrySet()) {
            Path dir = d.getValue();
            String shard = d.getKey();
            List<ManifestEntry> entries;
            try {
                entries = ManifestStore.read(dir).entries();
            } catch (NoSuchFileException gone) {
                continue; // no manifest (offload never ran there), or removed meanwhile
            } catch (CorruptionException e) {
                unreadable.add(shard);
                continue;
            }
            for (ManifestEntry e : entries) {
                named.computeIfAbsent(e.objectKey(), k -> new TreeSet<>()).add(shard);
                if (e.objectKey().endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                    named.computeIfAbsent(SegmentKeys.indexKeyFor(e.objectKey()), k -> new TreeSet<>()).add(shard);
                }
            }
        }
        return new LiveKeys(named, unreadable);
    }

    /** For tests and callers that know the names: {@code namedBy} maps keys to the shards naming them. */
    public static LiveKeys of(Map<String, Set<String>> namedBy, List<String> unreadable) {
        Map<String, Set<String>> copy = new HashMap<>();
        namedBy.forEach((k, v) -> copy.put(k, new TreeSet<>(v)));
        return new LiveKeys(copy, unreadable);
    }

    /** The live shards whose manifests name the key (as a segment or its index), sorted; empty if none. */
    public Set<String> shardsNaming(String key) {
        Set<String> shards = namedBy.get(key);
        return shards == null ? Set.of() : java.util.Collections.unmodifiableSet(shards);
    }

    /** Live shards whose manifest could not be read. */
    public List<String> unreadable() {
        return unreadable;
    }
}
