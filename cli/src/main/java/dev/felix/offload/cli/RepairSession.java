package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * What a repair command ({@code reidentify}, {@code legacy-keys}, {@code restore}) works under: the
 * data root's lock, the store, and the node claim checked for what the command does, opened in one
 * place and closed together. The work runs inside {@link #run}; its failures come out typed, the same
 * for every command:
 * <ul>
 *   <li>{@link RootLock.HeldException}, unchanged: another pass or a daemon holds the root (each command
 *       says so in its own words and exit code);</li>
 *   <li>{@link NodeClaimCheck.RefusedException}, unchanged: the claim refuses the command's access;</li>
 *   <li>a {@link StoreException}, opening or working, as an {@link IOException} "store: ..." (exit 3).</li>
 * </ul>
 */
final class RepairSession implements AutoCloseable {

    /** What the command does with the store and the root: which locks it takes and how the claim is checked. */
    enum Access {
        /** Only reads the store (legacy-keys list): the claim checked as a reader's, never refused; a warning printed. */
        READ(NodeClaimCheck.Access.READ),
        /** Writes in the store (legacy-keys delete, migrate): refused on any doubt; every write through the node's lease. */
        WRITE(NodeClaimCheck.Access.WRITE),
        /** Writes only the local root from the store (restore): refused on another root's claim. */
        LOCAL_WRITE(NodeClaimCheck.Access.LOCAL_WRITE),
        /**
         * As {@link #LOCAL_WRITE} where the operator allows a take-over (restore {@code --take-over-node-id}):
         * another root's claim is taken over only by {@link #takeOver()}, once the command knows it writes.
         */
        LOCAL_WRITE_TAKING_OVER(NodeClaimCheck.Access.LOCAL_WRITE),
        /**
         * Gives the node up (reidentify): no daemon may run over the root either, the root is locked before
         * the store opens, and no claim is checked (the command asks the node's lease itself).
         */
        GIVE_UP(null);

        private final NodeClaimCheck.Access claim;

        Access(NodeClaimCheck.Access claim) {
            this.claim = claim;
        }
    }

    /** Where what the store's server was found to do is taken from. */
    enum Findings {
        /** Found anew, kept in memory only. */
        IN_MEMORY,
        /** Read from the data root, where offload keeps them (never written by a repair). */
        KEPT_IN_ROOT
    }

    /** The work a command does in a session. */
    @FunctionalInterface
    interface Work<T> {
        T run(RepairSession session) throws IOException, StoreException;
    }

    private final DataRoot root;
    private final Optional<SegmentKeys> keys;
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();
    private ObjectStore store;
    private ObjectStore writeThrough;
    private NodeClaimCheck claim;
    private final PrintWriter err;
    private boolean awaitsTakeOver;

    private RepairSession(Path root, Optional<SegmentKeys> keys, PrintWriter err) {
        this.root = new DataRoot(root);
        this.keys = keys;
        this.err = err;
    }

    /**
     * Opens the store {@code where} names, takes the root's lock(s) and checks the claim for {@code access},
     * runs {@code work}, and closes it all. The node id must be known, except to {@link Access#GIVE_UP}.
     */
    static <T> T run(RootAndStore where, Access access, Findings findings, PrintWriter err, Work<T> work)
            throws IOException {
        Optional<SegmentKeys> keys = access == Access.GIVE_UP ? Optional.empty()
                : Optional.of(new SegmentKeys(where.keyPrefix(), where.requireNodeId()));
        try (RepairSession session = new RepairSession(where.root(), keys, err)) {
            if (access == Access.GIVE_UP) {
                session.lock(access);
                session.openStore(where, findings);
            } else {
                session.openStore(where, findings);
                session.lock(access);
                session.checkClaim(where, access);
            }
            return work.run(session);
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
    }

    /** As {@link #run} for {@link Access#GIVE_UP} without a store: the root's locks only. */
    static <T> T runWithoutStore(Path root, PrintWriter err, Work<T> work) throws IOException {
        try (RepairSession session = new RepairSession(root, Optional.empty(), err)) {
            session.lock(Access.GIVE_UP);
            return work.run(session);
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
    }

    private void lock(Access access) throws IOException {
        if (access == Access.GIVE_UP) {
            opened.push(RootLock.acquireForDaemon(root.path()));
        }
        opened.push(RootLock.acquire(root.path()));
    }

    private void openStore(RootAndStore where, Findings findings) throws IOException {
        store = findings == Findings.KEPT_IN_ROOT
                ? Stores.openExisting(where.storeUri(), where.storeSetting(), where.root(), Stores.Use.READER)
                : Stores.openExisting(where.storeUri(), where.storeSetting());
        opened.push(store);
        writeThrough = store;
    }

    private void checkClaim(RootAndStore where, Access access) throws IOException, StoreException {
        claim = new NodeClaimCheck(root, store, keys.orElseThrow(), where.storeSetting(), Clock.systemUTC());
        try {
            NodeClaimCheck.Result result = claim.run(access.claim, false);
            result.warning().ifPresent(this::warn);
            if (access == Access.WRITE) {
                writeThrough = result.fenced(store);
            }
        } catch (NodeClaimCheck.RefusedException refused) {
            if (access != Access.LOCAL_WRITE_TAKING_OVER) {
                throw refused;
            }
            awaitsTakeOver = true;
        }
    }

    private void warn(String warning) {
        err.println("felix-offload: warning: " + warning);
    }

    /** The data root. */
    DataRoot root() {
        return root;
    }

    /** The keys of the node the command works on (not known to {@link Access#GIVE_UP}). */
    SegmentKeys keys() {
        return keys.orElseThrow(() -> new IllegalStateException("no node keys in a session that gives the node up"));
    }

    /** True when the session has a store (all but {@link #runWithoutStore}). */
    boolean hasStore() {
        return store != null;
    }

    /**
     * The store to work with: for {@link Access#WRITE}, every put and delete going through the node's
     * lease; else as opened.
     */
    ObjectStore store() {
        if (writeThrough == null) {
            throw new IllegalStateException("a session without a store");
        }
        return writeThrough;
    }

    /** True when another root's claim refused {@link Access#LOCAL_WRITE_TAKING_OVER}, and waits for {@link #takeOver()}. */
    boolean awaitsTakeOver() {
        return awaitsTakeOver;
    }

    /** Takes the node's claim over from the root that holds it, now that the command knows it writes. */
    void takeOver() throws IOException, StoreException {
        if (!awaitsTakeOver) {
            throw new IllegalStateException("nothing to take over");
        }
        claim.run(NodeClaimCheck.Access.LOCAL_WRITE, true).warning().ifPresent(this::warn);
    }

    /** Closes the store and the locks, the last opened first; all of them, whatever one of them throws. */
    @Override
    public void close() throws IOException {
        Exception failed = null;
        while (!opened.isEmpty()) {
            try {
                opened.pop().close();
            } catch (Exception e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed instanceof IOException io) {
            throw io;
        }
        if (failed instanceof RuntimeException unchecked) {
            throw unchecked;
        }
        if (failed != null) {
            throw new IOException(failed);
        }
    }
}
