package dev.felix.offload.restore;

import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;

/**
 * Where a restore's entries (those a manifest holds and those read from objects) leave gaps an
 * object could fill, and which segment ids such an object could have: what a restore asks the store
 * for by key when no listing showed one.
 */
final class EntryGaps {

    private EntryGaps() {
    }

    /**
     * A gap the entries leave: where it begins, and the segment ids an object beginning there could
     * have (after the entry before it, before the entry or local segment after it).
     */
    record Gap(long base, long idAfter, long idBefore) {
    }

    /** The most segment ids a gap's implied keys are asked for by HEAD, when no listing shows one. */
    static final int MAX_IMPLIED_HEADS = 16;

    /** Where a gap begins: after each entry that the next does not continue, and before the local log. */
    static List<Gap> of(Manifest existing, java.util.Collection<ManifestEntry> read, OptionalLong localFirst,
                        OptionalLong localFirstId) {
        List<ManifestEntry> all = new ArrayList<>(existing.entries());
        all.addAll(read);
        all.sort(Comparator.comparing(ManifestEntry::baseOffset, Long::compareUnsigned));
        List<Gap> out = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            long after = all.get(i).lastOffset() + 1;
            boolean continued = i + 1 < all.size() && Long.compareUnsigned(all.get(i + 1).baseOffset(), after) <= 0;
            boolean reachesLocal = localFirst.isPresent() && Long.compareUnsigned(after, localFirst.getAsLong()) >= 0;
            if (!continued && (i + 1 < all.size() || localFirst.isPresent()) && !reachesLocal) {
                long before = i + 1 < all.size() ? all.get(i + 1).segmentId()
                        : localFirstId.orElse(all.get(i).segmentId() + MAX_IMPLIED_HEADS + 1);
                out.add(new Gap(after, all.get(i).segmentId(), before));
            }
        }
        return out;
    }
}
