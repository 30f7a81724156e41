package dev.felix.offload.log;

import dev.felix.offload.log.format.SegmentIndex;

import java.util.Arrays;

/**
 * The in-memory sparse index of a segment being appended to: one writer adds entries while readers
 * look positions up without locks. The writer fills an array slot before publishing the new count
 * (a volatile write), and publishes a grown copy before any entry that needs it, so a reader that
 * reads the count and then the arrays always sees at least that many entries.
 */
final class GrowingIndex {

    private record Arrays2(long[] offsets, long[] positions) {
    }

    private final long baseOffset;
    private final int spacingBytes;
    private volatile Arrays2 arrays = new Arrays2(new long[16], new long[16]);
    private volatile int count;
    private long lastIndexedPosition = -1;

    GrowingIndex(long baseOffset, int spacingBytes) {
        this.baseOffset = baseOffset;
        this.spacingBytes = spacingBytes;
    }

    /** Starts from a loaded or rebuilt index; the next entry is due {@code spacingBytes} after its last. */
    static GrowingIndex of(SegmentIndex index, int spacingBytes) {
        GrowingIndex g = new GrowingIndex(index.baseOffset(), spacingBytes);
        for (int i = 0; i < index.size(); i++) {
            g.add(index.offsetAt(i), index.positionAt(i));
        }
        return g;
    }

    /** True when a record starting at {@code position} gets an entry: the first, then every spacing bytes. */
    boolean due(long position) {
        return lastIndexedPosition < 0 || position - lastIndexedPosition >= spacingBytes;
    }

    /** Adds an entry (writer only). */
    void add(long offset, long position) {
        Arrays2 a = arrays;
        int n = count;
        if (n == a.offsets.length) {
            a = new Arrays2(Arrays.copyOf(a.offsets, n * 2), Arrays.copyOf(a.positions, n * 2));
            arrays = a;
        }
        a.offsets[n] = offset;
        a.positions[n] = position;
        count = n + 1;
        lastIndexedPosition = position;
    }

    /** An index entry: a record boundary known to hold {@code offset}. */
    record Hit(long offset, long position) {
    }

    /** The last entry at or below {@code offset}, or null when there is none. Safe from any thread. */
    Hit seek(long offset) {
        int n = count;
        Arrays2 a = arrays;
        int at = SegmentIndex.countAtOrBelow(a.offsets, n, offset) - 1;
        return at < 0 ? null : new Hit(a.offsets[at], a.positions[at]);
    }

    int size() {
        return count;
    }

    long baseOffset() {
        return baseOffset;
    }

    SegmentIndex snapshot() {
        int n = count;
        Arrays2 a = arrays;
        return SegmentIndex.of(baseOffset, Arrays.copyOf(a.offsets, n), Arrays.copyOf(a.positions, n));
    }
}
