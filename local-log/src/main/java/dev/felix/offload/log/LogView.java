package dev.felix.offload.log;

import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import java.util.List;

/**
 * What readers of a {@link ShardLog} see: its sealed segments, oldest first, and the active one.
 * Published whole and replaced on every structural change (a roll, a truncation, a reset, a
 * deletion), so a reader holding one sees a consistent log.
 */
record LogView(List<LogView.Sealed> sealed, SegmentWriter active) {

    /** A sealed segment: immutable, with its index loaded or rebuilt. */
    record Sealed(SegmentFile file, SegmentHeader header, long nextOffset, long size, SegmentIndex index) {
    }

    long firstOffset() {
        return sealed.isEmpty() ? active.header().baseOffset() : sealed.get(0).header().baseOffset();
    }

    /**
     * Index of the last segment whose base offset is at or below {@code offset} (0 when none is);
     * {@code sealed().size()} stands for the active segment.
     */
    int locate(long offset) {
        if (Long.compareUnsigned(offset, active.header().baseOffset()) >= 0) {
            return sealed.size();
        }
        int lo = 0;
        int hi = sealed.size() - 1;
        int found = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(sealed.get(mid).header().baseOffset(), offset) <= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }
}
