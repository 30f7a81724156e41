package dev.felix.offload.manifest;

import java.util.OptionalLong;

/**
 * Sums over a manifest's entries, for retention and for reports.
 *
 * @param entries               how many entries
 * @param bytes                 the sum of their sizes (u64, unsigned)
 * @param oldestTimestampMicros the smallest {@code oldest} timestamp of any entry; empty without entries
 * @param newestTimestampMicros the largest {@code newest} timestamp of any entry; empty without entries
 */
public record ManifestTotals(int entries, long bytes, OptionalLong oldestTimestampMicros,
                             OptionalLong newestTimestampMicros) {

    static final ManifestTotals NONE = new ManifestTotals(0, 0, OptionalLong.empty(), OptionalLong.empty());

    /** These totals with one more entry counted. */
    ManifestTotals plus(ManifestEntry e) {
        long oldest = oldestTimestampMicros.isEmpty()
                || Long.compareUnsigned(e.oldestTimestampMicros(), oldestTimestampMicros.getAsLong()) < 0
                ? e.oldestTimestampMicros() : oldestTimestampMicros.getAsLong();
        long newest = newestTimestampMicros.isEmpty()
                || Long.compareUnsigned(e.newestTimestampMicros(), newestTimestampMicros.getAsLong()) > 0
                ? e.newestTimestampMicros() : newestTimestampMicros.getAsLong();
        return new ManifestTotals(entries + 1, bytes + e.sizeBytes(), OptionalLong.of(oldest), OptionalLong.of(newest));
    }

    /** The totals of {@code entries[from..to)}. */
    static ManifestTotals of(ManifestEntry[] entries, int from, int to) {
        if (from == to) {
            return NONE;
        }
        long bytes = 0;
        long oldest = entries[from].oldestTimestampMicros();
        long newest = entries[from].newestTimestampMicros();
        for (int i = from; i < to; i++) {
            ManifestEntry e = entries[i];
            bytes += e.sizeBytes();
            if (Long.compareUnsigned(e.oldestTimestampMicros(), oldest) < 0) {
                oldest = e.oldestTimestampMicros();
            }
            if (Long.compareUnsigned(e.newestTimestampMicros(), newest) > 0) {
                newest = e.newestTimestampMicros();
            }
        }
        return new ManifestTotals(to - from, bytes, OptionalLong.of(oldest), OptionalLong.of(newest));
    }
}
