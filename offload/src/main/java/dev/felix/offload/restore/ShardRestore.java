package dev.felix.offload.restore;

import dev.felix.offload.copy.HeldOffsets;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.restore.StoreCandidates.Candidate;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectLister;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * Rebuilds a shard's {@code offload.manifest} from the objects the store holds for it: what brings a
 * shard back after its disk was lost (with or without the broker back first), its volume did not
 * mount, its manifest was restored from an old snapshot, or a broker's rewrite erased an entry.
 *
 * <ol>
 *   <li>Lists the shard's prefix in the node's key form ({@code [prefix/]<node id>/<shard>/}) and in
 *       the form 0.6.0-preview.3 wrote, without a node id ({@code [prefix/]<shard>/}), twice, and
 *       takes every {@code <base>-<segment>.segment} key directly under either that either listing
 *       showed: a page lost to a retry in one is found in the other.</li>
 *   <li>Downloads each one whole into a temporary under the root's {@value #WORK_DIR} directory and
 *       scans it with the segment scanner, every record checksum verified. Every field of the entry
 *       comes from those bytes: the base offset from the segment header (which must agree with the
 *       key), the last offset and the oldest and newest timestamps from the first and last records,
 *       the size and the CRC32 from the bytes themselves. An object that does not scan clean to its
 *       last byte, holds no record, or whose header disagrees with its key is refused, naming the key
 *       and the byte. Two objects that overlap are refused, naming both.</li>
 *   <li>Proves its history is whole: for every gap the entries leave (between two of them, or between
 *       the newest and the local log), asks the store for a key that begins exactly there: a listing
 *       of that base's own prefix, then HEADs of the keys the segment chain implies (that base, with
 *       each segment id between the neighbours'), since a store whose listings lag behind its writes
 *       leaves an object out of every listing but answers for it by key. What is found is read like
 *       the rest. A gap that remains is a
 *       {@link Hole}: reported with its offsets, never passed off as success.</li>
 *   <li>Stops at the local log: an object wholly at or above its first offset is the local history's
 *       (not added), one that straddles it is an {@link Overlap} (not added, reported: recording it
 *       would overlap segments the pass must still copy). The existing manifest's entries stay; an
 *       object overlapping one of them differently is an {@link Overlap} too.</li>
 *   <li>Writes the manifest through {@link ManifestStore#save}, the durable replace: a crash leaves
 *       no manifest or a whole one. The shard directory is created (and its parent synced) when
 *       absent. An existing manifest with entries is never replaced unless merging, and a merge only
 *       adds entries, into any gap below the local log.</li>
 * </ol>
 *
 * <p>Objects are downloaded and scanned {@code concurrency} at a time (each into its own temporary),
 * and taken in the order of their keys' base offsets, as one at a time took them: the entries, the
 * first refusal and the progress reported are the same whatever the concurrency. Only the plan's
 * reading is concurrent; what {@link #commit} writes is written once, after every object was scanned.
 *
 * <p>{@link #plan()} reads and judges without writing anything; {@link #commit(Plan)} writes, so a
 * caller can decide between the two (the node claim is taken over only when a restore goes ahead).
 * Nothing in the store is written or deleted. The caller holds the root's {@link RootLock}.
 *
 * <p>This class judges and writes; the keys are found by {@link StoreCandidates}, the objects read by
 * {@link SegmentDownloads}, and where the history leaves gaps is {@link EntryGaps}'s.
 */
public final class ShardRestore {

    private static final Logger LOG = LoggerFactory.getLogger(ShardRestore.class);

    /** Where objects are downloaded to be scanned, under the data root; dotted, so never a shard. */
    public static final String WORK_DIR = ".offload-restore";

    /** Objects downloaded and scanned at once unless said otherwise. */
    public static final int DEFAULT_CONCURRENCY = 4;
    public static final int MAX_CONCURRENCY = 64;

    /** How many rounds of asking for keys at the gaps' bases a restore makes before it reports holes. */
    static final int PROBE_ROUNDS = 4;

    /** The store refused to give a restore what it needs, or what it holds cannot be a history. */
    public static final class RefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        public RefusedException(String message) {
            super(message);
        }
    }

    /**
     * Offsets no restored entry, no entry already there and no local segment holds.
     *
     * @param first       the first missing offset
     * @param last        the last missing offset
     * @param beforeLocal true when the hole ends where the local log begins
     */
    public record Hole(long first, long last, boolean beforeLocal) {
        public String describe() {
            return "offsets " + Long.toUnsignedString(first) + ".." + Long.toUnsignedString(last) + " are held by no "
                    + "object, no entry and " + (beforeLocal ? "no local segment (the local log begins after them)"
                    : "no local segment");
        }
    }

    /** An object that was read but not recorded, because its offsets overlap what the shard holds. */
    public record Overlap(String key, long first, long last, String why) {
        public String describe() {
            return key + " (offsets " + Long.toUnsignedString(first) + ".." + Long.toUnsignedString(last) + ") not "
                    + "recorded: " + why;
        }
    }

    /**
     * What a restore did.
     *
     * @param shard        the shard directory name
     * @param dir          the shard directory
     * @param created      true when the shard directory was created
     * @param restored     the entries read from the store and written, ascending
     * @param present      entries the existing manifest already held (a merge)
     * @param above        keys not added because they lie at or above the local log's first offset
     * @param ignored      keys under the prefixes that are not segment objects
     * @param bytes        bytes of the objects read
     * @param legacyKeys   how many of the restored keys have the form without a node id
     * @param entriesAfter entries in the manifest written
     * @param holes        offsets held nowhere, between entries or before the local log
     * @param overlaps     objects read but not recorded, as they overlap the local log or an entry
     * @param lateKeys     keys neither listing showed that asking at a gap's base found
     */
    public record Result(String shard, Path dir, boolean created, List<ManifestEntry> restored,
                         List<ManifestEntry> present, List<String> above, List<String> ignored, long bytes,
                         int legacyKeys, int entriesAfter, List<Hole> holes, List<Overlap> overlaps,
                         List<String> lateKeys) {
        public Result {
            restored = List.copyOf(restored);
            present = List.copyOf(present);
            above = List.copyOf(above);
            ignored = List.copyOf(ignored);
            holes = List.copyOf(holes);
            overlaps = List.copyOf(overlaps);
            lateKeys = List.copyOf(lateKeys);
        }

        /** True when the shard's history below its local log is whole and every object found was recorded. */
        public boolean whole() {
            return holes.isEmpty() && overlaps.isEmpty();
        }
    }

    /** What {@link #plan()} found: what {@link #commit} writes, and what it will report. */
    public static final class Plan {
        private final Manifest existing;
        private final Manifest next;
        private final List<ManifestEntry> restored;
        private final List<ManifestEntry> present;
        private final List<String> above;
        private final List<String> ignored;
        private final long bytes;
        private final int legacy;
        private final List<Hole> holes;
        private final List<Overlap> overlaps;
        private final List<String> late;

        private Plan(Manifest existing, Manifest next, List<ManifestEntry> restored, List<ManifestEntry> present,
                     List<String> above, List<String> ignored, long bytes, int legacy, List<Hole> holes,
                     List<Overlap> overlaps, List<String> late) {
            this.existing = existing;
            this.next = next;
            this.restored = restored;
            this.present = present;
            this.above = above;
            this.ignored = ignored;
            this.bytes = bytes;
            this.legacy = legacy;
            this.holes = holes;
            this.overlaps = overlaps;
            this.late = late;
        }

        /** Whether committing writes anything (entries to add). */
        public boolean writes() {
            return !restored.isEmpty();
        }
    }

    private final Path root;
    private final String shard;
    private final SegmentKeys keys;
    private final String keyPrefix;
    private final ObjectLister lister;
    private final ObjectFetcher fetcher;
    private final boolean merge;
    private final ProgressListener progress;
    private final int concurrency;

    /**
     * @param keyPrefix the key prefix offload writes under (as {@code keys} was made with), or empty
     */
    public ShardRestore(Path root, String shard, SegmentKeys keys, String keyPrefix, ObjectLister lister,
                        ObjectFetcher fetcher, boolean merge, ProgressListener progress) {
        this(root, shard, keys, keyPrefix, lister, fetcher, merge, progress, DEFAULT_CONCURRENCY);
    }

    /** @param concurrency objects downloaded and scanned at once, 1 to {@link #MAX_CONCURRENCY} */
    public ShardRestore(Path root, String shard, SegmentKeys keys, String keyPrefix, ObjectLister lister,
                        ObjectFetcher fetcher, boolean merge, ProgressListener progress, int concurrency) {
        if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException("concurrency must be from 1 to " + MAX_CONCURRENCY + ", got " + concurrency);
        }
        this.concurrency = concurrency;
        this.root = Objects.requireNonNull(root, "root");
        this.shard = Objects.requireNonNull(shard, "shard");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.lister = Objects.requireNonNull(lister, "lister");
        this.fetcher = Objects.requireNonNull(fetcher, "fetcher");
        this.merge = merge;
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /** The prefix of a shard's keys as 0.6.0-preview.3 wrote them, without a node id. */
    public static String legacyShardPrefix(String keyPrefix, String shard) {
        return (keyPrefix.isEmpty() ? "" : keyPrefix + "/") + shard + "/";
    }

    /** {@link #plan()} and then {@link #commit}. */
    public Result run() throws IOException, StoreException, RefusedException {
        return commit(plan());
    }

    /**
     * Lists, reads and judges: what a restore would write and report. Writes nothing but temporaries
     * under {@value #WORK_DIR}, which it removes.
     *
     * @throws RefusedException when the objects cannot form the shard's history, or the existing
     *                          manifest may not be replaced
     * @throws StoreException   when the store cannot be listed or read
     */
    public Plan plan() throws IOException, StoreException, RefusedException {
        Path dir = root.resolve(shard);
        // Refuse before reading anything when the manifest there may not be replaced.
        Manifest existing = Manifest.empty();
        OptionalLong localFirst = OptionalLong.empty();
        OptionalLong localFirstId = OptionalLong.empty();
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) || Files.exists(dir)) {
            try {
                existing = ManifestStore.read(dir);
            } catch (CorruptionException e) {
                throw new RefusedException(shard + ": the manifest there does not decode, and restore does not "
                        + "replace one it cannot read: " + e.getMessage());
            }
            if (!existing.isEmpty() && !merge) {
                throw new RefusedException(shard + ": " + ManifestStore.fileIn(dir) + " already holds "
                        + existing.size() + " entries; restore never replaces a manifest (--merge adds the store's "
                        + "entries the manifest lacks, below the local log)");
            }
            localFirst = HeldOffsets.of(dir, shard, Manifest.empty(), Set.of()).localFirst();
            List<SegmentFile> files = SegmentFile.list(dir);
            localFirstId = files.isEmpty() ? OptionalLong.empty() : OptionalLong.of(files.get(0).id());
        }

        List<String> ignored = new ArrayList<>();
        StoreCandidates store = new StoreCandidates(lister, fetcher, keys.shardPrefix(shard),
                legacyShardPrefix(keyPrefix, shard));
        Map<String, Candidate> candidates = store.listed(ignored);
        if (candidates.isEmpty()) {
            throw new RefusedException("the store holds no segment object under " + keys.shardPrefix(shard)
                    + " or " + legacyShardPrefix(keyPrefix, shard) + "; nothing to restore for " + shard);
        }
        Set<String> named = new TreeSet<>();
        existing.entries().forEach(e -> named.add(e.objectKey()));

        Path work = root.resolve(WORK_DIR);
        clean(work);
        Files.createDirectories(work);
        Map<String, ManifestEntry> read = new LinkedHashMap<>();
        Map<String, Candidate> byKey = new LinkedHashMap<>();
        List<String> late = new ArrayList<>();
        long total = candidates.values().stream().mapToLong(Candidate::size).sum();
        progress.started(total);
        try {
            readAll(StoreCandidates.unnamed(candidates.values(), named), work, read, byKey);
            // Gaps the entries leave: ask for a key beginning exactly at each, which a lagging listing may have left out.
            Set<Long> asked = new HashSet<>();
            for (int round = 0; round < PROBE_ROUNDS; round++) {
                List<Candidate> found = new ArrayList<>();
                for (EntryGaps.Gap gap : EntryGaps.of(existing, read.values(), localFirst, localFirstId)) {
                    if (!asked.add(gap.base())) {
                        continue;
                    }
                    for (Candidate c : store.at(gap).values()) {
                        if (!byKey.containsKey(c.key()) && !named.contains(c.key())) {
                            found.add(c);
                            late.add(c.key());
                            LOG.warn("{}: {} was in neither listing of the shard's prefix, but the store holds it "
                                    + "(its listings lag behind its writes?); restoring it too", shard, c.key());
                        }
                    }
                }
                if (found.isEmpty()) {
                    break;
                }
                readAll(found, work, read, byKey);
            }
        } finally {
            progress.finished();
            clean(work);
        }

        List<ManifestEntry> ordered = new ArrayList<>(read.values());
        ordered.sort(Comparator.comparing(ManifestEntry::baseOffset, Long::compareUnsigned)
                .thenComparing(ManifestEntry::segmentId, Long::compareUnsigned));
        // Ordered by base (the key's, which each header was checked against); any overlap is refused.
        for (int i = 1; i < ordered.size(); i++) {
            ManifestEntry prev = ordered.get(i - 1);
            ManifestEntry next = ordered.get(i);
            if (Long.compareUnsigned(next.baseOffset(), prev.lastOffset()) <= 0) {
                throw new RefusedException(shard + ": objects overlap: " + prev.objectKey() + " holds offsets "
                        + range(prev) + " and " + next.objectKey() + " holds " + range(next)
                        + "; restore cannot tell which is the shard's history");
            }
        }

        List<ManifestEntry> restored = new ArrayList<>();
        List<ManifestEntry> present = new ArrayList<>(existing.entries());
        List<String> above = new ArrayList<>();
        List<Overlap> overlaps = new ArrayList<>();
        for (ManifestEntry e : ordered) {
            if (localFirst.isPresent() && Long.compareUnsigned(e.baseOffset(), localFirst.getAsLong()) >= 0) {
                above.add(e.objectKey()); // the local log's own history: the pass records what it copies
                continue;
            }
            if (localFirst.isPresent() && Long.compareUnsigned(e.lastOffset(), localFirst.getAsLong()) >= 0) {
                overlaps.add(new Overlap(e.objectKey(), e.baseOffset(), e.lastOffset(), "it reaches into the local log, "
                        + "which begins at offset " + Long.toUnsignedString(localFirst.getAsLong()) + " with other segment "
                        + "boundaries; recording it would keep the pass from copying the local segments it overlaps"));
                continue;
            }
            ManifestEntry clash = null;
            for (ManifestEntry x : existing.entries()) {
                if (Long.compareUnsigned(e.baseOffset(), x.lastOffset()) <= 0
                        && Long.compareUnsigned(x.baseOffset(), e.lastOffset()) <= 0) {
                    clash = x;
                    break;
                }
            }
            if (clash != null) {
                overlaps.add(new Overlap(e.objectKey(), e.baseOffset(), e.lastOffset(), "the manifest's entry for "
                        + clash.objectKey() + " (" + range(clash) + ") overlaps it"));
                continue;
            }
            restored.add(e);
        }
        List<ManifestEntry> all = new ArrayList<>(existing.entries());
        all.addAll(restored);
        all.sort(Comparator.comparing(ManifestEntry::baseOffset, Long::compareUnsigned));
        Manifest next = Manifest.of(all);
        long bytes = 0;
        int legacy = 0;
        for (ManifestEntry e : read.values()) {
            bytes += e.sizeBytes();
            legacy += byKey.get(e.objectKey()).legacy() ? 1 : 0;
        }
        List<Hole> holes = holes(next, localFirst);
        for (Hole h : holes) {
            LOG.warn("{}: {}", shard, h.describe());
        }
        return new Plan(existing, next, restored, present, above, ignored, bytes, legacy, holes, overlaps, late);
    }

    /**
     * Writes what {@code plan} found: the manifest with its entries added (nothing when there are
     * none), the shard directory created when absent.
     *
     * @throws RefusedException when the manifest changed since the plan read it
     */
    public Result commit(Plan plan) throws IOException, RefusedException {
        Path dir = root.resolve(shard);
        boolean created = false;
        if (!Files.isDirectory(dir)) {
            Files.createDirectory(dir);
            DurableFiles.fsyncDirectory(root);
            created = true;
        }
        if (plan.writes()) {
            ManifestStore store;
            try {
                store = ManifestStore.open(dir);
            } catch (CorruptionException e) {
                throw new RefusedException(shard + ": the manifest changed while restoring and does not decode: "
                        + e.getMessage());
            }
            if (!store.manifest().entries().equals(plan.existing.entries())) {
                throw new RefusedException(shard + ": the manifest changed while restoring; run restore again");
            }
            store.save(plan.next);
        }
        LOG.info("{}: restored {} entries ({} bytes) from the store{}{}", shard, plan.restored.size(), plan.bytes,
                plan.present.isEmpty() && plan.above.isEmpty() ? "" : ", " + plan.present.size() + " already present, "
                        + plan.above.size() + " at or above the local log not added",
                plan.holes.isEmpty() && plan.overlaps.isEmpty() ? "" : "; " + plan.holes.size() + " holes and "
                        + plan.overlaps.size() + " overlapping objects reported");
        return new Result(shard, dir, created, plan.restored, plan.present, plan.above, plan.ignored, plan.bytes,
                plan.legacy, plan.next.size(), plan.holes, plan.overlaps, plan.late);
    }

    /** The gaps between {@code next}'s entries, and between its newest and the local log. */
    private static List<Hole> holes(Manifest next, OptionalLong localFirst) {
        List<Hole> out = new ArrayList<>();
        List<ManifestEntry> entries = next.entries();
        for (int i = 1; i < entries.size(); i++) {
            long after = entries.get(i - 1).lastOffset() + 1;
            long base = entries.get(i).baseOffset();
            if (Long.compareUnsigned(base, after) > 0) {
                out.add(new Hole(after, base - 1, false));
            }
        }
        if (!entries.isEmpty() && localFirst.isPresent()) {
            long after = entries.get(entries.size() - 1).lastOffset() + 1;
            if (Long.compareUnsigned(localFirst.getAsLong(), after) > 0) {
                out.add(new Hole(after, localFirst.getAsLong() - 1, true));
            }
        }
        return out;
    }

    /** Reads and scans {@code candidates} into {@code read}, as {@link SegmentDownloads#readAll}; an object refused refuses the restore. */
    private void readAll(List<Candidate> candidates, Path work, Map<String, ManifestEntry> read,
                         Map<String, Candidate> byKey) throws IOException, StoreException, RefusedException {
        try {
            new SegmentDownloads(shard, fetcher, concurrency, progress, LOG).readAll(candidates, work, read, byKey);
        } catch (ObjectRefusedException e) {
            throw new RefusedException(e.getMessage());
        }
    }

    private static void clean(Path work) throws IOException {
        if (!Files.isDirectory(work, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var files = Files.list(work)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(work);
    }

    private static String range(ManifestEntry e) {
        return Long.toUnsignedString(e.baseOffset()) + ".." + Long.toUnsignedString(e.lastOffset());
    }
}
