package dev.felix.offload.manifest;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The contents of a shard's {@code offload.manifest}: the entries of the segments with a verified
 * copy in the object store, ascending by base offset and never overlapping. Gaps between entries
 * are allowed: a segment retention deleted while offload was off was never copied.
 *
 * <p>Immutable: every operation answers a new manifest (or this one, when nothing changes), so a
 * reader holding one is never disturbed by the next offload or retention pass. Offsets are u64 and
 * compared unsigned throughout.
 */
public final class Manifest {

    private static final Manifest EMPTY = new Manifest(new ManifestEntry[0], ManifestTotals.NONE);

    /** Ascending by base offset, each entry's base above the previous entry's last offset. Never mutated. */
    private final ManifestEntry[] entries;
    private final ManifestTotals totals;

    private Manifest(ManifestEntry[] entries, ManifestTotals totals) {
        this.entries = entries;
        this.totals = totals;
    }

    /** The manifest of a shard with nothing offloaded, which is also what an absent file reads as. */
    public static Manifest empty() {
        return EMPTY;
    }

    /**
     * A manifest of these entries.
     *
     * @throws IllegalArgumentException when they are not ascending by base offset or two overlap
     */
    public static Manifest of(List<ManifestEntry> entries) {
        ManifestEntry[] copy = entries.toArray(new ManifestEntry[0]);
        for (int i = 1; i < copy.length; i++) {
            if (!isAbove(copy[i], copy[i - 1])) {
                throw new IllegalArgumentException("entry " + i + " " + copy[i] + " does not lie above entry "
                        + (i - 1) + " " + copy[i - 1]);
            }
        }
        return ofOrdered(copy);
    }

    /** For the codec, which checked the order itself and reports breaks as corruption; takes ownership. */
    static Manifest ofOrdered(ManifestEntry[] ordered) {
        return ordered.length == 0 ? EMPTY : new Manifest(ordered, ManifestTotals.of(ordered, 0, ordered.length));
    }

    /** True when {@code next} starts above the last offset of {@code previous}. */
    static boolean isAbove(ManifestEntry next, ManifestEntry previous) {
        return Long.compareUnsigned(next.baseOffset(), previous.lastOffset()) > 0;
    }

    /** The entries, ascending by base offset; unmodifiable. */
    public List<ManifestEntry> entries() {
        return Collections.unmodifiableList(Arrays.asList(entries));
    }

    public int size() {
        return entries.length;
    }

    public boolean isEmpty() {
        return entries.length == 0;
    }

    /** The entry with the lowest offsets, if any. */
    public Optional<ManifestEntry> oldestEntry() {
        return entries.length == 0 ? Optional.empty() : Optional.of(entries[0]);
    }

    /** The entry with the highest offsets, if any. */
    public Optional<ManifestEntry> newestEntry() {
        return entries.length == 0 ? Optional.empty() : Optional.of(entries[entries.length - 1]);
    }

    /** Entry count, bytes, and the oldest and newest timestamps. */
    public ManifestTotals totals() {
        return totals;
    }

    /**
     * This manifest with {@code entry} appended. Offload copies segments oldest first, so a new entry
     * always lies above every entry already recorded.
     *
     * @throws IllegalArgumentException when its base offset is not above the newest entry's last offset
     */
    public Manifest withEntry(ManifestEntry entry) {
        if (entries.length > 0 && !isAbove(entry, entries[entries.length - 1])) {
            throw new IllegalArgumentException(entry + " does not lie above the newest entry "
                    + entries[entries.length - 1]);
        }
        ManifestEntry[] next = Arrays.copyOf(entries, entries.length + 1);
        next[entries.length] = entry;
        return new Manifest(next, totals.plus(entry));
    }

    /**
     * Where {@code offset} lives, by binary search: the entry holding it, {@link ManifestLookup.Kind#BELOW}
     * the oldest entry, in a {@link ManifestLookup.Kind#GAP} before the next entry, or
     * {@link ManifestLookup.Kind#ABOVE} every entry.
     */
    public ManifestLookup find(long offset) {
        int i = lastWithBaseAtOrBelow(offset);
        if (i < 0) {
            return entries.length == 0 ? ManifestLookup.ABOVE : ManifestLookup.below(entries[0]);
        }
        if (Long.compareUnsigned(offset, entries[i].lastOffset()) <= 0) {
            return ManifestLookup.holding(entries[i]);
        }
        return i + 1 < entries.length ? ManifestLookup.gap(entries[i + 1]) : ManifestLookup.ABOVE;
    }

    /**
     * This manifest without the entries holding offsets at or after {@code cut}, for a truncation of
     * the log to {@code cut}. An entry straddling the cut goes whole: its object holds records the
     * truncation replaces, so it can no longer stand for the log.
     */
    public Manifest truncatedAt(long cut) {
        return prefix(countWithLastBelow(cut));
    }

    /** The empty manifest: a reset of the log drops every entry. */
    public Manifest reset() {
        return EMPTY;
    }

    /**
     * This manifest without the entries whose every offset is at or below {@code offset}, for remote
     * retention. An entry holding {@code offset} and later offsets stays: its object still holds records
     * retention keeps.
     */
    public Manifest withoutEntriesThrough(long offset) {
        int drop = countWithLastAtOrBelow(offset);
        if (drop == 0) {
            return this;
        }
        ManifestEntry[] rest = Arrays.copyOfRange(entries, drop, entries.length);
        return ofOrdered(rest);
    }

    private Manifest prefix(int keep) {
        if (keep == entries.length) {
            return this;
        }
        return ofOrdered(Arrays.copyOf(entries, keep));
    }

    /** Index of the last entry whose base offset is at or below {@code offset}, or -1. */
    private int lastWithBaseAtOrBelow(long offset) {
        int lo = 0;
        int hi = entries.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(entries[mid].baseOffset(), offset) <= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** How many entries end below {@code offset}; they form a prefix, as last offsets ascend too. */
    private int countWithLastBelow(long offset) {
        int lo = 0;
        int hi = entries.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(entries[mid].lastOffset(), offset) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** How many entries end at or below {@code offset}. */
    private int countWithLastAtOrBelow(long offset) {
        int lo = 0;
        int hi = entries.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(entries[mid].lastOffset(), offset) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Manifest other && Arrays.equals(entries, other.entries);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(entries);
    }

    @Override
    public String toString() {
        if (entries.length <= 4) {
            return "Manifest" + Arrays.toString(entries);
        }
        // A shard may hold 100k entries; a log line should not.
        return "Manifest[" + entries.length + " entries, oldest " + entries[0] + ", newest "
                + entries[entries.length - 1] + "]";
    }
}
