package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.tier.SegmentKeys;
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
 * Deletes objects under this node's key prefix that no manifest of the data root names.
 *
 * <p>Such objects are left by crashes: an upload that never reached its manifest entry, remote
 * retention that saved the manifest but did not delete everything. The sweep:
 * <ol>
 *   <li>reads the manifest of every shard {@link DataRoot#list()} gives (the one listing every command
 *       uses, at the root and under its containers) and of every directory under {@code .deleted/};
 *       every key an entry names is named, and so is the {@code .index} beside it; a name the listing
 *       could not examine keeps every key under its prefix;</li>
 *   <li>lists {@link SegmentKeys#nodePrefix()} and nothing else, so keys of another node id are
 *       never even seen; keys not ending in {@code .segment} or {@code .index} are reported as
 *       ignored and kept;</li>
 *   <li>deletes each unnamed key once it has been seen unnamed for the grace period (see
 *       {@link OrphanLedger}: listings carry no modification time, so the first sighting stands in
 *       for it), in batches.</li>
 * </ol>
 *
 * <p>What it cannot judge it leaves alone: a shard whose manifest does not decode keeps every key
 * under its prefix; an unreadable manifest under {@code .deleted/} (whose directory name may not be
 * the shard's) or a root without any shard directory or manifest (a data directory that is not
 * mounted, say) stops all deletion, reported. A dry run lists and reports only: it deletes nothing
 * and writes nothing.
 *
 * <p>A deleting sweep must run under the root's {@link dev.felix.offload.tier.RootLock}, so no
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

    /** What the root's manifests name, and what they could not tell. */
    private record Named(Set<String> keys, Set<String> protectedPrefixes, List<String> problems, boolean refuse,
                         boolean anyShard) {
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

        Instant now = clock.instant();
        Map<String, OrphanLedger.Sighting> seen = OrphanLedger.load(root.path());
        Map<String, OrphanLedger.Sighting> nextSeen = new LinkedHashMap<>();
        List<String> found = new ArrayList<>();
        List<String> eligible = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        List<String> ignored = new ArrayList<>();
        ObjectListing listing = store.list(prefix);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            String key = o.key();
            if (!key.startsWith(prefix)) {
                continue; // a store that answered outside the prefix; never ours to judge
            }
            if (!key.endsWith(SegmentKeys.SEGMENT_SUFFIX) && !key.endsWith(SegmentKeys.INDEX_SUFFIX)) {
                ignored.add(key);
                continue;
            }
            if (named.keys().contains(key) || isProtected(key, named.protectedPrefixes())) {
                continue;
            }
            found.add(key);
            OrphanLedger.Sighting before = seen.get(key);
            OrphanLedger.Sighting sighting = before != null && before.size() == o.size()
                    && before.etag().equals(OrphanLedger.clean(o.etag()))
                    ? before : new OrphanLedger.Sighting(now, o.size(), OrphanLedger.clean(o.etag()));
            nextSeen.put(key, sighting);
            if (Duration.between(sighting.firstSeen(), now).compareTo(settings.grace()) >= 0) {
                eligible.add(key);
            } else {
                waiting.add(key);
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
                aborted);
    }

    private static boolean isProtected(String key, Set<String> prefixes) {
        for (String p : prefixes) {
            if (key.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    private Named named() throws IOException {
        Set<String> named = new HashSet<>();
        Set<String> protectedPrefixes = new HashSet<>();
        List<String> problems = new ArrayList<>();
        boolean refuse = false;
        // The root's shards as every command sees them (DataRoot is the one definition), named by
        // their path under the root, which is what their keys carry after the node id.
        DataRoot.Listing listing = root.list();
        boolean anyShard = !listing.shards().isEmpty();
        for (DataRoot.Shard shard : listing.shards()) {
            if (!readInto(shard.directory(), named, problems)) {
                protectedPrefixes.add(keys.shardPrefix(shard.name()));
            }
        }
        for (DataRoot.Unreadable u : listing.unreadable()) {
            protectedPrefixes.add(keys.shardPrefix(u.name()));
            problems.add(u.name() + ": " + u.reason() + "; its keys left alone");
            anyShard = true;
        }
        Path deleted = root.path().resolve(DataRoot.DELETED_DIR);
        if (Files.isDirectory(deleted, LinkOption.NOFOLLOW_LINKS)) {
            for (Path dir : directories(deleted, true)) {
                anyShard = true;
                if (!readInto(dir, named, problems)) {
                    refuse = true;
                }
            }
        }
        return new Named(named, protectedPrefixes, problems, refuse, anyShard);
    }

    /** Adds what the manifest of {@code dir} names; false (with a problem) when it cannot be read. */
    private static boolean readInto(Path dir, Set<String> named, List<String> problems) {
        try {
            for (ManifestEntry e : ManifestStore.read(dir).entries()) {
                named.addAll(BatchDeletes.objectsOf(e));
            }
            return true;
        } catch (NoSuchFileException gone) {
            return true; // removed meanwhile: it names nothing any more
        } catch (CorruptionException | IOException e) {
            LOG.error("{}: manifest unreadable; the orphan sweep leaves its keys alone: {}", dir, e.getMessage());
            problems.add(dir.getFileName() + ": manifest unreadable, its keys left alone: " + e.getMessage());
            return false;
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
