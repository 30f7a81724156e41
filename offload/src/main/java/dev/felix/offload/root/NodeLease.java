package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Fencing of the writers of a node prefix: tells apart two copies of one data root (a cloned volume,
 * a restored snapshot, {@code cp -a} of the whole root), which carry the same {@link OffloadRootId}
 * and node id, so the {@link NodeClaim} passes for both.
 *
 * <h2>The lease</h2>
 * Every writing pass (offload, retention with its sweep, {@code forget-shard --yes},
 * {@code legacy-keys delete|migrate}, each pass of a daemon) checks the node's lease when it starts,
 * under the root's {@link RootLock}, and stops there if another copy holds it (a daemon starting, and
 * {@code restore}, only check it); just before its first put or delete under the prefix it advances
 * the lease ({@link Fence}; at once on a take-over), so a pass with nothing to write writes none:
 * <ol>
 *   <li>it lists {@code [prefix/]<node id>/node.lease.} and takes the highest epoch there;</li>
 *   <li>that lease must be the one this root last wrote, as its {@value #FILE_NAME} file remembers
 *       (or, with none in the store, nothing to compare); anything else means another copy of this
 *       root wrote under the prefix since: {@link NodeClaimCheck.Refusal#COPIED_ROOT}, before anything
 *       is written;</li>
 *   <li>it writes the next lease it means to take (epoch + 1 and 8 fresh random bytes, the token)
 *       into {@value #FILE_NAME} as pending, durably ({@link DurableFiles});</li>
 *   <li>it puts {@code node.lease.<epoch, 20 digits>.<token>}: a key of its own, which no other copy
 *       can write, holding the writer's host, path and root id for messages;</li>
 *   <li>it lists again: its lease must be alone at the top (no other at its epoch or above);</li>
 *   <li>it remembers the lease as held (durably), and deletes the older ones.</li>
 * </ol>
 * Every later delete of the pass goes through {@link Fence#fence} too: each is preceded by a listing
 * of the leases, and refused unless this root's lease is still alone at the top; so is every put,
 * except the offload pass's ({@link Fence#fenceForOffload}), which confirms the lease once before
 * each manifest write instead.
 *
 * <h2>What is guaranteed, and where</h2>
 * <ul>
 *   <li><b>Two copies never both pass step 5</b>, on every store whose listing shows a completed
 *       put, which is every store run here (S3 since 2020, MinIO, Ceph RGW, S3Mock, S3Proxy, the
 *       filesystem store): each copy writes a key nobody else writes and lists after it, so of two
 *       copies advancing at the same moment the one that lists second sees the other's lease (both
 *       may see both, and both stop). No conditional write is involved, so this holds where the
 *       server ignores {@code If-None-Match} and {@code If-Match} (S3Proxy) as much as where it
 *       honours them; the lease put asks for no-replace anyway.</li>
 *   <li><b>A copy behind the store stops before it writes.</b> Once one copy has advanced the lease
 *       after the copies parted, the other finds a lease it did not write at step 2 and stops with
 *       nothing written or deleted (exit 2, naming both hosts and paths).</li>
 *   <li><b>A copy mid-pass stops at its next delete, and records nothing more.</b> A pass that was
 *       running when the other copy advanced learns it at its next delete (each is preceded by a
 *       listing of the leases), and the offload pass before each manifest write that records copies
 *       ({@link Fence#confirm}): its uploads in between are create-only and named by no manifest, so
 *       nothing is recorded, and no local segment released, on the strength of a put made after
 *       another copy took the node. Such uploads are in the root's journal of pending writes; their
 *       records stay in the local segments. (A stopping process sends no request: the copies whose
 *       uploads began before the stop are recorded unconfirmed, and that pass unlinks nothing more;
 *       the next pass checks the lease when it starts, before it may unlink anything.) (The offload pass once listed the leases before every
 *       put too: one more request per segment, which made an S3 command slower than
 *       {@code rclone copy} and checked nothing a put's outcome depends on.) A request already sent is
 *       not recalled: a batch of deletes sent just before the other copy advanced may land after it.
 *       Stores cannot check a token on each request, so no client-side fencing closes that window.</li>
 *   <li><b>A crash between the put and remembering it</b> leaves the lease pending in
 *       {@value #FILE_NAME}: the next pass finds its own lease at the top and takes it. A copy made in
 *       that moment carries the same pending lease; whichever copy advances next after that is the
 *       holder, and the other stops at its next write.</li>
 *   <li>Which copy is "the original" cannot be known: both are the same bytes. The one that writes
 *       first after they part keeps the node; the other is the copy, and {@code felix-offload
 *       reidentify} gives it its own identity.</li>
 * </ul>
 */
public final class NodeLease {

    private static final Logger LOG = LoggerFactory.getLogger(NodeLease.class);

    /** What a root remembers of its leases, at its top level. */
    public static final String FILE_NAME = "offload.lease";
    /** Lease keys begin with this under the node prefix; no segment key can (shard names hold no dot). */
    public static final String KEY_PART = "node.lease.";
    private static final String BODY_MAGIC = "felix-offload node lease 1";
    /** The most bytes a lease file, here or in the store, holds. */
    static final int MAX_BYTES = 64 * 1024;
    private static final SecureRandom RANDOM = new SecureRandom();

    private NodeLease() {
    }

    /** One lease: its epoch and the token only its writer knows. */
    public record Stamp(long epoch, String token) {
        public Stamp {
            if (epoch < 1) {
                throw new IllegalArgumentException("lease epoch " + epoch);
            }
            if (!token.matches("[0-9a-f]{16}")) {
                throw new IllegalArgumentException("lease token " + token);
            }
        }

        static Stamp next(long after) {
            byte[] b = new byte[8];
            RANDOM.nextBytes(b);
            return new Stamp(after + 1, HexFormat.of().formatHex(b));
        }

        @Override
        public String toString() {
            return epoch + "." + token;
        }
    }

    /** The key of a lease under {@code nodePrefix}. */
    public static String keyOf(String nodePrefix, Stamp s) {
        String digits = Long.toString(s.epoch());
        return nodePrefix + KEY_PART + "0".repeat(20 - digits.length()) + digits + "." + s.token();
    }

    /** Whether {@code key} is a lease key of the node whose prefix is {@code nodePrefix}. */
    public static boolean isLeaseKey(String nodePrefix, String key) {
        return parseKey(nodePrefix, key).isPresent();
    }

    static Optional<Stamp> parseKey(String nodePrefix, String key) {
        if (!key.startsWith(nodePrefix + KEY_PART)) {
            return Optional.empty();
        }
        String rest = key.substring(nodePrefix.length() + KEY_PART.length());
        if (!rest.matches("[0-9]{20}\\.[0-9a-f]{16}")) {
            return Optional.empty();
        }
        long epoch;
        try {
            epoch = Long.parseLong(rest.substring(0, 20));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return epoch < 1 ? Optional.empty() : Optional.of(new Stamp(epoch, rest.substring(21)));
    }

    /** The leases under the node prefix, lowest epoch first. */
    static List<Stamp> listed(ObjectStore store, String nodePrefix) throws StoreException {
        List<Stamp> out = new ArrayList<>();
        ObjectListing listing = store.list(nodePrefix + KEY_PART);
        while (listing.hasNext()) {
            ObjectSummary o = listing.next();
            parseKey(nodePrefix, o.key()).ifPresent(out::add);
        }
        out.sort(Comparator.comparingLong(Stamp::epoch).thenComparing(Stamp::token));
        return out;
    }

    /** The leases at the highest epoch listed; empty when there are none. */
    static List<Stamp> top(List<Stamp> listed) {
        if (listed.isEmpty()) {
            return List.of();
        }
        long high = listed.get(listed.size() - 1).epoch();
        return listed.stream().filter(s -> s.epoch() == high).toList();
    }

    // ---- what the root remembers ----

    /**
     * Forgets every lease this root remembers (a new identity has none), durably. What it wrote in
     * the store stays: those leases are the old identity's.
     */
    public static void forget(DataRoot root) throws IOException {
        Path file = root.path().resolve(FILE_NAME);
        if (Files.deleteIfExists(file)) {
            DurableFiles.fsyncDirectory(root.path());
        }
    }

    /** The leases this root remembers under {@code nodePrefix}: held and pending. */
    public static List<Stamp> remembered(DataRoot root, String nodePrefix) throws IOException {
        LeaseMemory m = LeaseMemory.read(root);
        List<Stamp> out = new ArrayList<>();
        Optional.ofNullable(m.held().get(nodePrefix)).ifPresent(out::add);
        Optional.ofNullable(m.pending().get(nodePrefix)).ifPresent(out::add);
        return out;
    }

    /** Where the node's lease stands for this root. */
    public enum Standing {
        /** The store holds no lease of the node. */
        NONE,
        /** This root's lease is alone at the top: it wrote under the prefix last. */
        THIS_ROOT,
        /** Another copy's lease is at the top. */
        ANOTHER_COPY,
        /** Two leases at the top epoch: copies advanced at the same moment (this root's among them or not). */
        CONFLICT
    }

    /** Where the node's lease stands for {@code root}; reads only. */
    public static Standing standing(DataRoot root, ObjectStore store, String nodePrefix)
            throws IOException, StoreException {
        LeaseMemory memory = LeaseMemory.read(root);
        List<Stamp> top = top(listed(store, nodePrefix));
        if (top.isEmpty()) {
            return Standing.NONE;
        }
        if (top.size() > 1) {
            return Standing.CONFLICT;
        }
        return memory.mine(nodePrefix, top.get(0)) ? Standing.THIS_ROOT : Standing.ANOTHER_COPY;
    }

    /**
     * Deletes the leases this root wrote under {@code nodePrefix} (as its {@value #FILE_NAME}
     * remembers them), for a root giving up the node: a lease of its left at the top beside another
     * copy's would stop that copy too. Answers the keys deleted. Only for a root that is not the
     * node's sole holder ({@link #standing}): the caller checks.
     */
    public static List<String> release(DataRoot root, ObjectStore store, String nodePrefix)
            throws IOException, StoreException {
        LeaseMemory memory = LeaseMemory.read(root);
        List<String> mine = new ArrayList<>();
        for (Stamp s : listed(store, nodePrefix)) {
            if (memory.mine(nodePrefix, s)) {
                mine.add(keyOf(nodePrefix, s));
            }
        }
        if (!mine.isEmpty()) {
            store.deleteAll(mine);
        }
        return mine;
    }

    // ---- advancing ----

    /** For tests: seams just before the lease's put, and between it and the listing after it. */
    interface Step {
        default void beforePut(Stamp next) throws IOException, StoreException {
        }

        void afterPut(Stamp written) throws IOException, StoreException;

        Step NONE = s -> { };
    }

    /** Who wrote a lease, from its body, for messages. */
    private record Writer(String host, String root, String rootId, String written) {
        String describe() {
            return "host " + host + " at " + root + " (root id " + rootId + ", written " + written + ")";
        }
    }

    /**
     * Advances the node's lease for a writing pass (see the class comment) and answers the lease
     * taken. The caller holds the root's {@link RootLock}.
     *
     * @param takeOver take the lease whoever holds it ({@code --take-over-node-id}); two copies
     *                 taking it at the same moment still stop each other
     * @throws NodeClaimCheck.RefusedException {@link NodeClaimCheck.Refusal#COPIED_ROOT} when another
     *                                         copy of this root wrote under the prefix
     */
    static Stamp advance(DataRoot root, ObjectStore store, SegmentKeys keys, String where, boolean takeOver, Clock clock,
                         Step step) throws IOException, StoreException {
        String prefix = keys.nodePrefix();
        LeaseMemory memory = LeaseMemory.read(root);
        List<Stamp> before = listed(store, prefix);
        List<Stamp> top = top(before);
        if (!takeOver && !top.isEmpty()) {
            if (top.size() > 1) {
                throw refused(store, keys, where, root, memory, top, "two copies of this data root advanced its lease "
                        + "at the same moment", before);
            }
            if (!memory.mine(prefix, top.get(0))) {
                throw refused(store, keys, where, root, memory, top, "another copy of this data root wrote under it "
                        + "since this root last did", before);
            }
        }
        if (top.isEmpty() && memory.held().containsKey(prefix)) {
            LOG.warn("{}: the store {} holds no lease of node '{}', though this root last held lease {}; taking a new one",
                    root.path(), where, keys.nodeId(), memory.held().get(prefix).epoch());
        }
        if (top.size() == 1 && top.get(0).equals(memory.pending().get(prefix))) {
            // A crash after this root put that lease and before it noted it held: it is this root's (it
            // stands alone at the top). Noted held before the next one is noted pending, or a second
            // crash before the next put would leave this root remembering neither.
            memory = memory.withHeld(prefix, top.get(0));
        }
        long highest = before.isEmpty() ? 0 : before.get(before.size() - 1).epoch();
        long remembered = Math.max(epochOf(memory.held().get(prefix)), epochOf(memory.pending().get(prefix)));
        Stamp next = Stamp.next(Math.max(highest, remembered));
        memory = memory.withPending(prefix, next);
        memory.write(root);
        String key = keyOf(prefix, next);
        step.beforePut(next);
        try {
            store.put(key, UploadBody.ofBytes(body(root, keys, next, clock)), PutOptions.defaults().withNoReplace());
        } catch (PreconditionFailedException impossible) {
            // A fresh random token at a key nobody else writes: only this root's own retried put meets it.
            LOG.debug("{} exists already: this root's own put, retried", key);
        }
        step.afterPut(next);
        List<Stamp> after = listed(store, prefix);
        List<Stamp> atOrAbove = after.stream().filter(s -> s.epoch() >= next.epoch() && !s.equals(next)).toList();
        if (!after.contains(next) || !atOrAbove.isEmpty()) {
            // Left in place: the other copy sees it too and stops, whichever of the two listed last.
            throw refused(store, keys, where, root, memory, atOrAbove.isEmpty() ? top(after) : atOrAbove,
                    after.contains(next) ? "two copies of this data root advanced its lease at the same moment"
                            : "another copy of this data root removed this root's lease", after);
        }
        memory = memory.withHeld(prefix, next);
        memory.write(root);
        List<String> older = new ArrayList<>();
        for (Stamp s : after) {
            if (s.epoch() < next.epoch()) {
                older.add(keyOf(prefix, s));
            }
        }
        if (!older.isEmpty()) {
            try {
                store.deleteAll(older);
            } catch (StoreException e) {
                LOG.warn("older leases of node '{}' not deleted ({}); the next pass tries again", keys.nodeId(),
                        e.getMessage());
            }
        }
        return next;
    }

    /**
     * Checks, without writing, that this root holds the node's lease (or that there is none): a
     * writer of the local root only (restore).
     */
    static void verify(DataRoot root, ObjectStore store, SegmentKeys keys, String where)
            throws IOException, StoreException {
        String prefix = keys.nodePrefix();
        LeaseMemory memory = LeaseMemory.read(root);
        List<Stamp> listed = listed(store, prefix);
        List<Stamp> top = top(listed);
        if (top.isEmpty()) {
            return;
        }
        if (top.size() > 1 || !memory.mine(prefix, top.get(0))) {
            throw refused(store, keys, where, root, memory, top, top.size() > 1
                    ? "two copies of this data root advanced its lease at the same moment"
                    : "another copy of this data root wrote under it since this root last did", listed);
        }
    }

    /** For a reader: why a writer of this root would be stopped now, or empty. Writes nothing. */
    static Optional<String> readerWarning(DataRoot root, ObjectStore store, SegmentKeys keys, String where)
            throws StoreException {
        try {
            verify(root, store, keys, where);
            return Optional.empty();
        } catch (NodeClaimCheck.RefusedException e) {
            return Optional.of(e.getMessage());
        } catch (IOException e) {
            return Optional.of(e.getMessage());
        }
    }

    private static long epochOf(Stamp s) {
        return s == null ? 0 : s.epoch();
    }

    private static byte[] body(DataRoot root, SegmentKeys keys, Stamp s, Clock clock) throws IOException {
        String text = BODY_MAGIC + "\n"
                + "epoch: " + s.epoch() + "\n"
                + "token: " + s.token() + "\n"
                + "node-id: " + oneLine(keys.nodeId()) + "\n"
                + "root-id: " + OffloadRootId.read(root).orElse("none") + "\n"
                + "host: " + oneLine(NodeClaimCheck.hostName()) + "\n"
                + "root: " + oneLine(root.path().toAbsolutePath().normalize().toString()) + "\n"
                + "written: " + clock.instant().truncatedTo(ChronoUnit.SECONDS) + "\n";
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String oneLine(String value) {
        StringBuilder b = new StringBuilder(value.length());
        value.codePoints().forEach(cp -> b.appendCodePoint(Character.isISOControl(cp) ? '?' : cp));
        return b.toString();
    }

    private static Writer writerOf(ObjectStore store, String key) {
        try {
            String text = new String(store.readAll(key, MAX_BYTES, OptionalLong.empty()), StandardCharsets.UTF_8);
            Map<String, String> fields = new LinkedHashMap<>();
            for (String line : text.split("\n")) {
                int colon = line.indexOf(": ");
                if (colon > 0) {
                    fields.putIfAbsent(line.substring(0, colon), line.substring(colon + 2));
                }
            }
            return new Writer(fields.getOrDefault("host", "?"), fields.getOrDefault("root", "?"),
                    fields.getOrDefault("root-id", "?"), fields.getOrDefault("written", "?"));
        } catch (ObjectNotFoundException gone) {
            return new Writer("?", "?", "?", "deleted since");
        } catch (StoreException e) {
            return new Writer("?", "?", "?", "unreadable: " + e.getMessage());
        }
    }

    private static NodeClaimCheck.RefusedException refused(ObjectStore store, SegmentKeys keys, String where,
                                                           DataRoot root, LeaseMemory memory, List<Stamp> others, String what,
                                                           List<Stamp> listed) {
        String prefix = keys.nodePrefix();
        StringBuilder who = new StringBuilder();
        for (Stamp s : others) {
            if (memory.mine(prefix, s)) {
                continue;
            }
            if (who.length() > 0) {
                who.append("; ");
            }
            who.append("lease ").append(s.epoch()).append(" of ").append(writerOf(store, keyOf(prefix, s)).describe());
        }
        Path path = root.path().toAbsolutePath().normalize();
        Stamp mine = memory.held().get(prefix);
        String self = "this root, host " + NodeClaimCheck.hostName() + " at " + path + ", "
                + (mine == null ? "remembers no lease there" : "last held lease " + mine.epoch());
        String message = "node id '" + keys.nodeId() + "' in the store " + where + ": " + what + ": "
                + (who.length() == 0 ? "leases " + listed : who) + "; " + self + ". Two copies of one data root (a "
                + "cloned volume, a restored snapshot, cp -a) offloading as one node would delete and replace each "
                + "other's objects, so this one stops before it writes or deletes anything there. If this root is "
                + "the copy, give it its own identity: felix-offload reidentify --data-dir " + path
                + "; if it is the original and the other copy no longer runs, run once with --take-over-node-id";
        return new NodeClaimCheck.RefusedException(NodeClaimCheck.Refusal.COPIED_ROOT, message);
    }

    /**
     * The node's lease as one pass holds it: taken ({@link #advance}) just before the pass's first put
     * or delete under the prefix, and checked before each one after that, so a pass that finds
     * nothing to write writes no lease either. {@link #fence} gives a store that does this itself.
     */
    public static final class Fence {
        private final DataRoot root;
        private final ObjectStore store;
        private final SegmentKeys keys;
        private final String where;
        private final Clock clock;
        private final Step step;
        private volatile Stamp stamp;

        Fence(DataRoot root, ObjectStore store, SegmentKeys keys, String where, Clock clock, Step step, Stamp taken) {
            this.root = root;
            this.store = store;
            this.keys = keys;
            this.where = where;
            this.clock = clock;
            this.step = step;
            this.stamp = taken;
        }

        /** The lease taken, empty before the pass's first write. */
        public Optional<Stamp> stamp() {
            return Optional.ofNullable(stamp);
        }

        /**
         * Before a put or delete under the node's prefix: takes the lease at the pass's first (see the
         * class comment of {@link NodeLease}), else checks that this root's lease is still alone at
         * the top (one listing). Fails with {@link NodeClaimCheck.RefusedException} when another copy
         * of this root took it; a lease memory that cannot be written is an {@link java.io.UncheckedIOException}.
         */
        public void beforeWrite() throws StoreException {
            if (!take()) {
                check();
            }
        }

        /** Takes the lease if no write of the pass took it yet; true when this call took it. */
        private boolean take() throws StoreException {
            if (stamp != null) {
                return false;
            }
            synchronized (this) {
                if (stamp != null) {
                    return false;
                }
                try {
                    stamp = advance(root, store, keys, where, false, clock, step);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return true;
            }
        }

        /**
         * Before a create-only put whose object is recorded only after {@link #confirm}: takes the lease
         * at the pass's first write, as {@link #beforeWrite} does, and lists nothing at the later ones
         * (nor do the puts that waited for the first to take it).
         */
        public void beforeCreate() throws StoreException {
            take();
        }

        /**
         * Before recording copies that puts through {@link #fenceForOffload} uploaded: this root's lease
         * must still be alone at the top (one listing), else {@link NodeClaimCheck.RefusedException};
         * takes the lease if no write took it yet.
         */
        public void confirm() throws StoreException {
            beforeWrite();
        }

        /**
         * For what may change something under the prefix but usually finds nothing to change
         * (aborting a crash's incomplete uploads): checks the lease as {@link #beforeWrite} would,
         * but takes none, so a pass that only looked writes no lease.
         */
        public void beforeMaybeWrite() throws StoreException {
            if (stamp != null) {
                check();
                return;
            }
            try {
                verify(root, store, keys, where);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        private void check() throws StoreException {
            Stamp held = stamp;
            List<Stamp> listed = listed(store, keys.nodePrefix());
            List<Stamp> top = top(listed);
            if (top.size() == 1 && top.get(0).equals(held)) {
                return;
            }
            LeaseMemory memory = new LeaseMemory(Map.of(keys.nodePrefix(), held), Map.of());
            throw refused(store, keys, where, root, memory, top, top.isEmpty()
                    ? "this root's lease was removed from the store while it worked"
                    : "another copy of this data root took the lease while this one worked", listed);
        }

        /** {@code inner} (the store the lease lives in, or a view of it), whose every put and delete goes through {@link #beforeWrite}. */
        public ObjectStore fence(ObjectStore inner) {
            return new FencedStore(inner, this, true);
        }

        /**
         * {@code inner} as the offload pass writes through it: deletes, copies and aborts as
         * {@link #fence} does; puts only take the lease at the first ({@link #beforeCreate}), since the
         * pass {@link #confirm}s it before it records what they uploaded.
         */
        public ObjectStore fenceForOffload(ObjectStore inner) {
            return new FencedStore(inner, this, false);
        }

        @Override
        public String toString() {
            return stamp == null ? "lease of node '" + keys.nodeId() + "', not taken yet"
                    : "lease " + stamp.epoch() + " of node '" + keys.nodeId() + "'";
        }
    }
}
