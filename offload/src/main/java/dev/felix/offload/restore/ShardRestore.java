package dev.felix.offload.restore;

import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectLister;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rebuilds a shard's {@code offload.manifest} from the objects the store holds for it: what brings a
 * shard back after its disk was lost, its volume did not mount, or its manifest was restored from an
 * old snapshot.
 *
 * <ol>
 *   <li>Lists the shard's prefix in the node's key form ({@code [prefix/]<node id>/<shard>/}) and in
 *       the form 0.6.0-preview.3 wrote, without a node id ({@code [prefix/]<shard>/}); every
 *       {@code <base>-<segment>.segment} key directly under either is a candidate.</li>
 *   <li>Downloads each one whole into a temporary under the root's {@value #WORK_DIR} directory and
 *       scans it with the segment scanner, every record checksum verified. Every field of the entry
 *       comes from those bytes: the base offset from the segment header (which must agree with the
 *       key), the last offset and the oldest and newest timestamps from the first and last records,
 *       the size and the CRC32 from the bytes themselves. An object that does not scan clean to its
 *       last byte, holds no record, or whose header disagrees with its key is refused, naming the key
 *       and the byte.</li>
 *   <li>Orders the entries by base offset and refuses any two that overlap, naming both keys. Gaps
 *       are allowed, as in the manifest.</li>
 *   <li>Writes the manifest through {@link ManifestStore#save}, the durable replace: a crash leaves
 *       no manifest or a whole one. The shard directory is created (and its parent synced) when
 *       absent. An existing manifest is never replaced unless merging, and a merge only adds entries
 *       that lie wholly below the existing ones; a restored entry that is already there (same key
 *       and offsets) is left as it is, one that overlaps differently is refused.</li>
 * </ol>
 *
 * <p>Nothing in the store is written or deleted. The caller holds the root's {@link RootLock}.
 */
public final class ShardRestore {

    private static final Logger LOG = LoggerFactory.getLogger(ShardRestore.class);

    /** Where objects are downloaded to be scanned, under the data root; dotted, so never a shard. */
    public static final String WORK_DIR = ".offload-restore";

    private static final Pattern SEGMENT_NAME = Pattern.compile("([0-9]{20})-([0-9]{20})\\.segment");

    /** The store refused to give a restore what it needs, or what it holds cannot be a history. */
    public static final class RefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        public RefusedException(String message) {
            super(message);
        }
    }

    /**
     * What a restore did.
     *
     * @param shard      the shard directory name
     * @param dir        the shard directory
     * @param created    true when the shard directory was created
     * @param restored   the entries read from the store and written, ascending
     * @param present    entries the existing manifest already held (a merge)
     * @param above      keys not added because they lie above the existing manifest's oldest entry (a merge)
     * @param ignored    keys under the prefixes that are not segment objects
     * @param bytes      bytes of the objects read
     * @param legacyKeys how many of the restored keys have the form without a node id
     * @param entriesAfter entries in the manifest written
     */
    public record Result(String shard, Path dir, boolean created, List<ManifestEntry> restored,
                         List<ManifestEntry> present, List<String> above, List<String> ignored, long bytes,
                         int legacyKeys, int entriesAfter) {
        public Result {
            restored = List.copyOf(restored);
            present = List.copyOf(present);
            above = List.copyOf(above);
            ignored = List.copyOf(ignored);
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

    /**
     * @param keyPrefix the key prefix offload writes under (as {@code keys} was made with), or empty
     */
    public ShardRestore(Path root, String shard, SegmentKeys keys, String keyPrefix, ObjectLister lister,
                        ObjectFetcher fetcher, boolean merge, ProgressListener progress) {
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

    private record Candidate(String key, long base, long segmentId, long size, boolean legacy) {
    }

    /**
     * Runs the restore.
     *
     * @throws RefusedException when the objects cannot form the shard's history, or the existing
     *                          manifest may not be replaced; nothing is written then
     * @throws StoreException   when the store cannot be listed or read; nothing is written then
     */
    public Result run() throws IOException, StoreException, RefusedException {
        Path dir = root.resolve(shard);
        List<String> ignored = new ArrayList<>();
        List<Candidate> candidates = new ArrayList<>();
        collect(keys.shardPrefix(shard), false, candidates, ignored);
        collect(legacyShardPrefix(keyPrefix, shard), true, candidates, ignored);
        if (candidates.isEmpty()) {
            throw new RefusedException("the store holds no segment object under " + keys.shardPrefix(shard)
                    + " or " + legacyShardPrefix(keyPrefix, shard) + "; nothing to restore for " + shard);
        }
        candidates.sort(Comparator.comparing(Candidate::base, Long::compareUnsigned)
                .thenComparing(Candidate::segmentId, Long::compareUnsigned));

        // Refuse to write before reading anything when the manifest there may not be replaced.
        Manifest existing = Manifest.empty();
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) || Files.exists(dir)) {
            try {
                existing = ManifestStore.read(dir);
            } catch (CorruptionException e) {
                throw new RefusedException(shard + ": the manifest there does not decode, and restore does not "
                        + "replace one it cannot read: " + e.getMessage());
            }
            if (!existing.isEmpty() && !merge) {
                throw new RefusedException(shard + ": " + ManifestStore.fileIn(dir) + " already holds "
                        + existing.size() + " entries; restore never replaces a manifest (--merge adds the entries "
                        + "below its oldest)");
            }
        }

        List<ManifestEntry> read = readAll(candidates);
        long bytes = 0;
        int legacy = 0;
        for (int i = 0; i < read.size(); i++) {
            bytes += read.get(i).sizeBytes();
            legacy += candidates.get(i).legacy() ? 1 : 0;
        }
        // Ordered by base (the key's, which each header was checked against); any overlap is refused.
        for (int i = 1; i < read.size(); i++) {
            ManifestEntry prev = read.get(i - 1);
            ManifestEntry next = read.get(i);
            if (Long.compareUnsigned(next.baseOffset(), prev.lastOffset()) <= 0) {
                throw new RefusedException(shard + ": objects overlap: " + prev.objectKey() + " holds offsets "
                        + range(prev) + " and " + next.objectKey() + " holds " + range(next)
                        + "; restore cannot tell which is the shard's history");
            }
        }

        List<ManifestEntry> restored = new ArrayList<>();
        List<ManifestEntry> present = new ArrayList<>();
        List<String> above = new ArrayList<>();
        List<ManifestEntry> all = new ArrayList<>();
        ManifestEntry oldest = existing.oldestEntry().orElse(null);
        for (ManifestEntry e : read) {
            if (oldest == null || Long.compareUnsigned(e.lastOffset(), oldest.baseOffset()) < 0) {
                restored.add(e);
                continue;
            }
            ManifestEntry same = existing.entries().stream()
                    .filter(x -> x.objectKey().equals(e.objectKey()) && x.baseOffset() == e.baseOffset()
                            && x.lastOffset() == e.lastOffset()).findFirst().orElse(null);
            if (same != null) {
                present.add(same);
                continue;
            }
            for (ManifestEntry x : existing.entries()) {
                if (Long.compareUnsigned(e.baseOffset(), x.lastOffset()) <= 0
                        && Long.compareUnsigned(x.baseOffset(), e.lastOffset()) <= 0) {
                    throw new RefusedException(shard + ": " + e.objectKey() + " holds offsets " + range(e)
                            + ", which the manifest's entry for " + x.objectKey() + " (" + range(x)
                            + ") overlaps; a merge only adds entries below the existing ones");
                }
            }
            above.add(e.objectKey());
        }
        all.addAll(restored);
        all.addAll(existing.entries());
        Manifest next = Manifest.of(all);

        boolean created = false;
        if (!Files.isDirectory(dir)) {
            Files.createDirectory(dir);
            DurableFiles.fsyncDirectory(root);
            created = true;
        }
        if (!restored.isEmpty()) {
            ManifestStore store;
            try {
                store = ManifestStore.open(dir);
            } catch (CorruptionException e) {
                throw new RefusedException(shard + ": the manifest changed while restoring and does not decode: "
                        + e.getMessage());
            }
            if (!store.manifest().entries().equals(existing.entries())) {
                throw new RefusedException(shard + ": the manifest changed while restoring; run restore again");
            }
            store.save(next);
        }
        LOG.info("{}: restored {} entries ({} bytes) from the store{}", shard, restored.size(), bytes,
                present.isEmpty() && above.isEmpty() ? "" : ", " + present.size() + " already present, "
                        + above.size() + " above the existing entries not added");
        return new Result(shard, dir, created, restored, present, above, ignored, bytes, legacy, next.size());
    }

    private void collect(String prefix, boolean legacy, List<Candidate> out, List<String> ignored)
            throws StoreException {
        ObjectListing listing = lister.list(prefix);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            if (!o.key().startsWith(prefix)) {
                continue;
            }
            String name = o.key().substring(prefix.length());
            if (name.endsWith(SegmentKeys.INDEX_SUFFIX)) {
                continue; // rebuilt by readers from the segment when absent; never needed for an entry
            }
            Matcher m = SEGMENT_NAME.matcher(name);
            if (!m.matches()) {
                ignored.add(o.key());
                continue;
            }
            try {
                out.add(new Candidate(o.key(), Long.parseUnsignedLong(m.group(1)), Long.parseUnsignedLong(m.group(2)),
                        o.size(), legacy));
            } catch (NumberFormatException e) {
                ignored.add(o.key()); // 20 digits above 2^64-1
            }
        }
    }

    /** Every candidate read and scanned, in order; the work directory is removed after. */
    private List<ManifestEntry> readAll(List<Candidate> candidates) throws IOException, StoreException,
            RefusedException {
        Path work = root.resolve(WORK_DIR);
        clean(work);
        Files.createDirectories(work);
        long total = candidates.stream().mapToLong(Candidate::size).sum();
        progress.started(total);
        List<ManifestEntry> out = new ArrayList<>();
        try {
            Path file = work.resolve("segment");
            for (Candidate c : candidates) {
                fetcher.download(c.key(), file, OptionalLong.empty());
                out.add(entryOf(c, file));
                Files.delete(file);
                progress.uploaded(c.size());
            }
        } finally {
            progress.finished();
            clean(work);
        }
        return out;
    }

    /** The manifest entry the bytes of {@code file} (the object {@code c}) prove. */
    private ManifestEntry entryOf(Candidate c, Path file) throws IOException, RefusedException {
        SegmentScan scan = SegmentScan.of(file, shard, c.segmentId(), true);
        if (!scan.isClean()) {
            throw new RefusedException(c.key() + ": not a whole segment: " + scan.failure().getMessage());
        }
        if (scan.validEnd() != scan.fileSize()) {
            throw new RefusedException(c.key() + ": " + (scan.fileSize() - scan.validEnd())
                    + " bytes after the last record, from byte " + scan.validEnd());
        }
        if (scan.recordCount() == 0) {
            throw new RefusedException(c.key() + ": a segment without records, which offload never uploads");
        }
        if (scan.header().baseOffset() != c.base()) {
            throw new RefusedException(c.key() + ": the segment header's base offset is "
                    + Long.toUnsignedString(scan.header().baseOffset()) + ", the key says "
                    + Long.toUnsignedString(c.base()));
        }
        return new ManifestEntry(c.segmentId(), c.base(), scan.nextOffset() - 1, scan.validEnd(),
                scan.oldestTimestamp(), scan.newestTimestamp(), (int) scan.validBytesCrc32(), c.key());
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
