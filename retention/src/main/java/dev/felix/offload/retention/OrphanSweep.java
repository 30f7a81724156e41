package dev.felix.offload.retention;

import dev.felix.offload.copy.HeldOffsets;
import dev.felix.offload.copy.ObjectRelease;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.LiveKeys;
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
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the objects under this node's key prefix that no manifest of the data root names, and
 * deletes those the conservation rule ({@link ObjectRelease}) lets go: never because a name is
 * absent, only because the records an object holds are held elsewhere now, or its stream was deleted.
 *
 * <p>Such leftovers are what a crash leaves: an upload that never reached its manifest entry (its
 * segment still local, so its offsets are held), the old history of a shard the broker reset (the new
 * history holds those offsets). An unnamed object whose offsets nothing else holds is something else:
 * a lost disk with the broker back first, a manifest from an old snapshot, a restore over a lagging
 * listing, an entry a broker's rewrite erased. It may be the only copy of its records, so it is kept
 * and reported as {@code unrecorded-history}. The sweep:
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
 *       name: {@code <dir>} or {@code dead-letters/<dir>}). In a shard the root has, each segment
 *       object by the offsets it holds against what the shard holds now ({@link HeldOffsets}: its
 *       local segments and its other entries, read from the files): deletable only when every one
 *       is held; an index with its segment, or alone. In a shard the deleted-stream clean-up is
 *       finishing (a directory of that name under {@code .deleted/}, or a manifest there naming keys
 *       under its prefix): deletable, the stream having been deleted. Keys retention's
 *       {@link ExpiryJournal} lists are retention's to finish. Every other shard's unnamed keys are
 *       kept and the shard reported once, as a {@link HeldShard}: {@code missing-shard} when the root
 *       has nothing of that name, {@code unreadable-shard} when something stands there that the sweep
 *       will not read (a link the root does not list, a file, a directory or manifest it cannot
 *       read);</li>
 *   <li>deletes each deletable object once it has been seen unnamed for the grace period (see
 *       {@link OrphanLedger}: listings carry no modification time, so the first sighting stands in
 *       for it), in batches.</li>
 * </ol>
 *
 * <p>What it cannot judge it leaves alone: an unreadable manifest (it may name any key) or a root
 * without any shard directory or manifest (a data directory that is not mounted, say) stops all
 * deletion, reported. A dry run lists and reports only: it deletes nothing and writes nothing. A held
 * shard's objects go only through {@link #forget}, which an operator runs naming the shard.
 *
 * <p>A deleting sweep must run under the root's {@link dev.felix.offload.root.RootLock}, so no
 * offload is between its upload and its manifest entry meanwhile; {@link RetentionPass} takes it.
 * Incomplete multipart uploads are not seen by a listing of objects: the stores abort their own
 * failed uploads, and the object-store API has no call to list or abort others.
 */
public final class OrphanSweep {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

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
        /**
         * A shard of the root (or one being finished under .deleted/): its unnamed keys are judged one
         * by one by {@link ObjectRelease}.
         *
         * @param dir the shard directory (null for one only being finished under .deleted/); its manifest
         *            is read again when its keys are judged, under the same lock, so it is the one read first
         */
        record Live(Path dir) implements Standing {
            static Live finishing() {
                return new Live(null);
            }
        }

