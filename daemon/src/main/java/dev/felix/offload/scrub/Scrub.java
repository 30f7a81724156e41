package dev.felix.offload.scrub;

import dev.felix.offload.schedule.FailureKind;
import dev.felix.offload.schedule.DataRootGuard;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.retention.HeldShard;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.retention.OrphanSweepReport;
import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.SegmentKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.CRC32;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.copy.LocalCopyCheck;
import dev.felix.offload.copy.CopyDifference;

/**
 * Checks that the store holds what the manifests say, and lists what it holds that they do not.
 *
 * <ol>
 *   <li>For every entry of every shard directory's manifest: the object exists, has the entry's
 *       size, and has its CRC32: the checksum a server keeps where it keeps one
 *       ({@link StoreCapability#CRC32_STORED} with {@link StoreCapability#CRC32_KEPT_BY_SERVER}, and a
 *       CRC32 in the head), else a full read of the object, at most {@code readBytesPerSecond}. The
 *       filesystem store's attribute is never taken for the bytes (it would hide rot), and
 *       {@code full} reads every object whatever the store keeps.</li>
 *   <li>An anomaly is checked again against the manifest as it is then: an entry that retention
 *       removed meanwhile is not one.</li>
 *   <li>Orphans: an {@link OrphanSweep} of this node's prefix in dry-run mode (it deletes and writes
 *       nothing), under the data root's lock when it can be had, so no upload is between its put
 *       and its manifest entry; when another process holds the root, the listing still runs and
 *       the report says so.</li>
 * </ol>
 * Scrub only reads, locally and remotely.
 *
 * <p><b>Concurrency and a budget.</b> Entries are checked {@link Limits#concurrency} at a time (their
 * HEADs, reads and local comparisons), and the findings are taken in the order the entries come:
 * shards by name, entries by base offset; so a report is the same whatever the concurrency. A run
 * may have a budget of requests ({@link Limits#requestBudget}): an entry is checked only while what
 * it may cost (one HEAD, and one GET for each {@value #READ_CHUNK_MB} MiB it may have to read in
 * full) fits in what is left, and the first entry that does not fit is where the run stops checking
 * and where the next run may start ({@link Report#resumeAt}, passed back as {@link Limits#start}).
 * A run that starts there goes on to the last entry and then round from the first, so that runs in
 * turn check every entry. The share of entries a run checked is in its report; the orphans are
 * listed by the run that checks the last entry.
 */
public final class Scrub {

    private static final Logger LOG = LoggerFactory.getLogger(Scrub.class);

    /** Full reads go in pieces of this size. */
    static final int READ_CHUNK = 8 * 1024 * 1024;
    static final int READ_CHUNK_MB = 8;

    /**
     * An entry in a scrub's order (shards by name, then entries by base offset): where a run starts
     * or where one that ran out of its budget stopped.
     */
    public record Cursor(String shard, long baseOffset) {
        public Cursor {
            Objects.requireNonNull(shard, "shard");
        }

        public String describe() {
            return "shard " + shard + " at offset " + Long.toUnsignedString(baseOffset);
        }

        /** As {@code --start-at} takes it: {@code SHARD@OFFSET}. */
        public String text() {
            return shard + "@" + Long.toUnsignedString(baseOffset);
        }

        /** A {@link #text()}, or empty when it is not one. */
        public static Optional<Cursor> parse(String text) {
            int at = text == null ? -1 : text.lastIndexOf('@');
            if (at <= 0) {
                return Optional.empty();
            }
            try {
                return Optional.of(new Cursor(text.substring(0, at), Long.parseUnsignedLong(text.substring(at + 1))));
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }

        /** Whether the entry of {@code shardName} at {@code base} comes before this point in the order. */
        boolean after(String shardName, long base) {
            int c = shardName.compareTo(shard);
            return c < 0 || (c == 0 && Long.compareUnsigned(base, baseOffset) < 0);
        }
    }

    /**
     * How a run goes: how many entries it checks at once, at most how many requests it makes for
     * its checks (0: no budget), and where it starts (empty: the first entry).
     */
    public record Limits(int concurrency, long requestBudget, Optional<Cursor> start) {
        /** Entries checked at once unless said otherwise: their requests overlap, the store sees four. */
        public static final int DEFAULT_CONCURRENCY = 4;
        public static final int MAX_CONCURRENCY = 64;
        public static final Limits DEFAULT = new Limits(DEFAULT_CONCURRENCY, 0, Optional.empty());

