package dev.felix.offload.retention;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.copy.HeldOffsets;
import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * What the orphan sweep learns of one shard's unnamed objects: a segment object's offsets (from its
 * key, its size, or at worst its bytes), and the report of those kept as unrecorded history.
 */
final class UnnamedObjects {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

    private final DataRoot root;
    private final ObjectStore store;

    UnnamedObjects(DataRoot root, ObjectStore store) {
        this.root = root;
        this.store = store;
    }

    /**
     * A segment object's verdict, learning its offsets as cheaply as the answer allows: its base from
     * the key; when the shard does not hold the base itself, nothing more is needed (kept); when it
     * holds everything up to the most records the object's size allows, nothing more either
     * (deletable); only in between is the object read to find its last offset.
     */
    ObjectRelease.Verdict segmentVerdict(ObjectRelease release, String shard, Unnamed u, HeldOffsets held)
            throws IOException {
        java.util.Optional<Long> parsed = OrphanSweep.baseOffsetOf(u.key());
        if (parsed.isEmpty()) {
            return ObjectRelease.offsetsUnknown(u.key(), "the key names no base offset");
        }
        long base = parsed.get();
        if (!held.holds(base, base)) {
            return release.heldElsewhere(shard, u.key(), base, base, held);
        }
        long most = Math.max(0, (u.size() - dev.felix.offload.log.format.SegmentHeader.LENGTH) / MIN_RECORD_BYTES);
        long bound = most == 0 ? base : base + most - 1;
        if (Long.compareUnsigned(bound, base) >= 0 && held.holds(base, bound)) {
            return release.heldElsewhere(shard, u.key(), base, bound, held);
        }
        java.util.OptionalLong last = lastOffsetOf(shard, u.key(), base);
        if (last.isEmpty()) {
            return ObjectRelease.offsetsUnknown(u.key(), "the object does not scan clean as a segment based at "
                    + Long.toUnsignedString(base));
        }
        return release.heldElsewhere(shard, u.key(), base, last.getAsLong(), held);
    }

    /** The smallest record: a header without a producer tag, and no payload. */
    private static final int MIN_RECORD_BYTES = 28;



    /** The last offset of a segment object, read whole and scanned; empty when it is no clean segment at {@code base}. */
    private java.util.OptionalLong lastOffsetOf(String shard, String key, long base) throws IOException {
        Path work = Files.createDirectories(root.path().resolve(OrphanSweep.WORK_DIR));
        Path file = work.resolve("object");
        try {
            store.download(key, file, java.util.OptionalLong.empty());
            dev.felix.offload.log.format.SegmentScan scan = dev.felix.offload.log.format.SegmentScan.of(file, shard, 0, ScanDepth.HEADERS);
            if (!scan.isClean() || scan.header() == null || scan.header().baseOffset() != base) {
                return java.util.OptionalLong.empty();
            }
            return java.util.OptionalLong.of(scan.recordCount() == 0 ? base : scan.nextOffset() - 1);
        } catch (StoreException e) {
            LOG.warn("{}: could not read {} to learn its offsets ({}); it is kept", shard, key, e.getMessage());
            return java.util.OptionalLong.empty();
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** The report of a live shard's segment objects kept because nothing else holds their offsets. */
    static HeldShard unrecordedHistory(String prefix, String shard, List<Unnamed> unnamed,
                                               List<ObjectRelease.Verdict.Kept> kept) {
        Set<String> keptKeys = new java.util.TreeSet<>();
        long firstBase = -1;
        long lastBase = -1;
        for (ObjectRelease.Verdict.Kept k : kept) {
            keptKeys.add(k.key());
            java.util.Optional<Long> base = OrphanSweep.baseOffsetOf(k.key());
            if (base.isPresent()) {
                firstBase = firstBase == -1 || Long.compareUnsigned(base.get(), firstBase) < 0 ? base.get() : firstBase;
                lastBase = lastBase == -1 || Long.compareUnsigned(base.get(), lastBase) > 0 ? base.get() : lastBase;
            }
        }
        long bytes = 0;
        int objects = 0;
        for (Unnamed u : unnamed) {
            String segmentKey = u.key().endsWith(SegmentKeys.INDEX_SUFFIX)
                    ? u.key().substring(0, u.key().length() - SegmentKeys.INDEX_SUFFIX.length()) + SegmentKeys.SEGMENT_SUFFIX
                    : u.key();
            if (keptKeys.contains(segmentKey)) {
                bytes += u.size();
                objects++;
            }
        }
        HeldShard.Span span = firstBase == -1 ? null : new HeldShard.Span(firstBase, lastBase);
        String detail = keptKeys.size() + " segment objects" + (span == null ? "" : " based at offsets "
                + Long.toUnsignedString(firstBase) + ".." + Long.toUnsignedString(lastBase))
                + " hold records no local segment and no manifest entry holds, e.g. " + kept.get(0).detail()
                + "; kept: possibly the only copy. `felix-offload restore --shard " + shard + " --merge` records them, "
                + "`felix-offload forget-shard --shard " + shard + " --yes` deletes them once they are not wanted";
        HeldShard h = new HeldShard(shard, HeldShard.Reason.UNRECORDED_HISTORY, objects, bytes, detail,
                List.copyOf(keptKeys), span);
        LOG.warn("{}: {}", prefix, h.describe());
        return h;
    }
}
