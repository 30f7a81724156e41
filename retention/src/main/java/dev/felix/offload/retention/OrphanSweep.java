package dev.felix.offload.retention;

import dev.felix.offload.pass.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.SegmentKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Deletes objects under this node's key prefix that no manifest of the data root names, in shards
 * the root still has.
 *
 * <p>An orphan is what a crash leaves inside a shard the root has: an upload that never reached its
 * manifest entry, or an object remote retention took out of the manifest but did not delete. Nothing
 * else is one. The sweep:
 * <ol>
 *   <li>takes the root's shards from {@link DataRoot#list()}, the definition every command uses (at
 *       the root and under its containers, a directory holding only a manifest included, as a shard
 *       restored from the store has no segment yet), and reads their manifests, and those of every
 *       directory under {@code .deleted/}: every key an entry names, and the {@code .index} beside
 *       it, is named and never deleted, whichever shard's prefix it is under; a name the listing
 *       could not examine keeps every key under its prefix;</li>
 *   <li>lists {@link SegmentKeys#nodePrefix()} and nothing else, so keys of another node id are
 *       never even seen; the node's claim ({@link dev.felix.offload.root.NodeClaim}) is known and
 *       skipped; other keys not ending in {@code .segment} or {@code .index}, or not under a shard's
 *       prefix, are reported as ignored and kept;</li>
 *   <li>judges the unnamed keys shard by shard (what lies between the node prefix and the object
 *       name: {@code <dir>} or {@code dead-letters/<dir>}).
 *       They are orphans only in a shard the root has, or one the deleted-stream clean-up is
 *       finishing (a directory of that name under {@code .deleted/}, or a manifest there naming keys
 *       under its prefix). Every other shard's unnamed keys are kept and the shard reported once, as
 *       a {@link HeldShard}: {@code missing-shard} when the root has nothing of that name,
 *       {@code unreadable-shard} when something stands there that the sweep will not read (a link
 *       the root does not list, a file, a directory or manifest it cannot read), and
 *       {@code stale-manifest} when a shard's manifest names far fewer segments than the store holds
 *       for it (at least {@value #STALE_MANIFEST_MIN_UNNAMED} unnamed segment objects of offsets the
 *       shard holds nowhere else, above its manifest's newest entry and below its local base, and
 *       more of them than the manifest has entries; unnamed objects overlapping what the shard holds,
 *       such as the old history of a shard the broker reset, are orphans);</li>
 *   <li>deletes each orphan once it has been seen unnamed for the grace period (see
 *       {@link OrphanLedger}: listings carry no modification time, so the first sighting stands in
 *       for it), in batches.</li>
 * </ol>
 *
 * <p>What it cannot judge it leaves alone: an unreadable manifest under {@code .deleted/} (whose
 * directory name may not be the shard's) or a root without any shard directory or manifest (a data
 * directory that is not mounted, say) stops all deletion, reported. A dry run lists and reports
 * only: it deletes nothing and writes nothing. A held shard's objects go only through
 * {@link #forget}, which an operator runs naming the shard.
 *
 * <p>A deleting sweep must run under the root's {@link dev.felix.offload.root.RootLock}, so no
 * offload is between its upload and its manifest entry meanwhile; {@link RetentionPass} takes it.
 * Incomplete multipart uploads are not seen by a listing of objects: the stores abort their own
 * failed uploads, and the object-store API has no call to list or abort others.
 */
public final class OrphanSweep {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

    /**
     * A shard with at least this many unnamed segment objects, and more of them than its manifest
     * has entries, is held as {@code stale-manifest} rather than swept. A crash leaves one orphan per
     * shard in flight, and retention that died between manifest and delete leaves what one pass
     * expired; a manifest from an old snapshot leaves everything offloaded since.
     */
    public static final int STALE_MANIFEST_MIN_UNNAMED = 8;

    private final DataRoot root;
    private final ObjectStore store;
    private final SegmentKeys keys;
    private final Clock clock;
    private final OrphanSweepSettings settings;
    private final RetentionHook hook;

    public OrphanSweep(DataRoot root, ObjectStore store, SegmentKeys keys, Clock clock, OrphanSweepSettings settings,
                       RetentionHook hook) {
        this.root = Objects.requireNonNull(root, "root");
        this.store = Objects.requireNonNull(store, "store");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.hook = Objects.requireNonNull(hook, "hook");
    }

    /** What the root holds under one shard name, as the sweep judges it. */
    private sealed interface Standing {
        /** A shard of the root (or one being finished under .deleted/): unnamed keys are orphans. */
        /**
         * @param entries   how many entries its manifest holds
         * @param namedEnd  one past the newest entry's last offset (0 for an empty manifest)
         * @param localBase the first local segment's base offset, or -1 when there is none (or it is unreadable)
         */
        record Live(int entries, long namedEnd, long localBase) implements Standing {
            static Live empty() {
                return new Live(0, 0, -1);
            }

            /**
             * Whether a segment object based at {@code base} holds offsets this shard's history has
             * nowhere else: above its newest entry and below its local base (or anywhere above the
             * newest entry, with nothing local). Unnamed objects there are what a manifest from an
             * older snapshot lost; unnamed objects anywhere else overlap what the shard holds now (a
             * crash's leftover, or the old history of a shard the broker reset) and are orphans.
             */
            boolean missingHistory(long base) {
                return Long.compareUnsigned(base, namedEnd) >= 0
                        && (localBase < 0 || Long.compareUnsigned(base, localBase) < 0);
            }
        }

        /** Not judged: every unnamed key kept. */
        record Held(HeldShard.Reason reason, String detail) implements Standing {
        }
    }

    /** What the root's manifests name, and what they could not tell. */
    private record Named(Set<String> keys, Map<String, Standing> shards, Set<String> finishing,
                         List<String> problems, boolean refuse, boolean anyShard) {
    }

    /** An unnamed key under a shard's prefix. */
    private record Unnamed(String key, long size, String etag) {
    }

    /**
     * Runs the sweep.
     *
     * @throws StoreException when the listing fails (nothing is deleted then)
     */
    public OrphanSweepReport run(StopSignal stop) throws IOException, StoreException {
        String prefix = keys.nodePrefix();
        Named named = named();
        List<String> problems = new ArrayList<>(named.problems());
        boolean refuse = named.refuse();
        if (!named.anyShard()) {
            problems.add("the data root " + root.path() + " holds no shard directory and no manifest; "
                    + "deleting nothing under " + prefix + " (is the right data directory mounted?)");
            refuse = true;
        }

        List<String> ignored = new ArrayList<>();
        Map<String, List<Unnamed>> byShard = new LinkedHashMap<>();
        ObjectListing listing = store.list(prefix);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            String key = o.key();
            if (!key.startsWith(prefix)) {
                continue; // a store that answered outside the prefix; never ours to judge
            }
            if (dev.felix.offload.root.NodeClaim.isClaimKey(prefix, key)) {
                continue; // the node's claim: known, never an orphan, never deleted
            }
            String shard = shardOf(key, prefix);
            if (shard == null
                    || !key.endsWith(SegmentKeys.SEGMENT_SUFFIX) && !key.endsWith(SegmentKeys.INDEX_SUFFIX)) {
                ignored.add(key);
                continue;
            }
            if (named.keys().contains(key)) {
                continue;
            }
            byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(new Unnamed(key, o.size(), o.etag()));
        }

        Instant now = clock.instant();
        Map<String, OrphanLedger.Sighting> seen = OrphanLedger.load(root.path());
        Map<String, OrphanLedger.Sighting> nextSeen = new LinkedHashMap<>();
        List<String> found = new ArrayList<>();
        List<String> eligible = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        List<HeldShard> held = new ArrayList<>();
        for (Map.Entry<String, List<Unnamed>> e : byShard.entrySet()) {
            String shard = e.getKey();
            List<Unnamed> unnamed = e.getValue();
            Standing standing = standingOf(shard, named);
            if (standing instanceof Standing.Live live) {
                // Only unnamed segments of offsets the shard holds nowhere else count: the old history of
                // a shard the broker reset overlaps the new one and is an orphan, not a lost manifest's.
                long segments = unnamed.stream().filter(u -> u.key().endsWith(SegmentKeys.SEGMENT_SUFFIX))
                        .filter(u -> baseOffsetOf(u.key()).map(live::missingHistory).orElse(true)).count();
                if (!named.finishing().contains(shard) && segments >= STALE_MANIFEST_MIN_UNNAMED
                        && segments > live.entries()) {
                    standing = new Standing.Held(HeldShard.Reason.STALE_MANIFEST, "the store holds " + segments
                            + " segment objects of offsets the shard holds nowhere else (above its manifest's newest "
                            + "entry and below its local base), and the manifest has " + live.entries()
                            + " entries (a manifest from an old snapshot?); `felix-offload restore --merge` adds "
                            + "older ones, `felix-offload forget-shard` deletes what it does not name");
                }
            }
            if (standing instanceof Standing.Held h) {
                long bytes = unnamed.stream().mapToLong(Unnamed::size).sum();
                HeldShard hs = new HeldShard(shard, h.reason(), unnamed.size(), bytes, h.detail());
                held.add(hs);
                LOG.warn("{}: {}", prefix, hs.describe());
                if (h.reason() == HeldShard.Reason.UNREADABLE && !named.shards().containsKey(shard)) {
                    problems.add(shard + ": " + h.detail() + "; its keys left alone"); // an unreadable manifest has one
                }
                continue;
            }
            for (Unnamed u : unnamed) {
                found.add(u.key());
                OrphanLedger.Sighting before = seen.get(u.key());
                OrphanLedger.Sighting sighting = before != null && before.size() == u.size()
                        && before.etag().equals(OrphanLedger.clean(u.etag()))
                        ? before : new OrphanLedger.Sighting(now, u.size(), OrphanLedger.clean(u.etag()));
                nextSeen.put(u.key(), sighting);
                if (Duration.between(sighting.firstSeen(), now).compareTo(settings.grace()) >= 0) {
                    eligible.add(u.key());
                } else {
                    waiting.add(u.key());
                }
            }
        }

        List<String> deleted = List.of();
        List<String> aborted = List.of();
        if (!settings.dryRun()) {
            if (!refuse && !eligible.isEmpty()) {
                BatchDeletes.Outcome outcome = BatchDeletes.delete(store, eligible, settings.deleteBatchSize(), stop,
                        hook, RetentionStep.ORPHAN_BATCH_DELETED, prefix);
                deleted = outcome.deleted();
                if (outcome.problem() != null && !RemoteRetentionResult.STOPPED.equals(outcome.problem())) {
                    problems.add(outcome.left().size() + " orphans not deleted: " + outcome.problem());
                }
                for (String key : deleted) {
                    nextSeen.remove(key);
                    LOG.info("{}: deleted orphan {}", prefix, key);
                }
            }
            if (!nextSeen.equals(seen)) {
                // Unchanged (no orphans now and none before, say): nothing to write, and no file appears.
                OrphanLedger.save(root.path(), nextSeen);
            }
            if (!refuse && store instanceof IncompleteUploads uploads && !stop.stopRequested()) {
                // Begun before the grace period: no upload of a live pass (which holds the root lock) is that old.
                try {
                    aborted = uploads.abortIncompleteUploads(prefix, now.minus(settings.grace()));
                    for (String key : aborted) {
                        LOG.info("{}: aborted incomplete multipart upload of {}", prefix, key);
                    }
                } catch (StoreException e) {
                    problems.add("incomplete uploads not aborted: " + e.getMessage());
                }
            }
        }
        if (!found.isEmpty()) {
            LOG.info("{}: {} orphans found, {} past the grace period of {}, {} deleted{}", prefix, found.size(),
                    eligible.size(), settings.grace(), deleted.size(), settings.dryRun() ? " (dry run)" : "");
        }
        return new OrphanSweepReport(prefix, settings.dryRun(), found, eligible, deleted, waiting, ignored, problems,
                aborted, held);
    }

    /**
     * What forgetting a shard would delete or deleted: for a shard the root does not have, every
     * segment and index key under its prefix that no manifest names; for a shard it has (a stale
     * manifest), the keys under its prefix its manifests do not name.
     *
     * @param shard   the shard directory name
     * @param present true when the root has the shard (only its unnamed keys are candidates)
     * @param keys    the keys that go (or would go)
     * @param bytes   their total size
     * @param deleted the keys deleted (empty unless asked to delete)
     * @param kept    keys under the prefix that are kept: named by a manifest, or neither segment nor index
     * @param refused why nothing may be deleted, or null
     * @param problem a store failure part-way, or null
     */
    public record Forgetting(String shard, boolean present, List<String> keys, long bytes, List<String> deleted,
                             int kept, String refused, String problem) {
        public Forgetting {
            keys = List.copyOf(keys);
            deleted = List.copyOf(deleted);
        }
    }

    /**
     * Deletes (when {@code delete}) or lists the objects of one shard the sweep holds: what an
     * operator runs for a shard reported {@code missing-shard} or {@code stale-manifest} once they
     * know its history is not wanted. A key any manifest of the root names is never deleted; a shard
     * whose directory cannot be read, or a root whose {@code .deleted/} manifests cannot be read, is
     * refused. The caller holds the root's lock.
     *
     * @throws StoreException when the listing fails (nothing is deleted then)
     */
    public Forgetting forget(String shard, boolean delete, StopSignal stop) throws IOException, StoreException {
        String problem = shardNameProblem(shard);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        Named named = named();
        Standing standing = standingOf(shard, named);
        boolean present = standing instanceof Standing.Live;
        String refused = null;
        if (named.refuse()) {
            refused = String.join("; ", named.problems());
        } else if (standing instanceof Standing.Held h && h.reason() != HeldShard.Reason.MISSING_SHARD) {
            refused = shard + ": " + h.detail();
        }
        String prefix = keys.shardPrefix(shard);
        List<String> doomed = new ArrayList<>();
        long bytes = 0;
        int kept = 0;
        ObjectListing listing = store.list(prefix);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            if (!o.key().startsWith(prefix)) {
                continue;
            }
            if (named.keys().contains(o.key())
                    || !o.key().endsWith(SegmentKeys.SEGMENT_SUFFIX) && !o.key().endsWith(SegmentKeys.INDEX_SUFFIX)) {
                kept++;
                continue;
            }
            doomed.add(o.key());
            bytes += o.size();
        }
        List<String> deleted = List.of();
        String failure = null;
        if (delete && refused == null && !doomed.isEmpty()) {
            BatchDeletes.Outcome outcome = BatchDeletes.delete(store, doomed, settings.deleteBatchSize(), stop, hook,
                    RetentionStep.ORPHAN_BATCH_DELETED, prefix);
            deleted = outcome.deleted();
            failure = outcome.problem();
            LOG.warn("{}: forgot shard {}: {} objects deleted{}", keys.nodePrefix(), shard, deleted.size(),
                    failure == null ? "" : ", then: " + failure);
        }
        return new Forgetting(shard, present, doomed, bytes, deleted, kept, refused, failure);
    }

    /**
     * Why {@code name} cannot be a shard's name under the root, or null: a shard is named by one
     * undotted directory name, or a container of the root and one such name ({@code dead-letters/<dir>}).
     */
    public static String shardNameProblem(String name) {
        String[] parts = name.split("/", -1);
        boolean ok = parts.length == 1 || parts.length == 2 && CONTAINERS.contains(parts[0]);
        for (String part : parts) {
            ok &= !part.isEmpty() && !part.startsWith(".") && !part.contains("\\")
                    && part.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
        }
        return ok ? null : "'" + name + "' is not a shard's name (one undotted directory name, or "
                + String.join("/, ", CONTAINERS) + "/ and one)";
    }

    private static final List<String> CONTAINERS = List.of(DataRoot.GROUPS_DIR, DataRoot.DEAD_LETTERS_DIR,
            DataRoot.CACHES_DIR, DataRoot.COUNTERS_DIR);

    /**
     * The shard a key lies under: what follows the node prefix up to the object name, when that is a
     * shard's name ({@code <dir>} or {@code dead-letters/<dir>}); null otherwise.
     */
    static String shardOf(String key, String prefix) {
        String rest = key.substring(prefix.length());
        int slash = rest.lastIndexOf('/');
        if (slash <= 0) {
            return null;
        }
        String shard = rest.substring(0, slash);
        return shardNameProblem(shard) == null ? shard : null;
    }

    private Standing standingOf(String shard, Named named) {
        Standing known = named.shards().get(shard);
        if (known != null) {
            return known;
        }
        if (named.finishing().contains(shard)) {
            return Standing.Live.empty();
        }
        if (shardNameProblem(shard) != null) {
            return new Standing.Held(HeldShard.Reason.UNREADABLE, "'" + shard + "' cannot be a shard directory's name");
        }
        Path dir = root.path().resolve(shard);
        if (Files.isSymbolicLink(dir)) {
            return new Standing.Held(HeldShard.Reason.UNREADABLE, dir + " is a symbolic link the data root does not "
                    + "list as a shard; the sweep does not follow it");
        }
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return new Standing.Held(HeldShard.Reason.UNREADABLE, dir + " is not a shard directory the data root "
                    + "lists (a file, or a directory without segments or manifest, or one it may not read)");
        }
        return new Standing.Held(HeldShard.Reason.MISSING_SHARD, "the data root " + root.path() + " has no "
                + "directory of that name; `felix-offload restore --shard " + shard + "` rebuilds its manifest, "
                + "`felix-offload forget-shard --shard " + shard + " --yes` deletes its objects");
    }

    private Named named() throws IOException {
        Set<String> named = new HashSet<>();
        Map<String, Standing> shards = new LinkedHashMap<>();
        Set<String> finishing = new HashSet<>();
        List<String> problems = new ArrayList<>();
        boolean refuse = false;
        // The root's shards as every command sees them (DataRoot is the one definition: at the root and
        // under its containers, a directory holding only a manifest, as a restored shard does, included),
        // named by their path under the root, which is what their keys carry after the node id.
        DataRoot.Listing listing = root.list();
        boolean anyShard = !listing.shards().isEmpty();
        for (DataRoot.Shard shard : listing.shards()) {
            shards.put(shard.name(), readInto(shard.directory(), named, problems));
        }
        // A name the listing could not examine (a link to nothing, a directory it may not read, an
        // alias) keeps every key under its prefix.
        for (DataRoot.Unreadable u : listing.unreadable()) {
            shards.putIfAbsent(u.name(), new Standing.Held(HeldShard.Reason.UNREADABLE, u.reason()));
            problems.add(u.name() + ": " + u.reason() + "; its keys left alone");
            anyShard = true;
        }
        Path deleted = root.path().resolve(DataRoot.DELETED_DIR);
        if (Files.isDirectory(deleted, LinkOption.NOFOLLOW_LINKS)) {
            for (Path dir : directories(deleted, true)) {
                anyShard = true;
                finishing.add(dir.getFileName().toString());
                Set<String> ofDeleted = new HashSet<>();
                if (readInto(dir, ofDeleted, problems) instanceof Standing.Held) {
                    refuse = true;
                }
                named.addAll(ofDeleted);
                for (String key : ofDeleted) {
                    if (key.startsWith(keys.nodePrefix())) {
                        String shard = shardOf(key, keys.nodePrefix());
                        if (shard != null) {
                            finishing.add(shard);
                        }
                    }
                }
            }
        }
        return new Named(named, shards, finishing, problems, refuse, anyShard);
    }

    /** Adds what the manifest of {@code dir} names; held (with a problem) when it cannot be read. */
    private static Standing readInto(Path dir, Set<String> named, List<String> problems) {
        try {
            List<ManifestEntry> entries = ManifestStore.read(dir).entries();
            for (ManifestEntry e : entries) {
                named.addAll(BatchDeletes.objectsOf(e));
            }
            long namedEnd = entries.isEmpty() ? 0 : entries.get(entries.size() - 1).lastOffset() + 1;
            return new Standing.Live(entries.size(), namedEnd, localBase(dir));
        } catch (NoSuchFileException gone) {
            return Standing.Live.empty(); // removed meanwhile: it names nothing any more
        } catch (CorruptionException | IOException e) {
            LOG.error("{}: manifest unreadable; the orphan sweep leaves its keys alone: {}", dir, e.getMessage());
            problems.add(dir.getFileName() + ": manifest unreadable, its keys left alone: " + e.getMessage());
            return new Standing.Held(HeldShard.Reason.UNREADABLE, "manifest unreadable: " + e.getMessage());
        }
    }

    /** The base offset of the shard's first local segment, or -1 when it has none or it cannot be read. */
    private static long localBase(Path dir) {
        try {
            return new dev.felix.offload.log.ShardReader(dir).firstOffset().orElse(-1);
        } catch (IOException | CorruptionException e) {
            return -1; // unknown: judged as if nothing were local, which holds rather than sweeps
        }
    }

    /** The base offset a segment key names ({@code <20 digits>-<20 digits>.segment}), when it names one. */
    static java.util.Optional<Long> baseOffsetOf(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        if (name.length() != 20 + 1 + 20 + SegmentKeys.SEGMENT_SUFFIX.length() || name.charAt(20) != '-'
                || !name.endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(Long.parseUnsignedLong(name.substring(0, 20)));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
    }

    /** The directories directly in {@code dir}, without those whose names start with a dot unless {@code dotted}. */
    private static List<Path> directories(Path dir, boolean dotted) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if ((dotted || !entry.getFileName().toString().startsWith("."))
                        && Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                    out.add(entry);
                }
            }
        }
        out.sort(null);
        return out;
    }
}
