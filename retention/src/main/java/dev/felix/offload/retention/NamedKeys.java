package dev.felix.offload.retention;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The keys the root's manifests name, as the orphan sweep asks about them, held so that memory
 * follows the largest shard and not the store: a live shard's manifest names keys under its own
 * prefix ({@code .../<shard>/<object>}), and those are read again from that manifest when a key
 * there is asked about (the last few shards' sets kept, since a listing and the journal ask shard by
 * shard). Only what a manifest names outside its own prefix, and what the manifests under
 * {@code .deleted/} name, is kept for the whole sweep.
 *
 * <p>The sweep judges under the root's lock, where no manifest changes between its first read and a
 * later one. A manifest that cannot be read again answers "named" for every key under its prefix:
 * kept, never deleted.
 */
final class NamedKeys {

    private static final int CACHED_SHARDS = 4;

    private final Set<String> elsewhere = new HashSet<>();
    private final Map<String, Path> dirs = new HashMap<>();
    private final Map<String, Set<String>> cached = new LinkedHashMap<>(8, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
            return size() > CACHED_SHARDS;
        }
    };

    /** A live shard whose manifest was read: its own keys are read again from {@code dir} when asked. */
    void shard(String name, Path dir) {
        dirs.put(name, dir);
    }

    /** Keys named outside their shard's own prefix (or by a manifest under {@code .deleted/}). */
    void elsewhere(Collection<String> keys) {
        elsewhere.addAll(keys);
    }

    /** True when {@code key} lies under {@code shard}'s own prefix ({@code <dir>} or {@code <container>/<dir>}). */
    static boolean own(String key, String shard) {
        String dir = dirOf(key);
        return dir.equals(shard) || dir.endsWith("/" + shard);
    }

    private static String dirOf(String key) {
        int slash = key.lastIndexOf('/');
        return slash < 0 ? "" : key.substring(0, slash);
    }

    boolean contains(String key) {
        if (elsewhere.contains(key)) {
            return true;
        }
        String dir = dirOf(key);
        int last = dir.lastIndexOf('/');
        String one = dir.substring(last + 1);
        if (namedBy(one, key)) {
            return true;
        }
        if (last > 0) {
            int before = dir.lastIndexOf('/', last - 1);
            return namedBy(dir.substring(before + 1), key);
        }
        return false;
    }

    private boolean namedBy(String shard, String key) {
        Path dir = dirs.get(shard);
        if (dir == null) {
            return false;
        }
        Set<String> keys = cached.get(shard);
        if (keys == null) {
            try {
                keys = new HashSet<>();
                for (ManifestEntry e : manifestOf(dir).entries()) {
                    keys.addAll(BatchDeletes.objectsOf(e));
                }
            } catch (IOException e) {
                return true; // read a moment ago, not now: what it names is unknown, so the key is kept
            }
            cached.put(shard, keys);
        }
        return keys.contains(key);
    }

    /** The manifest of a live shard's directory; empty when it has none (any more). */
    static Manifest manifestOf(Path dir) throws IOException {
        try {
            return ManifestStore.read(dir);
        } catch (NoSuchFileException gone) {
            return Manifest.empty();
        } catch (CorruptionException e) {
            throw new IOException(dir + ": manifest unreadable now: " + e.getMessage(), e);
        }
    }
}
