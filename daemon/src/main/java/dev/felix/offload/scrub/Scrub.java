package dev.felix.offload.scrub;

import com.google.common.util.concurrent.RateLimiter;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.schedule.DataRootGuard;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.CRC32;

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
 * it may cost (one HEAD, and one GET for each {@value EntryCheck#READ_CHUNK_MB} MiB it may have to read in
 * full) fits in what is left, and the first entry that does not fit is where the run stops checking
 * and where the next run may start ({@link Report#resumeAt}, passed back as {@link Limits#start}).
 * A run that starts there goes on to the last entry and then round from the first, so that runs in
 * turn check every entry. The share of entries a run checked is in its report; the orphans are
 * listed by the run that checks the last entry.
 *
 * <p>This class walks the entries in that order; one entry's check is {@link EntryCheck}, whose keys it
 * names {@link EntryKeys}, the findings taken in order {@link OrderedFindings}, the budget
 * {@link RequestBudget} and the orphans {@link OrphanListing}.
 */
public final class Scrub {

    private static final Logger LOG = LoggerFactory.getLogger(Scrub.class);

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
     * @param checkedBy     entries checked, by how: {@code server-checksum} or {@code read-back}
     * @param orphansListed whether the node's prefix was listed for orphans
     * @param notes         what limited the scrub
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
            crc.update(key.getBytes(StandardCharsets.UTF_8));
            return Math.floorMod(crc.getValue(), (long) shares) == slot;
        }
    }

    private final boolean full;
    private final Share fullShare;
    private final Limits limits;
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
     * @param fullShare which objects to read in full even where the store answers a stored CRC32
     *                  (the daemon's scheduled scrub rotates it, so rot behind a kept checksum is found
     *                  within a bounded number of runs)
     */
    public Scrub(DataRoot root, ObjectStore store, Map<String, String> env, long readBytesPerSecond, Clock clock, Share fullShare) {
        this(root, store, env, readBytesPerSecond, clock, fullShare, Limits.DEFAULT);
    }

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
        EntryCheck check = new EntryCheck(store, fullShare, storedCrc,
                readBytesPerSecond > 0 ? RateLimiter.create(readBytesPerSecond) : null);
        OrderedFindings findings = new OrderedFindings(LOG);
        List<String> notes = new ArrayList<>();
        int entries = 0;
        DataRoot.Listing listing = root.list();
        List<DataRoot.Shard> shards = listing.streamShards();
        // A name that may be a shard but could not be read is never passed over: its entries go unchecked.
        for (DataRoot.Unreadable u : listing.unreadable()) {
            LOG.warn("{}: unreadable, not checked: {}", u.name(), u.reason());
            findings.add(Anomaly.unreadableShard(u.name(), "the shard could not be read, so its "
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
        EntryKeys entryKeys = new EntryKeys(nodeId.isEmpty() ? Optional.empty()
                : Optional.of(KeyOwnership.of(root, new SegmentKeys("", nodeId.get()))));
        // Shards by name and entries by base offset: the order a cursor points into. A run from a
        // cursor goes to the last entry (phase 0), then from the first entry up to the cursor (phase 1).
        List<DataRoot.Shard> ordered = new ArrayList<>(shards);
        ordered.sort(Comparator.comparing(DataRoot.Shard::name));
        Optional<Cursor> from = limits.start();
        RequestBudget budget = new RequestBudget(limits.requestBudget());
        boolean reachedEnd = false;
        int total = 0;
        ExecutorService pool = Executors.newFixedThreadPool(limits.concurrency(), r -> {
            Thread t = new Thread(r, "scrub-check");
            t.setDaemon(true);
            return t;
        });
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
                            findings.add(EntryCheck.Findings.unreadableManifest(
                                    Anomaly.unreadableShard(shard, "manifest: " + e.getMessage())));
                        }
                        continue;
                    }
                    for (ManifestEntry entry : manifest.entries()) {
                        if (from.isPresent() && from.get().after(shard, entry.baseOffset()) == (phase == 0)) {
                            continue; // before the cursor in phase 0, at or after it in phase 1
                        }
                        total++;
                        if (budget.spent()) {
                            continue; // counted, not checked
                        }
                        if (stop.stopRequested()) {
                            break phases;
                        }
                        if (!budget.admit(shard, entry.baseOffset(), check.cost(entry), entries == 0)) {
                            continue;
                        }
                        entries++;
                        List<Anomaly> first = entryKeys.examine(shard, entry);
                        findings.add(pool.submit(() -> check.findings(dir, shard, entry, first, stop)));
                        findings.takeUntil(2 * limits.concurrency());
                    }
                }
                if (phase == 0 && !budget.spent() && !stop.stopRequested()) {
                    reachedEnd = true;
                }
            }
            findings.takeUntil(0);
        } finally {
            pool.shutdownNow();
        }
        budget.note(entries, total).ifPresent(notes::add);
        findings.logStoreFailures();
        entryKeys.note().ifPresent(notes::add);
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
            listed = new OrphanListing(root, store, clock).list(keys, guard, stop, findings, notes);
        }
        return new Report(shards.size(), entries, findings.checkedBy(), findings.anomalies(), listed, prefix, notes,
                stop.stopRequested(), Duration.ofNanos(System.nanoTime() - started), total, check.requests(),
                limits.requestBudget(), budget.resumeAt());
    }

    /** The node id without creating one: FELIX_NODE_ID, else the root's node-id file when it exists. */
    private Optional<String> nodeId() throws IOException {
        if (env.get(NodeId.ENV) == null && !Files.exists(root.identityFile(DataRoot.NODE_ID))) {
            return Optional.empty();
        }
        return Optional.of(NodeId.resolve(root, env));
    }
}
