package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.zip.CRC32;

/**
 * The ownership check every command that works on a store runs first: one data root per node id
 * per store, and a root bound to the store that holds its objects.
 *
 * <p>It reads the store's {@link NodeClaim} for this node and the root's {@link OffloadRootId}:
 * <ul>
 *   <li>a claim naming this root: go on;</li>
 *   <li>a claim naming another root (or one that does not decode): another root offloads under
 *       this node id here, and anything this root wrote or deleted could be that root's. A writer
 *       is refused ({@link Refusal#HELD_BY_ANOTHER_ROOT}) unless it takes the node id over on
 *       purpose, which replaces the claim;</li>
 *   <li>no claim: when the root's manifests hold entries, the newest entry of each shard (up to
 *       {@value #MAX_SHARDS_ASKED} shards) is looked up; one present with its size is proof the
 *       store is this root's (everything offloaded before claims existed), and a writer claims it;
 *       none present means the manifests name another store's objects
 *       ({@link Refusal#NOT_THIS_ROOTS_STORE}), which no take-over overrides. A root without entries
 *       claims the store when nothing lies under its node prefix yet; objects there that no claim
 *       covers may be another root's ({@link Refusal#UNCLAIMED_OBJECTS}), and only a take-over
 *       claims them.</li>
 * </ul>
 * A claim is written create-only, so of two roots claiming at once one wins, and the loser reads
 * the winner's claim back and is refused. The claim tells roots apart by their root id, which a copy
 * of a whole root carries too; a writer then takes the node's {@link NodeLease}, which tells such
 * copies apart ({@link Refusal#COPIED_ROOT}), and writes through {@link Result#fenced}. A reader ({@link Access#READ}) is never refused and
 * never writes: it gets a warning to print. The caller holds the root's {@link RootLock} for a
 * writer, since a claim may create the root's id file.
 */
public final class NodeClaimCheck {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(NodeClaimCheck.class);

    /** Shards whose newest entry is looked up when the store holds no claim. */
    static final int MAX_SHARDS_ASKED = 32;

    /** What the command does with the store. */
    public enum Access {
        /** Uploads or deletes objects: refused on any doubt, and claims a store that may be claimed. */
        WRITE,
        /** Writes only the local root from the store's objects (restore): refused on another root's claim, claims nothing. */
        LOCAL_WRITE,
        /** Only reads: never refused, never writes. */
        READ
    }

    /** Why a store may not be worked on. */
    public enum Refusal {
        HELD_BY_ANOTHER_ROOT,
        UNREADABLE_CLAIM,
        NOT_THIS_ROOTS_STORE,
        UNCLAIMED_OBJECTS,
        /** Another copy of this data root (same root id and node id) wrote under the prefix: {@link NodeLease}. */
        COPIED_ROOT
    }

    /** How the check ended when it let the command go on. */
    public enum Outcome {
        /** The claim names this root. */
        HELD,
        /** The store had no claim and this root wrote one. */
        CLAIMED,
        /** The claim named another root, and this root replaced it on purpose. */
        TAKEN_OVER,
        /** No claim, and none written (a reader, or a local writer). */
        UNCLAIMED,
        /** A reader was told of a refusal a writer would have met: see {@link Result#warning()}. */
        WARNED
    }

    /**
     * @param outcome how it ended
     * @param claim   the claim the store holds now, when it holds one that decodes
     * @param warning for {@link Outcome#WARNED} and {@link Outcome#TAKEN_OVER}, what to tell the operator
     */
    public record Result(Outcome outcome, Optional<NodeClaim> claim, Optional<String> warning,
                         Optional<NodeLease.Fence> lease) {

        public Result(Outcome outcome, Optional<NodeClaim> claim, Optional<String> warning) {
            this(outcome, claim, warning, Optional.empty());
        }

        Result withLease(NodeLease.Fence fence) {
            return new Result(outcome, claim, warning, Optional.of(fence));
        }

        /**
         * {@code store} as a pass should write through it: every put and delete going through the
         * node's lease ({@link NodeLease.Fence#fence}) where the check gave one, else {@code store} itself.
         */
        public ObjectStore fenced(ObjectStore store) {
            return lease.map(l -> l.fence(store)).orElse(store);
        }

        /**
         * {@code store} as the offload pass writes through it ({@link NodeLease.Fence#fenceForOffload}):
         * the pass calls {@link NodeLease.Fence#confirm} on {@link #lease()} before each manifest write.
         */
        public ObjectStore fencedForOffload(ObjectStore store) {
            return lease.map(l -> l.fenceForOffload(store)).orElse(store);
        }
    }