        public Limits {
            if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
                throw new IllegalArgumentException("concurrency must be from 1 to " + MAX_CONCURRENCY + ", got " + concurrency);
            }
            if (requestBudget < 0) {
                throw new IllegalArgumentException("request budget must be >= 0, got " + requestBudget);
            }
            Objects.requireNonNull(start, "start");
        }
    }

    public enum Kind {
        MISSING("missing"),
        SIZE_MISMATCH("size-mismatch"),
        CRC_MISMATCH("crc-mismatch"),
        ORPHAN("orphan"),
        /**
         * An entry naming a key outside its own shard's prefix (a copied shard directory's entry, say):
         * nobody deletes that object on this entry's account, so it is named here with both shards.
         */
        FOREIGN_KEY("foreign-key"),
        /** Objects under the prefix of a shard the data root does not have; one per shard. */
        MISSING_SHARD("missing-shard"),
        /** A shard with segment objects its manifest does not name whose offsets nothing else holds; one per shard. */
        UNRECORDED_HISTORY("unrecorded-history"),
        /**
         * A sealed local segment whose manifest entry stands but whose bytes are not the entry's: it
         * fails its record checksums (retention replaces it by the copy once that re-verifies), or it
         * scans clean with other bytes (ambiguous: kept). Names the first differing byte.
         */
        LOCAL_MISMATCH("local-mismatch"),
        /**
         * A manifest that does not decode, an object the store would not answer for, or a shard
         * directory that could not be read at all (a directory the process may not list, a link to nothing).
         */
        UNREADABLE("unreadable");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * One thing wrong. What a kind says beyond its shard and detail is present for that kind only.
     *
     * @param segmentId the entry's segment id (unsigned); empty for orphans, manifests and held shards
     * @param key       the object key; empty for a manifest, a shard that could not be read or a held shard
     * @param keyShard  for {@link Kind#FOREIGN_KEY}: the shard directory whose prefix the key lies in
     *                  (empty text when it lies in none)
     * @param held      for a held shard ({@link Kind#MISSING_SHARD}, {@link Kind#UNRECORDED_HISTORY},
     *                  {@link Kind#UNREADABLE} from the sweep): the keys under its prefix
     * @param byteAt    for {@link Kind#LOCAL_MISMATCH}: the first byte at which the local segment
     *                  differs from its copy (or where its first failing record begins), where known
     */
    public record Anomaly(Kind kind, String shard, OptionalLong segmentId, Optional<String> key, String detail,
                          Optional<String> keyShard, Optional<HeldObjects> held, OptionalLong byteAt) {

        /** The keys a held shard has under its prefix. */
        public record HeldObjects(long objects, long bytes) {
        }

        public Anomaly {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(shard, "shard");
            Objects.requireNonNull(segmentId, "segmentId");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(detail, "detail");
            Objects.requireNonNull(keyShard, "keyShard");
            Objects.requireNonNull(held, "held");
            Objects.requireNonNull(byteAt, "byteAt");
        }

        /** An anomaly of one entry's object: missing, of another size or CRC32, or not answered for. */
        static Anomaly ofEntry(Kind kind, String shard, long segmentId, String key, String detail) {
            return new Anomaly(kind, shard, OptionalLong.of(segmentId), Optional.of(key), detail, Optional.empty(),
                    Optional.empty(), OptionalLong.empty());
        }

        /** A shard (or its manifest) that could not be read: no entry of it was checked. */
        static Anomaly unreadableShard(String shard, String detail) {
            return new Anomaly(Kind.UNREADABLE, shard, OptionalLong.empty(), Optional.empty(), detail,
                    Optional.empty(), Optional.empty(), OptionalLong.empty());
        }

        /** An object under the node's prefix that no manifest names. */
        static Anomaly orphan(String shard, String key, String detail) {
            return new Anomaly(Kind.ORPHAN, shard, OptionalLong.empty(), Optional.of(key), detail, Optional.empty(),
                    Optional.empty(), OptionalLong.empty());
        }

        /** A {@link Kind#FOREIGN_KEY}: {@code keyShard} is the shard whose prefix the key lies in. */
        static Anomaly foreignKey(String shard, long segmentId, String key, String detail, String keyShard) {
            return new Anomaly(Kind.FOREIGN_KEY, shard, OptionalLong.of(segmentId), Optional.of(key), detail,
                    Optional.of(keyShard), Optional.empty(), OptionalLong.empty());
        }

        /** A held shard: {@code objects} and {@code bytes} count its keys. */
        static Anomaly heldShard(Kind kind, String shard, String detail, long objects, long bytes) {
            return new Anomaly(kind, shard, OptionalLong.empty(), Optional.empty(), detail, Optional.empty(),
                    Optional.of(new HeldObjects(objects, bytes)), OptionalLong.empty());
        }

        /** A {@link Kind#LOCAL_MISMATCH} at {@code byteAt}, where known. */
        static Anomaly localMismatch(String shard, long segmentId, String key, OptionalLong byteAt, String detail) {
            return new Anomaly(Kind.LOCAL_MISMATCH, shard, OptionalLong.of(segmentId), Optional.of(key), detail,
                    Optional.empty(), Optional.empty(), byteAt);
        }
    }

    /**
     * What a scrub found.
     *
     * @param checkedBy      entries checked, by how: {@code server-checksum} or {@code read-back}
     * @param orphansListed  whether the node's prefix was listed for orphans
     * @param notes          what limited the scrub
     */
    /**
     * @param entriesTotal  entries the manifests hold (checked or not)
     * @param requests      requests made to check entries (HEADs and GETs; the orphan listing aside)
     * @param requestBudget the run's budget of requests, 0 for none
     * @param resumeAt      where the next run starts to go on where this one stopped, when its budget ran out
     */
    public record Report(int shards, int entriesChecked, Map<String, Integer> checkedBy, List<Anomaly> anomalies,
                  boolean orphansListed, String nodePrefix, List<String> notes, boolean stopped, Duration elapsed,
                  int entriesTotal, long requests, long requestBudget, Optional<Cursor> resumeAt) {

        public Report(int shards, int entriesChecked, Map<String, Integer> checkedBy, List<Anomaly> anomalies,
                      boolean orphansListed, String nodePrefix, List<String> notes, boolean stopped, Duration elapsed) {
            this(shards, entriesChecked, checkedBy, anomalies, orphansListed, nodePrefix, notes, stopped, elapsed,
                    entriesChecked, 0, 0, Optional.empty());
        }

        public boolean clean() {
            return anomalies.isEmpty();
        }

        /** Whether the budget ran out before every entry was checked. */
        public boolean budgetSpent() {
            return resumeAt.isPresent();
        }

        /** The share of the manifests' entries this run checked, 1 when they hold none. */
        public double covered() {
            return entriesTotal == 0 ? 1 : entriesChecked / (double) entriesTotal;
        }
    }

    private final boolean full;
    private final DataRoot root;
    private final ObjectStore store;
    private final Map<String, String> env;
    private final long readBytesPerSecond;
    private final Clock clock;

    /**
     * @param env                where {@value NodeId#ENV} is looked up
     * @param readBytesPerSecond limit of full reads, 0 for none
     */
    public Scrub(DataRoot root, ObjectStore store, Map<String, String> env, long readBytesPerSecond, Clock clock) {
        this(root, store, env, readBytesPerSecond, clock, false);
    }

    /**
     * @param full read every object in full, even where the store answers a stored CRC32 (which
     *             proves what the server received, not that the bytes are still whole)
     */
    public Scrub(DataRoot root, ObjectStore store, Map<String, String> env, long readBytesPerSecond, Clock clock, boolean full) {
        this(root, store, env, readBytesPerSecond, clock, full ? Share.ALL : Share.NONE);
    }

    /**
     * Which entries a run reads in full even where the store answers a stored CRC32: all, none, or
     * share {@code slot} of {@code shares}, chosen by a hash of the object key so that the runs
     * {@code slot = r, r+1, ..., r+shares-1} between them read every object once.
     */
    public record Share(int slot, int shares) {
        public static final Share ALL = new Share(0, 1);
        public static final Share NONE = new Share(0, 0);

        public Share {
            if (shares < 0 || (shares > 0 && (slot < 0 || slot >= shares))) {
                throw new IllegalArgumentException("share " + slot + " of " + shares);
            }
        }

        /** The share run number {@code run} (counted from any start) reads in full, every object once in {@code shares} runs. */
        public static Share ofRun(long run, int shares) {
            return new Share((int) Math.floorMod(run, (long) shares), shares);
        }

        boolean readsInFull(String key) {
            if (shares == 0) {
                return false;
            }
            CRC32 crc = new CRC32();
            crc.update(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return Math.floorMod(crc.getValue(), (long) shares) == slot;
        }
    }

    private final Share fullShare;

    /**
     * @param fullShare which objects to read in full even where the store answers a stored CRC32
     *                  (the daemon's scheduled scrub rotates it, so rot behind a kept checksum is found
     *                  within a bounded number of runs)
     */
    public Scrub(DataRoot root, ObjectStore store, Map<String, String> env, long readBytesPerSecond, Clock clock, Share fullShare) {
        this(root, store, env, readBytesPerSecond, clock, fullShare, Limits.DEFAULT);
    }

    private final Limits limits;
    /** Requests made to check entries in the current run. */
    private final java.util.concurrent.atomic.AtomicLong requests = new java.util.concurrent.atomic.AtomicLong();

    /** @param limits how many entries at once, the run's request budget and where it starts */
    public Scrub(DataRoot root, ObjectStore store, Map<String, String> env, long readBytesPerSecond, Clock clock,
                 Share fullShare, Limits limits) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.fullShare = fullShare;
        this.full = fullShare.equals(Share.ALL);
        this.root = root;
        this.store = store;
        this.env = env;
        this.readBytesPerSecond = readBytesPerSecond;
        this.clock = clock;
    }

    /**
     * Runs the scrub.
     *
     * @param guard this process's guard of the data root, or null when no other pass runs in it
     */
    public Report run(StopSignal stop, DataRootGuard guard) throws IOException, StoreException, InterruptedException {
        long started = System.nanoTime();
        // A stored CRC32 stands for the bytes only where a server keeps it and looks after what it holds;
        // a filesystem store's attribute was written by this process and would hide later rot.
        Set<StoreCapability> caps = store.capabilities();
        boolean storedCrc = !full && caps.contains(StoreCapability.CRC32_STORED)
                && caps.contains(StoreCapability.CRC32_KEPT_BY_SERVER);
        RateLimiter limiter = readBytesPerSecond > 0 ? RateLimiter.create(readBytesPerSecond) : null;
        List<Anomaly> anomalies = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, Integer> checkedBy = new TreeMap<>();
        int entries = 0;
        DataRoot.Listing listing = root.list();
        List<DataRoot.Shard> shards = listing.streamShards();
        // A name that may be a shard but could not be read is never passed over: its entries go unchecked.
        for (DataRoot.Unreadable u : listing.unreadable()) {
            LOG.warn("{}: unreadable, not checked: {}", u.name(), u.reason());
            anomalies.add(Anomaly.unreadableShard(u.name(), "the shard could not be read, so its "
                    + "manifest's entries were not checked: " + u.reason()));
        }
        Optional<String> nodeId = nodeId();
        // Reading is never refused; a writer's refusal shows as a note, and the holder of a sound claim too.
        ReaderClaimCheck.run(root, store, env, "", "the store setting").ifPresent(c -> {
            if (c.warning().isPresent()) {
                notes.add("node claim: " + c.warning().get());
            } else {
                c.claim().ifPresent(h -> notes.add("node claim: held by this root (" + h.describeHolder() + ")"));
            }
        });
        int legacyEntries = 0;
        int storeFailures = 0; // entries the store failed to answer for (told in one line at the end)
        String firstStoreFailure = null;
        int formerNodeEntries = 0;
        Optional<KeyOwnership> ownership = nodeId.isEmpty() ? Optional.empty()
                : Optional.of(KeyOwnership.of(root, new SegmentKeys("", nodeId.get())));
        requests.set(0);
        // Shards by name and entries by base offset: the order a cursor points into. A run from a
        // cursor goes to the last entry (phase 0), then from the first entry up to the cursor (phase 1).
        List<DataRoot.Shard> ordered = new ArrayList<>(shards);
        ordered.sort(java.util.Comparator.comparing(DataRoot.Shard::name));
        Optional<Cursor> from = limits.start();
        long budgetLeft = limits.requestBudget() == 0 ? Long.MAX_VALUE : limits.requestBudget();
        Cursor resumeAt = null;
        boolean reachedEnd = false;
        int total = 0;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(
                limits.concurrency(), r -> {
                    Thread t = new Thread(r, "scrub-check");
                    t.setDaemon(true);
                    return t;
                });
        // Findings still being made, in the entries' order; taken from the front, so the report keeps it.
        java.util.ArrayDeque<java.util.concurrent.Future<EntryFindings>> pending = new java.util.ArrayDeque<>();
        try {
            phases:
            for (int phase = 0; phase < (from.isPresent() ? 2 : 1); phase++) {
                for (DataRoot.Shard s : ordered) {
                    if (stop.stopRequested()) {
                        break phases;
                    }
                    String shard = s.name();
                    if (from.isPresent()) {
                        int c = shard.compareTo(from.get().shard());
                        if ((phase == 0 && c < 0) || (phase == 1 && c > 0)) {
                            continue;
                        }
                    }
                    Path dir = s.directory();
                    Manifest manifest;
                    try {
                        manifest = ManifestStore.read(dir);
                    } catch (NoSuchFileException e) {
                        continue;
                    } catch (CorruptionException e) {
                        if (phase == 0 || !from.get().shard().equals(shard)) {
                            pending.add(java.util.concurrent.CompletableFuture.completedFuture(new EntryFindings(
                                    null, List.of(Anomaly.unreadableShard(shard, "manifest: " + e.getMessage())),
                                    null, null, false)));
                        }
                        continue;
                    }
                    for (ManifestEntry entry : manifest.entries()) {
                        if (from.isPresent() && from.get().after(shard, entry.baseOffset()) == (phase == 0)) {
                            continue; // before the cursor in phase 0, at or after it in phase 1
                        }
                        total++;
                        if (resumeAt != null) {
                            continue; // the budget is spent: counted, not checked
                        }
                        if (stop.stopRequested()) {
                            break phases;
                        }
                        long cost = cost(entry, storedCrc);
                        // An entry that alone costs more than the budget is still checked when a run
                        // starts with it, or runs would stop at it for ever.
                        if (cost > budgetLeft && entries > 0) {
                            resumeAt = new Cursor(shard, entry.baseOffset());
                            continue;
                        }
                        budgetLeft = Math.max(0, budgetLeft - cost);
                        entries++;
                        if (ownership.isPresent() && ownership.get().isLegacyKey(shard, entry.objectKey())) {
                            legacyEntries++;
                        } else if (ownership.isPresent() && ownership.get().isFormerNodeKey(shard, entry.objectKey())) {
                            formerNodeEntries++;
                        }
                        List<Anomaly> first = new ArrayList<>();
                        if (ownership.isPresent() && !ownership.get().inShardPrefix(shard, entry.objectKey())) {
                            String owner = ownership.get().shardOf(entry.objectKey()).orElse("");
                            first.add(Anomaly.foreignKey(shard, entry.segmentId(), entry.objectKey(),
                                    "the key lies in " + (owner.isEmpty() ? "no shard's prefix" : "shard " + owner + "'s prefix")
                                            + ", not in " + shard + "'s; no pass deletes it on this entry's account", owner));
                        }
                        pending.add(pool.submit(() -> findings(dir, shard, entry, first, storedCrc, limiter, stop)));
                        while (pending.size() > 2 * limits.concurrency()) {
                            int failed = take(pending.poll(), anomalies, checkedBy);
                            if (failed > 0 && storeFailures++ == 0) {
                                firstStoreFailure = lastStoreFailure;
                            }
                        }
                    }
                }
                if (phase == 0 && resumeAt == null && !stop.stopRequested()) {
                    reachedEnd = true;
                }
            }
            while (!pending.isEmpty()) {
                int failed = take(pending.poll(), anomalies, checkedBy);
                if (failed > 0 && storeFailures++ == 0) {
                    firstStoreFailure = lastStoreFailure;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        if (resumeAt != null) {
            notes.add("the request budget of " + limits.requestBudget() + " ran out after " + entries + " of " + total
                    + " entries (" + String.format(java.util.Locale.ROOT, "%.1f", 100.0 * entries / Math.max(1, total))
                    + "%); the next run starts at " + resumeAt.describe() + " (--start-at " + resumeAt.text() + ")");
        }

        if (storeFailures > 0) {
            LOG.warn("{} {} could not be read: the store failed the requests (first: {})", storeFailures,
                    storeFailures == 1 ? "entry" : "entries", firstStoreFailure);
        }
        if (legacyEntries + formerNodeEntries > 0) {
            notes.add(legacyEntries + " entries name keys without a node id and " + formerNodeEntries + " keys under a "
                    + "node id this root had before reidentify: other roots may need them, so this root never deletes "
                    + "them; `felix-offload legacy-keys` lists them and copies them under its own node id");
        }
        if (storedCrc && fullShare.shares() > 1) {
            notes.add("objects of share " + fullShare.slot() + " of " + fullShare.shares()
                    + " read in full behind the server's checksum");
        }
        boolean listed = false;
        String prefix = null;
        if (nodeId.isEmpty() && entries > 0) {
            notes.add("no node id (" + NodeId.ENV + " unset and no node-id file): keys outside their shard's prefix "
                    + "not looked for");
        }
        if (stop.stopRequested()) {
            notes.add("stopped before the end; orphans not listed");
        } else if (!reachedEnd) {
            notes.add("orphans not listed: this run did not reach the last entry (the run that does lists them)");
        } else if (nodeId.isEmpty()) {
            notes.add("the data root has no node id yet (nothing was offloaded from it); orphans not listed");
        } else {
            SegmentKeys keys = new SegmentKeys("", nodeId.get());
            prefix = keys.nodePrefix();
            DataRootGuard.Held held = guard == null ? null : guard.hold(stop);
            if (guard == null || held != null) {
                try {
                    OrphanSweepReport orphans = listOrphans(keys, stop, notes);
                    listed = true;
                    for (String key : orphans.found()) {
                        anomalies.add(Anomaly.orphan(shardOf(key, prefix), key,
                                "no manifest names it"));
                    }
                    for (HeldShard h : orphans.held()) {
                        Kind kind = switch (h.reason()) {
                            case MISSING_SHARD -> Kind.MISSING_SHARD;
                            case UNRECORDED_HISTORY -> Kind.UNRECORDED_HISTORY;
                            case UNREADABLE -> Kind.UNREADABLE;
                        };
                        boolean known = anomalies.stream().anyMatch(a -> a.kind() == Kind.UNREADABLE
                                && a.key().isEmpty() && a.shard().equals(h.shard()));
                        if (!known) {
                            anomalies.add(Anomaly.heldShard(kind, h.shard(), h.objects() + " objects ("
                                    + h.bytes() + " bytes) under " + keys.shardPrefix(h.shard()) + " kept: "
                                    + h.detail(), h.objects(), h.bytes()));
                        }
                    }
                    notes.addAll(orphans.problems());
                } finally {
                    if (held != null) {
                        held.close();
                    }
                }
            }
        }
        return new Report(shards.size(), entries, checkedBy, anomalies, listed, prefix, notes, stop.stopRequested(),
                Duration.ofNanos(System.nanoTime() - started), total, requests.get(), limits.requestBudget(),
                Optional.ofNullable(resumeAt));
    }

    /**
     * The most requests checking {@code entry} may take: its HEAD, and the GETs of a full read unless
     * the server's checksum is expected to stand for it.
     */
    private long cost(ManifestEntry entry, boolean storedCrc) {
        if (storedCrc && !fullShare.readsInFull(entry.objectKey())) {
            return 1;
        }
        return 1 + (entry.sizeBytes() + READ_CHUNK - 1) / READ_CHUNK;
    }

    /** What checking one entry found, to be taken in the entries' order. */
    private record EntryFindings(Checked checked, List<Anomaly> first, Anomaly checkAnomaly, Anomaly local,
                                 boolean storeFailed) {
    }

    /** The first store failure's line among the findings taken last; read on the run's thread only. */
    private String lastStoreFailure;

    /** Checks one entry, its object and its local segment (on a scrub thread). */
    private EntryFindings findings(Path dir, String shard, ManifestEntry entry, List<Anomaly> first, boolean storedCrc,
                                   RateLimiter limiter, StopSignal stop) {
        Checked c = check(shard, entry, storedCrc, limiter, stop);
        Anomaly checkAnomaly = c.anomaly() != null && stillNamed(dir, entry) ? c.anomaly() : null;
        Anomaly local = checkLocal(dir, shard, entry, c.anomaly() == null && c.how() != null);
        if (local != null && !stillNamed(dir, entry)) {
            local = null;
        }
        return new EntryFindings(c, first, checkAnomaly, local, checkAnomaly != null && c.storeFailed());
    }

    /**
     * Takes one entry's findings into the report, logging as a run one at a time did; answers 1 when
     * they are a store failure (told once for the run), else 0.
     */
    private int take(java.util.concurrent.Future<EntryFindings> next, List<Anomaly> anomalies,
                     Map<String, Integer> checkedBy) throws InterruptedException {
        EntryFindings f;
        try {
            f = next.get();
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
        anomalies.addAll(f.first());
        if (f.checked() == null) {
            return 0; // an unreadable manifest, in its place in the order
        }
        Checked c = f.checked();
        if (c.how() != null) {
            checkedBy.merge(c.how(), 1, Integer::sum);
        }
        int failed = 0;
        if (f.checkAnomaly() != null) {
            Anomaly a = f.checkAnomaly();
            String segment = Long.toUnsignedString(a.segmentId().orElse(-1));
            if (f.storeFailed()) {
                // the store failing, not this object: one line for the pass, however many entries it meets
                lastStoreFailure = a.shard() + ": segment " + segment + ": " + a.detail();
                failed = 1;
            } else {
                LOG.warn("{}: segment {}: {} {}: {}", a.shard(), segment, a.kind().label(), a.key().orElse(""), a.detail());
            }
            anomalies.add(a);
        }
        if (f.local() != null) {
            Anomaly local = f.local();
            LOG.warn("{}: segment {}: local-mismatch at byte {}: {}", local.shard(),
                    Long.toUnsignedString(local.segmentId().orElse(-1)), local.byteAt().orElse(-1), local.detail());
            anomalies.add(local);
        }
        return failed;
    }

    private OrphanSweepReport listOrphans(SegmentKeys keys, StopSignal stop, List<String> notes)
            throws IOException, StoreException {
        OrphanSweep sweep = new OrphanSweep(root, store, keys, clock,
                OrphanSweepSettings.defaults().withDryRun(true).withFullSweep(true), RetentionHook.none());
        RootLock lock = null;
        try {
            lock = RootLock.acquire(root.path());
        } catch (RootLock.HeldException e) {
            notes.add("another process holds the data root (" + e.getMessage()
                    + "); an upload in progress there may be listed as an orphan");
        }
        try {
            return sweep.run(stop);
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }

    private static String shardOf(String key, String prefix) {
        String rest = key.substring(prefix.length());
        int slash = rest.lastIndexOf('/'); // a shard's name may hold a slash itself (dead-letters/<dir>)
        return slash < 0 ? "" : rest.substring(0, slash);
    }

    /** The node id without creating one: FELIX_NODE_ID, else the root's node-id file when it exists. */
    private Optional<String> nodeId() throws IOException {
        if (env.get(NodeId.ENV) == null && !Files.exists(root.identityFile(DataRoot.NODE_ID))) {
            return Optional.empty();
        }
        return Optional.of(NodeId.resolve(root, env));
    }

    /** @param storeFailed the anomaly is the store failing a request (unreachable, timing out), not the object */
    private record Checked(String how, Anomaly anomaly, boolean storeFailed) {
        Checked(String how, Anomaly anomaly) {
            this(how, anomaly, false);
        }
    }

    /**
     * The entry's segment, when it is still on local disk, against the entry: a local-mismatch
     * anomaly when its valid bytes are not the entry's, else null.
     *
     * @param copyProven whether this scrub just proved the entry's object
     */
    private Anomaly checkLocal(Path dir, String shard, ManifestEntry entry, boolean copyProven) {
        SegmentFile f = SegmentFile.in(dir, entry.segmentId());
        if (!Files.exists(f.log())) {
            return null;
        }
        try {
            LocalCopyCheck check = LocalCopyCheck.of(shard, f, entry);
            if (check.matches()) {
                return null;
            }
            if (check.damaged()) {
                return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), OptionalLong.of(check.localBytes()),
                        check.mismatch() + (copyProven ? "; its copy is proven (checked by this scrub), so retention "
                                + "replaces the local file with it" : "; its copy is not proven either"));
            }
            long at = CopyDifference.firstDifference(store, entry, f.log());
            return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), at < 0 ? OptionalLong.empty()
                    : OptionalLong.of(at), check.mismatch()
                    + "; it scans clean, so which is right is not known: retention keeps it");
        } catch (NoSuchFileException gone) {
            return null; // retention or the broker removed it meanwhile
        } catch (IOException | StoreException e) {
            return Anomaly.localMismatch(shard, entry.segmentId(), entry.objectKey(), OptionalLong.empty(),
                    "the local segment could not be compared with its copy: " + e.getMessage());
        }
    }

    private Checked check(String shard, ManifestEntry entry, boolean storedCrc, RateLimiter limiter, StopSignal stop) {
        String key = entry.objectKey();
        long segment = entry.segmentId();
        long expectedCrc = Integer.toUnsignedLong(entry.objectCrc32());
        try {
            requests.incrementAndGet();
            ObjectHead head = store.head(key);
            if (head.size() != entry.sizeBytes()) {
                return new Checked(null, Anomaly.ofEntry(Kind.SIZE_MISMATCH, shard, segment, key,
                        "the store holds " + head.size() + " bytes, the manifest says " + entry.sizeBytes()));
            }
            long crc;
            String how;
            if (storedCrc && head.crc32().isPresent() && !fullShare.readsInFull(key)) {
                crc = head.crc32().getAsLong();
                how = "server-checksum";
            } else {
                OptionalLong read = readCrc(key, head.size(), limiter, stop);
                if (read.isEmpty()) {
                    return new Checked(null, null); // stopped in the middle: not checked
                }
                crc = read.getAsLong();
                how = "read-back";
            }
            if (crc != expectedCrc) {
                return new Checked(how, Anomaly.ofEntry(Kind.CRC_MISMATCH, shard, segment, key,
                        String.format("crc32 %08x by %s, the manifest says %08x", crc, how, expectedCrc)));
            }
            return new Checked(how, null);
        } catch (ObjectNotFoundException e) {
            return new Checked(null, Anomaly.ofEntry(Kind.MISSING, shard, segment, key, "the store has no such object"));
        } catch (StoreException e) {
            return new Checked(null, Anomaly.ofEntry(Kind.UNREADABLE, shard, segment, key,
                    FailureKind.of(e) + ": " + e.getMessage()), e instanceof dev.felix.offload.store.TransientStoreException);
        }
    }

    /** The CRC32 of the whole object, read in pieces; empty when a stop came first. */
    private OptionalLong readCrc(String key, long size, RateLimiter limiter, StopSignal stop) throws StoreException {
        CRC32 crc = new CRC32();
        long at = 0;
        while (at < size) {
            if (stop.stopRequested()) {
                return OptionalLong.empty();
            }
            int n = (int) Math.min(READ_CHUNK, size - at);
            if (limiter != null) {
                limiter.acquire(n);
            }
            requests.incrementAndGet();
            crc.update(store.readRange(key, ByteRange.of(at, n)));
            at += n;
        }
        return OptionalLong.of(crc.getValue());
    }

    /** True when the shard's manifest, read again now, still has {@code entry}. */
    private static boolean stillNamed(Path dir, ManifestEntry entry) {
        try {
            return ManifestStore.read(dir).entries().stream()
                    .anyMatch(e -> e.segmentId() == entry.segmentId() && e.objectKey().equals(entry.objectKey()));
        } catch (IOException | CorruptionException e) {
            return true;
        }
    }
}