        /** Not judged: every unnamed key kept. */
        record Held(HeldShard.Reason reason, String detail) implements Standing {
        }
    }

    /** What the root's manifests name, and what they could not tell. */
    private record Named(NamedKeys keys, Map<String, Standing> shards, Set<String> finishing,
                         List<String> problems, boolean refuse, boolean anyShard) {

        /** Live shards whose manifest could not be read: while there is one, no key is deleted (it may name any). */
        List<String> unreadable() {
            List<String> out = new ArrayList<>();
            shards.forEach((name, standing) -> {
                if (standing instanceof Standing.Held h && h.reason() == HeldShard.Reason.UNREADABLE) {
                    out.add(name);
                }
            });
            return out;
        }
    }

    /**
     * Runs the sweep, listing the whole prefix (under the caller's lock) only when {@link FullSweep}
     * says so, else checking the journal's keys alone.
     *
     * @throws StoreException when the listing fails (nothing is deleted then)
     */
    public OrphanSweepReport run(StopSignal stop) throws IOException, StoreException {
        return run(stop, null);
    }

    /**
     * Lists the node prefix without any lock, for a full sweep whose decisions {@link #run(StopSignal,
     * FullSweep.Listing)} then takes under the lock: the keys the manifests (read first) do not name.
     * Null when the journal's keys are enough this time.
     */
    public FullSweep.Listing prelist() throws IOException {
        FullSweep.Why reason = FullSweep.reason(root.path(), settings, clock.instant(), FullSweep.journal(root.path()));
        if (reason == null) {
            return null;
        }
        NamedKeys named = named().keys();
        return FullSweep.list(store, keys.nodePrefix(), reason, key -> !named.contains(key));
    }

    /**
     * Runs the sweep under the caller's lock: over {@code prelisted} (a full listing made before the
     * lock was taken, judged against the manifests as they are now) and the journal's keys, or, when
     * {@code prelisted} is null, over the journal's keys alone unless a full listing is due.
     *
     * @throws StoreException when the listing fails (nothing is deleted then)
     */
    public OrphanSweepReport run(StopSignal stop, FullSweep.Listing prelisted) throws IOException, StoreException {
        String prefix = keys.nodePrefix();
        Named named = named();
        List<String> problems = new ArrayList<>(named.problems());
        boolean refuse = named.refuse();
        if (!named.anyShard()) {
            problems.add("the data root " + root.path() + " holds no shard directory and no manifest; "
                    + "deleting nothing under " + prefix + " (is the right data directory mounted?)");
            refuse = true;
        }
        if (prelisted != null && prelisted.failure() != null) {
            return new OrphanSweepReport(prefix, settings.dryRun(), List.of(), List.of(), List.of(), List.of(),
                    List.of(), List.of("listing failed: " + prelisted.failure()), List.of());
        }
        FullSweep.Journal journal0 = FullSweep.journal(root.path());
        Set<String> pending = journal0.keys().orElse(Set.of());
        FullSweep.Why fullReason = prelisted != null ? prelisted.reason()
                : FullSweep.reason(root.path(), settings, clock.instant(), journal0);

        List<String> ignored = new ArrayList<>();
        Map<String, List<Unnamed>> byShard = new LinkedHashMap<>();
        Set<String> seen0 = new HashSet<>();
        long listed = 0;
        ObjectListing listing = prelisted == null && fullReason != null ? store.list(prefix) : null;
        java.util.Iterator<ObjectSummary> given = prelisted != null ? prelisted.unnamed().iterator()
                : java.util.Collections.emptyIterator();
        while (listing != null ? listing.hasNext() : given.hasNext()) {
            ObjectSummary o = listing != null ? listing.next() : given.next();
            listed++;
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
            seen0.add(key);
            byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(new Unnamed(key, o.size(), o.etag()));
        }
        if (prelisted != null) {
            listed = prelisted.listed();
        }
        // The journal's keys: those a manifest names now, or the store does not hold, leave it; a listing
        // made under this lock saw every key there is, one made before it may have missed a newer upload.
        List<String> unseen = pending.stream().filter(key -> key.startsWith(prefix) && shardOf(key, prefix) != null
                && !named.keys().contains(key) && !seen0.contains(key) && (prelisted != null || fullReason == null)).toList();
        for (Unnamed u : FullSweep.present(store, unseen)) {
            seen0.add(u.key());
            byShard.computeIfAbsent(shardOf(u.key(), prefix), s -> new ArrayList<>()).add(u);
        }
        int headed = unseen.size();
        String mode = fullReason != null ? "full listing (" + fullReason.label() + "): " + listed + " keys listed"
                : "journal: " + pending.size() + " pending keys, " + headed + " checked in the store";
        LOG.info("{}: orphan sweep by {}", prefix, mode);
        Set<String> watch = new java.util.LinkedHashSet<>();

        Instant now = clock.instant();
        Map<String, OrphanLedger.Sighting> seen = OrphanLedger.load(root.path());
        Map<String, OrphanLedger.Sighting> nextSeen = new LinkedHashMap<>();
        List<String> found = new ArrayList<>();
        List<String> eligible = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        List<HeldShard> held = new ArrayList<>();
        ExpiryJournal journal = ExpiryJournal.load(root.path());
        Map<String, ObjectRelease.Permit> permits = new LinkedHashMap<>();
        for (Map.Entry<String, List<Unnamed>> e : byShard.entrySet()) {
            String shard = e.getKey();
            List<Unnamed> unnamed = e.getValue();
            Standing standing = standingOf(shard, named);
            if (standing instanceof Standing.Held h) {
                unnamed.stream().map(Unnamed::key).filter(pending::contains).forEach(watch::add);
                long bytes = unnamed.stream().mapToLong(Unnamed::size).sum();
                HeldShard hs = new HeldShard(shard, h.reason(), unnamed.size(), bytes, h.detail());
                held.add(hs);
                LOG.warn("{}: {}", prefix, hs.describe());
                if (h.reason() == HeldShard.Reason.UNREADABLE && !named.shards().containsKey(shard)) {
                    problems.add(shard + ": " + h.detail() + "; its keys left alone"); // an unreadable manifest has one
                }
                continue;
            }
            Standing.Live live = (Standing.Live) standing;
            // watched until they are gone: the journal's own keys, and the orphans found (not what a full
            // listing found kept, which the next full listing finds again without a HEAD at every pass)
            unnamed.stream().map(Unnamed::key).filter(pending::contains).forEach(watch::add);
            List<ObjectRelease.Verdict> verdicts = judge(shard, live, unnamed, named, journal);
            List<ObjectRelease.Verdict.Kept> history = new ArrayList<>();
            for (ObjectRelease.Verdict v : verdicts) {
                if (v instanceof ObjectRelease.Verdict.Deletable d) {
                    permits.put(d.key(), d.permit());
                } else if (v instanceof ObjectRelease.Verdict.Kept k && k.key().endsWith(SegmentKeys.SEGMENT_SUFFIX)
                        && k.reason() != ObjectRelease.KeptReason.NOT_OWNED) {
                    history.add(k);
                }
            }
            if (!history.isEmpty()) {
                held.add(UnnamedObjects.unrecordedHistory(prefix, shard, unnamed, history));
            }
            for (Unnamed u : unnamed) {
                if (!permits.containsKey(u.key())) {
                    continue;
                }
                found.add(u.key());
                watch.add(u.key());
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
            if (!watch.equals(pending) || journal0.keys().isEmpty()) {
                // before any delete: a delete cut short leaves its key watched
                dev.felix.offload.root.PendingKeys.rewrite(root.path(), watch);
            }
            if (!refuse && !eligible.isEmpty()) {
                BatchDeletes.Outcome outcome = BatchDeletes.delete(store, eligible.stream().map(permits::get).toList(),
                        settings.deleteBatchSize(), stop, hook, RetentionStep.ORPHAN_BATCH_DELETED, prefix);
                deleted = outcome.deleted();
                outcome.failure().ifPresent(f -> problems.add(outcome.left().size() + " orphans not deleted: "
                        + f.label()));
                if (!deleted.isEmpty()) {
                    deleted.forEach(watch::remove);
                    dev.felix.offload.root.PendingKeys.rewrite(root.path(), watch);
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
            if (fullReason != null && !refuse) {
                FullSweep.record(root.path(), now);
            }
            Optional<IncompleteUploads> uploads = store.incompleteUploads();
            if (!refuse && uploads.isPresent() && !stop.stopRequested()) {
                // Begun before the grace period: no upload of a live pass (which holds the root lock) is that old.
                try {
                    aborted = uploads.get().abortIncompleteUploads(prefix, now.minus(settings.grace()));
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
                aborted, held, mode);
    }

    /**
     * The conservation rule's verdict on each unnamed key of a live (or finishing) shard: a segment
     * object may go only when the shard holds every one of its offsets elsewhere now (local segments,
     * other entries), or when its stream was deleted; its index goes with it, or alone when no segment
     * object is listed for it. Keys the expiry journal lists are retention's to finish and are left out.
     */
    private List<ObjectRelease.Verdict> judge(String shard, Standing.Live live, List<Unnamed> unnamed, Named named,
                                              ExpiryJournal journal) throws IOException {
        ObjectRelease release = new ObjectRelease(new KeyOwnership(keys), LiveKeys.of(Map.of(), named.unreadable()));
        HeldOffsets held = live.dir() == null ? null : HeldOffsets.of(live.dir(), shard, NamedKeys.manifestOf(live.dir()),
                Set.of());
        Map<String, ObjectRelease.Verdict> segments = new HashMap<>();
        List<ObjectRelease.Verdict> out = new ArrayList<>();
        for (Unnamed u : unnamed) {
            if (!u.key().endsWith(SegmentKeys.SEGMENT_SUFFIX) || journal.contains(u.key())) {
                continue;
            }
            ObjectRelease.Verdict v = held == null ? release.streamDeleted(shard, u.key())
                    : new UnnamedObjects(root, store).segmentVerdict(release, shard, u, held);
            segments.put(u.key(), v);
            out.add(v);
        }
        for (Unnamed u : unnamed) {
            if (u.key().endsWith(SegmentKeys.INDEX_SUFFIX) && !journal.contains(u.key())) {
                String segmentKey = u.key().substring(0, u.key().length() - SegmentKeys.INDEX_SUFFIX.length())
                        + SegmentKeys.SEGMENT_SUFFIX;
                out.add(release.index(shard, u.key(), segments.get(segmentKey)));
            }
        }
        return out;
    }

    /** Where the sweep downloads an object whose last offset it must read; dotted, so never a shard. */
    static final String WORK_DIR = ".offload-sweep";

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
     * operator runs for a shard reported {@code missing-shard} or {@code unrecorded-history} once they
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
        List<ObjectRelease.Permit> permits = new ArrayList<>();
        ObjectRelease release = new ObjectRelease(new KeyOwnership(keys), LiveKeys.of(Map.of(), named.unreadable()));
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
            ObjectRelease.Verdict v = release.namedByOperator(shard, o.key());
            if (v instanceof ObjectRelease.Verdict.Deletable d) {
                permits.add(d.permit());
                doomed.add(o.key());
                bytes += o.size();
            } else {
                kept++;
            }
        }
        List<String> deleted = List.of();
        String failure = null;
        if (delete && refused == null && !doomed.isEmpty()) {
            dev.felix.offload.root.PendingKeys.addAll(root.path(), doomed); // a delete cut short stays watched
            BatchDeletes.Outcome outcome = BatchDeletes.delete(store, permits, settings.deleteBatchSize(), stop, hook,
                    RetentionStep.ORPHAN_BATCH_DELETED, prefix);
            deleted = outcome.deleted();
            failure = outcome.problem();
            FullSweep.done(root.path(), deleted);
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
        return ShardKeyNames.shardNameProblem(name);
    }

    /**
     * The shard a key lies under: what follows the node prefix up to the object name, when that is a
     * shard's name ({@code <dir>} or {@code dead-letters/<dir>}); null otherwise.
     */
    static String shardOf(String key, String prefix) {
        return ShardKeyNames.shardOf(key, prefix);
    }

    private Standing standingOf(String shard, Named named) {
        Standing known = named.shards().get(shard);
        if (known != null) {
            return known;
        }
        if (named.finishing().contains(shard)) {
            return Standing.Live.finishing();
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
        NamedKeys named = new NamedKeys();
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
            Standing standing = readInto(shard.directory(), shard.name(), named, problems);
            shards.put(shard.name(), standing);
            if (standing instanceof Standing.Live) {
                named.shard(shard.name(), shard.directory());
            }
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
            for (Path dir : ShardKeyNames.directories(deleted, true)) {
                anyShard = true;
                finishing.add(dir.getFileName().toString());
                Set<String> ofDeleted = new HashSet<>();
                if (readInto(dir, ofDeleted, problems) instanceof Standing.Held) {
                    refuse = true;
                }
                named.elsewhere(ofDeleted);
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

    /**
     * Notes in {@code named} what the manifest of the live shard {@code dir} names outside its own
     * prefix (what it names inside is read again when asked); held (with a problem) when it cannot be read.
     */
    private static Standing readInto(Path dir, String shard, NamedKeys named, List<String> problems) {
        Set<String> all = new HashSet<>();
        Standing standing = readInto(dir, all, problems);
        all.removeIf(key -> NamedKeys.own(key, shard));
        named.elsewhere(all);
        return standing;
    }

    /** Adds what the manifest of {@code dir} names; held (with a problem) when it cannot be read. */
    private static Standing readInto(Path dir, Set<String> named, List<String> problems) {
        try {
            Manifest manifest = ManifestStore.read(dir);
            for (ManifestEntry e : manifest.entries()) {
                named.addAll(BatchDeletes.objectsOf(e));
            }
            return new Standing.Live(dir);
        } catch (NoSuchFileException gone) {
            return new Standing.Live(dir); // removed meanwhile: it names nothing any more
        } catch (CorruptionException | IOException e) {
            LOG.error("{}: manifest unreadable; the orphan sweep leaves its keys alone: {}", dir, e.getMessage());
            problems.add(DataRoot.Shard.nameOf(dir) + ": manifest unreadable, its keys left alone: " + e.getMessage());
            return new Standing.Held(HeldShard.Reason.UNREADABLE, "manifest unreadable: " + e.getMessage());
        }
    }

    /** The base offset a segment key names ({@code <20 digits>-<20 digits>.segment}), when it names one. */
    public static java.util.Optional<Long> baseOffsetOf(String key) {
        return ShardKeyNames.baseOffsetOf(key);
    }
}