    /** The store did not answer the claim's read or write: nothing was written or deleted. */
    public static final class StoreFailedException extends IOException {
        private static final long serialVersionUID = 1L;

        StoreFailedException(String message, StoreException cause) {
            super(message, cause);
        }
    }

    /** A writer refused, before anything was written or deleted in the store. */
    public static final class RefusedException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final Refusal refusal;

        RefusedException(Refusal refusal, String message) {
            super(message);
            this.refusal = refusal;
        }

        public Refusal refusal() {
            return refusal;
        }
    }

    private final DataRoot root;
    private final ObjectStore store;
    private final SegmentKeys keys;
    private final String storeSetting;
    private final Clock clock;

    /**
     * @param storeSetting where the store came from, for messages ({@code --store}, {@code FILE: store})
     */
    public NodeClaimCheck(DataRoot root, ObjectStore store, SegmentKeys keys, String storeSetting, Clock clock) {
        this.root = Objects.requireNonNull(root, "root");
        this.store = Objects.requireNonNull(store, "store");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.storeSetting = Objects.requireNonNull(storeSetting, "storeSetting");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Runs the check.
     *
     * @param takeOver replace another root's claim (or an unreadable one), or claim objects no claim
     *                 covers: the operator's explicit {@code --take-over-node-id}; ignored by readers
     * @throws RefusedException when a writer may not go on
     * @throws StoreException   when the store does not answer (nothing was written then)
     */
    public Result run(Access access, boolean takeOver) throws IOException, StoreException {
        Result claimed = runClaim(access, takeOver);
        String where = where();
        switch (claimed.outcome()) {
            case HELD, CLAIMED, TAKEN_OVER -> {
                boolean taking = takeOver || claimed.outcome() == Outcome.TAKEN_OVER;
                if (access == Access.WRITE || (access == Access.LOCAL_WRITE && taking)) {
                    // Taken now on a take-over; otherwise checked now (a copy behind the store stops before
                    // anything) and taken at the pass's first write, so a pass with nothing to write writes none.
                    NodeLease.Stamp taken = null;
                    if (taking) {
                        taken = NodeLease.advance(root, store, keys, where, true, clock, leaseStep);
                    } else {
                        NodeLease.verify(root, store, keys, where);
                    }
                    return claimed.withLease(new NodeLease.Fence(root, store, keys, where, clock, leaseStep, taken));
                }
                if (access == Access.LOCAL_WRITE) {
                    NodeLease.verify(root, store, keys, where);
                    return claimed;
                }
                Optional<String> fenced = NodeLease.readerWarning(root, store, keys, where);
                return fenced.isPresent() ? new Result(Outcome.WARNED, claimed.claim(), fenced) : claimed;
            }
            default -> {
                return claimed;
            }
        }
    }

    /** The seam the lease tests step in at; {@link NodeLease.Step#NONE} otherwise. */
    private NodeLease.Step leaseStep = NodeLease.Step.NONE;

    NodeClaimCheck withLeaseStep(NodeLease.Step step) {
        this.leaseStep = step;
        return this;
    }

    private Result runClaim(Access access, boolean takeOver) throws IOException, StoreException {
        String key = NodeClaim.keyFor(keys);
        Optional<String> rootId = OffloadRootId.read(root);
        Optional<byte[]> body = readClaim(key);
        if (body.isPresent()) {
            NodeClaim claim;
            try {
                claim = NodeClaim.decode(body.get());
            } catch (NodeClaim.UnreadableClaimException e) {
                String why = "the store " + where() + " holds a node claim " + key + " that does not decode (" + e.getMessage()
                        + "), so which data root offloads as node '" + keys.nodeId() + "' there is unknown";
                return refuseOrTakeOver(access, takeOver, Refusal.UNREADABLE_CLAIM, why, Optional.empty());
            }
            if (rootId.isPresent() && rootId.get().equals(claim.rootId())) {
                return new Result(Outcome.HELD, Optional.of(claim), Optional.empty());
            }
            return refuseOrTakeOver(access, takeOver, Refusal.HELD_BY_ANOTHER_ROOT, heldMessage(claim, rootId),
                    Optional.of(claim));
        }
        Evidence evidence = evidence();
        if (evidence.withEntries == 0 && evidence.unreadable > 0 && access == Access.WRITE) {
            // What the unreadable manifests name is unknown: claim nothing and refuse nothing on their
            // account; the pass itself reports them, and nothing is deleted while one is unreadable.
            return new Result(Outcome.UNCLAIMED, Optional.empty(), Optional.empty());
        }
        if (evidence.withEntries > 0 && evidence.present == 0) {
            String why = "the store " + where() + " holds no node claim for node '" + keys.nodeId() + "' and none of the "
                    + evidence.withEntries + " newest objects the manifests of " + root.path().toAbsolutePath().normalize() + " name (e.g. "
                    + evidence.missingExample + "): these manifests belong to another store. Check " + storeSetting
                    + " (a changed store setting or a new bucket?); nothing is uploaded or deleted until it names the "
                    + "store holding this root's objects";
            if (access == Access.WRITE) {
                throw new RefusedException(Refusal.NOT_THIS_ROOTS_STORE, why);
            }
            return new Result(access == Access.READ ? Outcome.WARNED : Outcome.UNCLAIMED, Optional.empty(),
                    Optional.of(why));
        }
        if (access != Access.WRITE) {
            return new Result(Outcome.UNCLAIMED, Optional.empty(), Optional.empty());
        }
        if (evidence.withEntries == 0) {
            Optional<String> other = anyObjectUnder(keys.nodePrefix());
            if (other.isPresent() && !takeOver) {
                throw new RefusedException(Refusal.UNCLAIMED_OBJECTS, "the store " + where() + " holds objects under "
                        + keys.nodePrefix() + " (e.g. " + other.get() + ") but no node claim, and no manifest of "
                        + root.path().toAbsolutePath().normalize() + " names any object: they may be another data root's that offloads as node '"
                        + keys.nodeId() + "' (" + NODE_ID_SETTINGS + "). Give this root its own node id, or, if those "
                        + "objects are this root's (its manifests were lost), run once with --take-over-node-id");
            }
        }
        NodeClaim mine = newClaim();
        try {
            store.put(key, UploadBody.ofBytes(mine.encode()), PutOptions.defaults().withNoReplace().withCrc32(crc(mine)));
        } catch (PreconditionFailedException raced) {
            return runClaim(access, takeOver); // another root claimed first: judge its claim
        }
        // Where the store cannot refuse a put itself (a head before the put), read the winner back.
        Optional<byte[]> back = readClaim(key);
        if (back.isPresent()) {
            try {
                NodeClaim now = NodeClaim.decode(back.get());
                if (!now.rootId().equals(mine.rootId())) {
                    throw new RefusedException(Refusal.HELD_BY_ANOTHER_ROOT, heldMessage(now, Optional.of(mine.rootId())));
                }
            } catch (NodeClaim.UnreadableClaimException e) {
                throw new RefusedException(Refusal.UNREADABLE_CLAIM, "the node claim " + key + " read back from "
                        + where() + " does not decode: " + e.getMessage());
            }
        }
        return new Result(Outcome.CLAIMED, Optional.of(mine), Optional.empty());
    }

    /**
     * How a pass checks the claim before it writes or deletes anything.
     *
     * @param storeSetting where the store came from, for messages
     * @param takeOver     replace another root's claim on purpose ({@code --take-over-node-id})
     */
    public record Policy(String storeSetting, boolean takeOver) {
        public Policy {
            Objects.requireNonNull(storeSetting, "storeSetting");
        }
    }

    /**
     * A writer's check, as a pass runs it under the root's lock: refused with {@link RefusedException};
     * a store that does not answer fails with an {@link IOException} naming it and the cause.
     */
    public static Result enforce(DataRoot root, ObjectStore store, SegmentKeys keys, Policy policy) throws IOException {
        try {
            NodeClaimCheck check = new NodeClaimCheck(root, store, keys, policy.storeSetting(), Clock.systemUTC());
            Result r = check.run(Access.WRITE, policy.takeOver());
            r.warning().ifPresent(w -> LOG.warn("{}", w));
            if (r.outcome() == Outcome.CLAIMED) {
                LOG.info("claimed node id '{}' in {} for {}", keys.nodeId(), store.describe(), root.path());
            }
            return r;
        } catch (StoreException e) {
            throw new StoreFailedException("store " + store.describe() + " (" + policy.storeSetting()
                    + "): reading the node claim: " + e.getMessage(), e);
        }
    }

    /** Where a node id comes from, as messages name it. */
    static final String NODE_ID_SETTINGS = "FELIX_NODE_ID, the configuration's node-id, or the root's node-id file";

    private String heldMessage(NodeClaim claim, Optional<String> rootId) {
        return "node id '" + keys.nodeId() + "' (" + NODE_ID_SETTINGS + ") is claimed in the store " + where()
                + " by another data root: " + claim.describeHolder() + "; this root " + root.path().toAbsolutePath().normalize()
                + (rootId.isPresent() ? " is root id " + rootId.get() : " has no offload-root-id yet")
                + ". Two roots offloading as one node would delete each other's objects. Give this root its own "
                + "node id, or, if this root replaces that one (its volume moved to a new machine, a restore after a "
                + "lost disk) and the other no longer runs, run once with --take-over-node-id";
    }

    private Result refuseOrTakeOver(Access access, boolean takeOver, Refusal refusal, String why,
                                    Optional<NodeClaim> claim) throws IOException, StoreException {
        if (access == Access.READ) {
            return new Result(Outcome.WARNED, claim, Optional.of(why));
        }
        if (!takeOver) {
            throw new RefusedException(refusal, why);
        }
        NodeClaim mine = newClaim();
        store.put(NodeClaim.keyFor(keys), UploadBody.ofBytes(mine.encode()), PutOptions.defaults().withCrc32(crc(mine)));
        return new Result(Outcome.TAKEN_OVER, Optional.of(mine), Optional.of("took node id '" + keys.nodeId()
                + "' over in " + where() + (claim.map(c -> " from " + c.describeHolder()).orElse(""))));
    }

    private String where() {
        return store.describe() + " (" + storeSetting + ")";
    }

    private NodeClaim newClaim() throws IOException {
        String id = OffloadRootId.readOrCreate(root);
        return new NodeClaim(id, keys.nodeId(), hostName(), root.path().toAbsolutePath().normalize().toString(),
                clock.instant().truncatedTo(ChronoUnit.SECONDS));
    }

    private static long crc(NodeClaim claim) {
        CRC32 crc = new CRC32();
        crc.update(claim.encode());
        return crc.getValue();
    }

    /** This machine's name, as claims and leases record it. */
    static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * The claim's bytes, empty when there is none. Listed first, so a store without a claim answers a
     * listing rather than a 404, which would count as a store error in the daemon's metrics.
     */
    private Optional<byte[]> readClaim(String key) throws StoreException {
        ObjectListing listing = store.list(key);
        boolean listed = false;
        while (listing.hasNext()) {
            if (listing.next().key().equals(key)) {
                listed = true;
            }
        }
        if (!listed) {
            return Optional.empty();
        }
        try {
            return Optional.of(store.readAll(key, NodeClaim.MAX_BYTES, OptionalLong.empty()));
        } catch (ObjectNotFoundException absent) {
            return Optional.empty();
        }
    }

    private Optional<String> anyObjectUnder(String prefix) throws StoreException {
        ObjectListing listing = store.list(prefix);
        while (listing.hasNext()) {
            String k = listing.next().key();
            if (k.startsWith(prefix) && !NodeClaim.isClaimKey(prefix, k)) {
                return Optional.of(k);
            }
        }
        return Optional.empty();
    }

    private record Evidence(int withEntries, int present, int unreadable, String missingExample) {
    }

    /** Looks up the newest entry of up to {@value #MAX_SHARDS_ASKED} shards; stops at the first one present. */
    private Evidence evidence() throws IOException, StoreException {
        int withEntries = 0;
        int unreadable = 0;
        String missing = null;
        for (DataRoot.Shard shard : root.streamShards()) {
            Manifest manifest;
            try {
                manifest = ManifestStore.read(shard.directory());
            } catch (IOException | CorruptionException e) {
                unreadable++; // scrub and the passes report it; it proves nothing either way
                continue;
            }
            Optional<ManifestEntry> newest = manifest.newestEntry();
            if (newest.isEmpty()) {
                continue;
            }
            withEntries++;
            ManifestEntry e = newest.get();
            try {
                ObjectHead head = store.head(e.objectKey());
                if (head.size() == e.sizeBytes()
                        && (head.crc32().isEmpty() || head.crc32().getAsLong() == Integer.toUnsignedLong(e.objectCrc32()))) {
                    return new Evidence(withEntries, 1, unreadable, null);
                }
                missing = missing == null ? e.objectKey() + " holds other bytes" : missing;
            } catch (ObjectNotFoundException absent) {
                missing = missing == null ? e.objectKey() + " is absent" : missing;
            }
            if (withEntries >= MAX_SHARDS_ASKED) {
                break;
            }
        }
        return new Evidence(withEntries, 0, unreadable, missing);
    }
}
