package dev.felix.offload.manifest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What most readers of a manifest need from it, in a few dozen bytes however many entries it has:
 * its totals, its oldest and newest entries, which segment ids it records (as runs of consecutive
 * ids), and the distinct "directories" its keys lie in (everything up to a key's last {@code /}).
 * The survey, the gauges, the offload pass's look for work and the sweep's look for change ask this
 * instead of holding every entry.
 *
 * @param entries        how many entries
 * @param bytes          the sum of their sizes
 * @param oldest         the entry with the lowest offsets
 * @param newest         the entry with the highest offsets
 * @param keyDirectories the distinct directories of the keys (normally one: {@code <node>/<shard>/});
 *                       empty when there are more than {@link #MAX_KEY_DIRECTORIES}, so a reader that
 *                       needs them reads the whole manifest
 */
public record ManifestSummary(int entries, long bytes, Optional<ManifestEntry> oldest, Optional<ManifestEntry> newest,
                              List<String> keyDirectories, long[] idRuns) {

    /** More distinct key directories than this are not kept (see the record's comment). */
    public static final int MAX_KEY_DIRECTORIES = 8;

    public static final ManifestSummary EMPTY = new ManifestSummary(0, 0, Optional.empty(), Optional.empty(), List.of(),
            new long[0]);

    /** The summary of {@code manifest}. */
    public static ManifestSummary of(Manifest manifest) {
        if (manifest.isEmpty()) {
            return EMPTY;
        }
        List<ManifestEntry> entries = manifest.entries();
        long[] ids = new long[entries.size()];
        List<String> dirs = new ArrayList<>(2);
        boolean tooMany = false;
        for (int i = 0; i < ids.length; i++) {
            ManifestEntry e = entries.get(i);
            ids[i] = e.segmentId();
            if (!tooMany) {
                String key = e.objectKey();
                String dir = key.substring(0, key.lastIndexOf('/') + 1);
                if (!dirs.contains(dir)) {
                    dirs.add(dir);
                    tooMany = dirs.size() > MAX_KEY_DIRECTORIES;
                }
            }
        }
        // Unsigned order: flipping the sign bit makes a signed sort sort unsigned.
        for (int i = 0; i < ids.length; i++) {
            ids[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(ids);
        long[] runs = new long[ids.length * 2];
        int n = 0;
        for (long flipped : ids) {
            long id = flipped ^ Long.MIN_VALUE;
            if (n > 0 && (runs[n - 1] == id || runs[n - 1] + 1 == id && runs[n - 1] != -1L)) {
                runs[n - 1] = id;
            } else {
                runs[n++] = id;
                runs[n++] = id;
            }
        }
        return new ManifestSummary(entries.size(), manifest.totals().bytes(), manifest.oldestEntry(),
                manifest.newestEntry(), tooMany ? List.of() : List.copyOf(dirs), Arrays.copyOf(runs, n));
    }

    /** Whether an entry records segment {@code segmentId}. */
    public boolean records(long segmentId) {
        int lo = 0;
        int hi = idRuns.length / 2 - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long from = idRuns[2 * mid];
            long to = idRuns[2 * mid + 1];
            if (Long.compareUnsigned(segmentId, from) < 0) {
                hi = mid - 1;
            } else if (Long.compareUnsigned(segmentId, to) > 0) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    public boolean isEmpty() {
        return entries == 0;
    }

    /** Whether every key lies directly in one of {@code directories} (false when the directories are not kept). */
    public boolean keysOnlyUnder(List<String> directories) {
        return entries == 0 || !keyDirectories.isEmpty() && directories.containsAll(keyDirectories);
    }

    /** Roughly what this takes in memory, for a cache's weight. */
    long weight() {
        long w = 96 + 8L * idRuns.length;
        for (String d : keyDirectories) {
            w += 48 + d.length();
        }
        return w;
    }
}
