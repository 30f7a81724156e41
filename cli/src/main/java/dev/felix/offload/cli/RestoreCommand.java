package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.restore.ShardRestore;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload restore}: rebuilds shards' {@code offload.manifest} from the store (see
 * {@link ShardRestore}). Exit 0 when every shard asked for was restored whole, 1 when one was refused
 * (overlapping or damaged objects, a manifest that may not be replaced, nothing to restore) or its
 * history has a hole or an object that could not be recorded (each reported with its offsets), 2 on
 * usage errors, 3 when the store cannot be listed or read.
 */
@Command(name = "restore", mixinStandardHelpOptions = true,
        description = {"Rebuild a shard's offload.manifest from the objects the store holds for it, after a lost "
                + "disk, a volume that did not mount or a manifest restored from an old snapshot. Every object is "
                + "read whole and scanned, and every entry comes from its bytes; overlapping objects are refused. "
                + "Creates the shard directory when needed; never replaces an existing manifest unless --merge, "
                + "which only adds entries below the existing ones. Writes nothing to the store."})
final class RestoreCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    RootOptions rootOptions;

    @Option(names = "--node-id", paramLabel = "ID", description = "The node id the keys start with (default: the "
            + "configuration's, FELIX_NODE_ID, or the root's node-id file). Written to the root's node-id file when "
            + "it has none.")
    String nodeId;

    static final class Which {
        @Option(names = "--shard", required = true, paramLabel = "DIR", description = "The shard directory's name.")
        String shard;

        @Option(names = "--all-missing", required = true,
                description = "Every shard with objects under the node's prefix whose history the data root lacks: "
                        + "no directory, an empty one, or one whose manifest does not name objects based below its "
                        + "local log (the broker came back first, a manifest from an old snapshot).")
        boolean allMissing;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Which which;

    @Option(names = "--merge", description = "Add the store's entries below those of an existing manifest.")
    boolean merge;

    @Option(names = "--json", description = "Print the summary as one JSON object.")
    boolean json;

    @Option(names = "--concurrency", paramLabel = "N", description = "Objects downloaded and scanned at once, 1 to "
            + ShardRestore.MAX_CONCURRENCY + " (default " + ShardRestore.DEFAULT_CONCURRENCY + "); the manifest "
            + "written is the same whatever it is.")
    int concurrency = ShardRestore.DEFAULT_CONCURRENCY;

    @Option(names = "--take-over-node-id", description = "Replace another data root's claim on this node id in the "
            + "store: a restore onto a new disk for a root that no longer runs (see docs/reliability.md).")
    boolean takeOver;

    private record Outcome(String shard, ShardRestore.Result result, String refused) {
    }

    @Override
    public Integer call() throws IOException {
        if (concurrency < 1 || concurrency > ShardRestore.MAX_CONCURRENCY) {
            throw new FelixOffload.UsageException("--concurrency must be from 1 to " + ShardRestore.MAX_CONCURRENCY
                    + ", got " + concurrency);
        }
        RootAndStore where = rootOptions.resolve(nodeId, FelixOffload.environment(spec));
        Path root = where.root();
        if (!Files.isDirectory(root)) {
            throw new FelixOffload.UsageException("no data root directory at " + root
                    + " (create the empty root first; restore creates the shard directories in it)");
        }
        if (which.shard != null) {
            String problem = OrphanSweep.shardNameProblem(which.shard);
            if (problem != null) {
                throw new FelixOffload.UsageException("--shard: " + problem);
            }
        }
        String id = where.requireNodeId();
        SegmentKeys keys = new SegmentKeys(where.keyPrefix(), id);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        List<Outcome> outcomes = new ArrayList<>();
        // Restoring another live root's history would make two roots of one node id. The claim is taken
        // over only once some shard's restore goes ahead: a refused or empty restore leaves it as it is.
        RepairSession.Access access = takeOver ? RepairSession.Access.LOCAL_WRITE_TAKING_OVER
                : RepairSession.Access.LOCAL_WRITE;
        try {
            RepairSession.run(where, access, RepairSession.Findings.KEPT_IN_ROOT, err, session -> {
                restoreShards(session, where, id, outcomes);
                return null;
            });
        } catch (RootLock.HeldException e) {
            err.println("felix-offload: " + e.getMessage());
            err.flush();
            return FelixOffload.EXIT_CORRUPT;
        }
        // A hole or an object left out is no success: the history below the local log is not whole.
        boolean ok = outcomes.stream().allMatch(o -> o.refused() == null && o.result().whole());
        if (json) {
            writeJson(out, keys, outcomes, ok);
        } else {
            for (Outcome o : outcomes) {
                if (o.refused() != null) {
                    out.printf("%s: refused, nothing written: %s%n", o.shard(), o.refused());
                    continue;
                }
                ShardRestore.Result r = o.result();
                out.printf("%s: %d entries restored (%s, offsets %s), %d already present, %d at or above the local log "
                                + "not added; the manifest holds %d entries%s%n", o.shard(), r.restored().size(),
                        Bytes.human(r.bytes()), span(r.restored()), r.present().size(), r.above().size(),
                        r.entriesAfter(), r.created() ? "; shard directory created" : "");
                for (String late : r.lateKeys()) {
                    out.printf("%s: found %s only by asking for it where a gap began (the store's listing left it out); "
                            + "restored%n", o.shard(), late);
                }
                for (ShardRestore.Hole h : r.holes()) {
                    out.printf("%s: hole: %s; reads stop there, and `felix-offload restore --shard %s --merge` adds "
                            + "an object for them if the store shows one later%n", o.shard(), h.describe(), o.shard());
                }
                for (ShardRestore.Overlap ov : r.overlaps()) {
                    out.printf("%s: overlap: %s; the object is kept in the store%n", o.shard(), ov.describe());
                }
            }
            if (outcomes.isEmpty()) {
                out.println("no shard lacks history the store holds under " + keys.nodePrefix());
            }
        }
        out.flush();
        return ok ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
    }

    /** Plans and commits the restore of each shard asked for, in the session, adding what became of each to {@code outcomes}. */
    private void restoreShards(RepairSession session, RootAndStore where, String id, List<Outcome> outcomes)
            throws IOException, StoreException {
        Path root = where.root();
        SegmentKeys keys = session.keys();
        ObjectStore objectStore = session.store();
        PrintWriter err = spec.commandLine().getErr();
        boolean takeOverLater = session.awaitsTakeOver();
        List<String> shards = which.shard != null ? List.of(which.shard) : missing(root, objectStore, keys);
        List<String> planned = new ArrayList<>();
        List<ShardRestore> restores = new ArrayList<>();
        List<ShardRestore.Plan> plans = new ArrayList<>();
        for (String shard : shards) {
            ProgressListener progress = System.console() != null && !json ? new ProgressBar(err)
                    : ProgressListener.none();
            ShardRestore restore = new ShardRestore(root, shard, keys, where.keyPrefix(), objectStore, objectStore,
                    merge, progress, concurrency);
            try {
                plans.add(restore.plan());
                restores.add(restore);
                planned.add(shard);
            } catch (ShardRestore.RefusedException e) {
                outcomes.add(new Outcome(shard, null, e.getMessage()));
            }
        }
        if (takeOverLater && plans.stream().anyMatch(ShardRestore.Plan::writes)) {
            session.takeOver();
        }
        if (!plans.isEmpty() && (!takeOverLater || plans.stream().anyMatch(ShardRestore.Plan::writes))) {
            Path idFile = new DataRoot(root).identityFile(DataRoot.NODE_ID);
            if (!Files.exists(idFile, LinkOption.NOFOLLOW_LINKS)) {
                // The root carries on as the node whose keys it restores, so its next offload writes beside them.
                DurableFiles.replace(idFile, (id + "\n").getBytes(StandardCharsets.UTF_8), DurableFiles.Sync.FULL);
            }
        }
        for (int i = 0; i < plans.size(); i++) {
            if (takeOverLater && !plans.get(i).writes()) {
                outcomes.add(new Outcome(planned.get(i), null, "nothing to restore, so the claim of another root "
                        + "was not taken over"));
                continue;
            }
            try {
                outcomes.add(new Outcome(planned.get(i), restores.get(i).commit(plans.get(i)), null));
            } catch (ShardRestore.RefusedException e) {
                outcomes.add(new Outcome(planned.get(i), null, e.getMessage()));
            }
        }
    }

    /**
     * The shards with objects under the node's prefix whose history the root lacks: those it has
     * nothing for, and those whose directory exists (the broker came back first, or a manifest from an
     * old snapshot) while the store holds segment objects their manifest does not name, based below
     * their local log (or with nothing local) at offsets no entry holds.
     */
    private static List<String> missing(Path root, ObjectStore store, SegmentKeys keys) throws StoreException,
            IOException {
        java.util.Map<String, List<String>> byShard = new java.util.TreeMap<>();
        String prefix = keys.nodePrefix();
        ObjectListing listing = store.list(prefix);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            if (!o.key().startsWith(prefix) || !o.key().endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                continue;
            }
            // the shard is what lies between the node prefix and the object name: <dir> or dead-letters/<dir>
            String rest = o.key().substring(prefix.length());
            int slash = rest.lastIndexOf('/');
            if (slash <= 0) {
                continue;
            }
            String shard = rest.substring(0, slash);
            if (OrphanSweep.shardNameProblem(shard) == null) {
                byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(o.key());
            }
        }
        List<String> out = new ArrayList<>();
        for (java.util.Map.Entry<String, List<String>> e : byShard.entrySet()) {
            if (holdsNothing(root, e.getKey()) || lacksHistory(root, e.getKey(), e.getValue())) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    /**
     * True when {@code shard} is a shard directory of the root whose manifest lacks history the store
     * holds: a segment key it does not name, based below its local log (or with nothing local), at an
     * offset no entry holds. An unreadable directory or manifest is left to {@code --shard}.
     */
    private static boolean lacksHistory(Path root, String shard, List<String> segmentKeys) {
        try {
            java.util.Optional<DataRoot.Shard> found = new DataRoot(root).shard(shard);
            if (found.isEmpty()) {
                return false;
            }
            dev.felix.offload.manifest.Manifest manifest = dev.felix.offload.manifest.ManifestStore.read(
                    found.get().directory());
            java.util.Set<String> named = new java.util.HashSet<>();
            manifest.entries().forEach(x -> named.add(x.objectKey()));
            dev.felix.offload.copy.HeldOffsets held = dev.felix.offload.copy.HeldOffsets.of(found.get().directory(),
                    shard, manifest, java.util.Set.of());
            java.util.OptionalLong localFirst = held.localFirst();
            for (String key : segmentKeys) {
                java.util.Optional<Long> base = OrphanSweep.baseOffsetOf(key);
                if (named.contains(key) || base.isEmpty()) {
                    continue;
                }
                boolean belowLocal = localFirst.isEmpty() || Long.compareUnsigned(base.get(), localFirst.getAsLong()) < 0;
                if (belowLocal && !held.holds(base.get(), base.get())) {
                    return true;
                }
            }
            return false;
        } catch (IOException | dev.felix.offload.log.format.CorruptionException e) {
            return false;
        }
    }

    /**
     * True when the root has no history of {@code shard}: no entry of that name, or a plain directory
     * without segments or manifest (what a restore killed before its manifest leaves). A link, a
     * file or a directory with either is left to {@code --shard}.
     */
    private static boolean holdsNothing(Path root, String shard) throws IOException {
        Path dir = root.resolve(shard);
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        return Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)
                && !Files.exists(dev.felix.offload.manifest.ManifestStore.fileIn(dir), LinkOption.NOFOLLOW_LINKS)
                && new DataRoot(root).shard(shard).isEmpty();
    }

    private static String span(List<ManifestEntry> entries) {
        if (entries.isEmpty()) {
            return "none";
        }
        return Long.toUnsignedString(entries.get(0).baseOffset()) + ".."
                + Long.toUnsignedString(entries.get(entries.size() - 1).lastOffset());
    }

    private static void writeJson(PrintWriter out, SegmentKeys keys, List<Outcome> outcomes, boolean ok)
            throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeBooleanField("succeeded", ok);
            g.writeStringField("node_prefix", keys.nodePrefix());
            g.writeArrayFieldStart("shards");
            for (Outcome o : outcomes) {
                g.writeStartObject();
                g.writeStringField("dir", o.shard());
                if (o.refused() != null) {
                    g.writeStringField("refused", o.refused());
                } else {
                    ShardRestore.Result r = o.result();
                    g.writeBooleanField("created", r.created());
                    g.writeNumberField("entries_restored", r.restored().size());
                    g.writeNumberField("entries_present", r.present().size());
                    g.writeNumberField("entries_after", r.entriesAfter());
                    g.writeNumberField("bytes", r.bytes());
                    g.writeNumberField("legacy_keys", r.legacyKeys());
                    if (!r.restored().isEmpty()) {
                        Json.u64(g, "first_offset", r.restored().get(0).baseOffset());
                        Json.u64(g, "last_offset", r.restored().get(r.restored().size() - 1).lastOffset());
                    }
                    g.writeBooleanField("whole", r.whole());
                    g.writeArrayFieldStart("holes");
                    for (ShardRestore.Hole h : r.holes()) {
                        g.writeStartObject();
                        Json.u64(g, "first", h.first());
                        Json.u64(g, "last", h.last());
                        g.writeBooleanField("before_local_log", h.beforeLocal());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    g.writeArrayFieldStart("overlaps");
                    for (ShardRestore.Overlap ov : r.overlaps()) {
                        g.writeStartObject();
                        g.writeStringField("key", ov.key());
                        Json.u64(g, "first", ov.first());
                        Json.u64(g, "last", ov.last());
                        g.writeStringField("why", ov.why());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    g.writeArrayFieldStart("late_keys");
                    for (String k : r.lateKeys()) {
                        g.writeString(k);
                    }
                    g.writeEndArray();
                    g.writeArrayFieldStart("above");
                    for (String k : r.above()) {
                        g.writeString(k);
                    }
                    g.writeEndArray();
                    g.writeArrayFieldStart("ignored");
                    for (String k : r.ignored()) {
                        g.writeString(k);
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        out.println();
    }
}
