package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.FormerNodeIds;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.root.OffloadRootId;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload reidentify}: gives a copy of a data root (a cloned volume, a restored
 * snapshot, {@code cp -a} of the whole root) an identity of its own, so that it and the root it was
 * copied from can both offload into one store: a new {@code offload-root-id}, a new node id (its
 * {@code node-id} file), and no lease (the old node's leases are the other copy's).
 *
 * <p>Its manifests are left as they are: their entries still name the objects they name, under the
 * old node id's prefix. The old node id goes into {@code offload.former-node-ids}, so this root keeps
 * reading them and never deletes them (the root it was copied from may still need them, and deletes
 * them by its own retention); {@code felix-offload legacy-keys migrate} copies them under the new
 * node id where this root must keep them longer.
 *
 * <p>With the store ({@code --store} or {@code --config}), it first makes sure this root is the copy
 * that was stopped, not the one holding the node's lease (whose objects since the copy the other
 * copy's manifests do not name: giving that one up would leave them to the other copy's orphan
 * sweep), and removes the leases this root wrote there, so the other copy is not stopped by them.
 * It refuses while a daemon or a pass runs over the root. It writes nothing else in the store.
 */
@Command(name = "reidentify", mixinStandardHelpOptions = true,
        description = {"Give a copy of a data root (a cloned volume, a restored snapshot) its own identity: a new "
                + "offload root id and node id. Its manifests keep naming the objects they name under the old node id, "
                + "which it never deletes. See docs/ownership.md."})
final class ReidentifyCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "Take data-dir, store and node-id from this file.")
    Path config;

    @Option(names = "--data-dir", paramLabel = "ROOT", description = "The data root to give a new identity.")
    Path dataDir;

    @Option(names = "--store", paramLabel = "URI", description = "The store it offloads to: checked first (this root "
            + "must not hold the node's lease), and its leases there removed.")
    String store;

    @Option(names = "--new-node-id", paramLabel = "ID", description = "The new node id (default: a random one).")
    String newNodeId;

    @Override
    public Integer call() throws IOException {
        Path root;
        Optional<RootAndStore> where = Optional.empty();
        if (config != null || store != null) {
            where = Optional.of(RootAndStore.of(config, dataDir, store, null, FelixOffload.environment(spec)));
            root = where.get().root();
        } else if (dataDir != null) {
            root = dataDir;
        } else {
            throw new FelixOffload.UsageException("give --data-dir (and --store, to check the store and release this "
                    + "root's leases there), or --config");
        }
        if (!Files.isDirectory(root)) {
            throw new FelixOffload.UsageException("no data root directory at " + root);
        }
        DataRoot dataRoot = new DataRoot(root);
        String oldNode = where.flatMap(RootAndStore::nodeId).orElse(null);
        if (oldNode == null) {
            oldNode = readNodeIdFile(dataRoot).orElseThrow(() -> new FelixOffload.UsageException("the data root "
                    + root + " has no node-id file: it has never offloaded under a node id of its own, and needs no "
                    + "new identity"));
        }
        String newNode = newNodeId == null ? NodeId.random() : validated(newNodeId);
        if (newNode.equals(oldNode)) {
            throw new FelixOffload.UsageException("--new-node-id: '" + newNode + "' is the node id the root has now");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        String old = oldNode;
        Optional<RootAndStore> at = where;
        RepairSession.Work<Integer> work = session -> giveUp(session, at, old, newNode, out, err);
        try {
            return at.isPresent()
                    ? RepairSession.run(at.get(), RepairSession.Access.GIVE_UP, RepairSession.Findings.IN_MEMORY, err, work)
                    : RepairSession.runWithoutStore(root, err, work);
        } catch (RootLock.HeldException e) {
            throw new FelixOffload.UsageException(e.getMessage() + "; stop it first");
        }
    }

    /**
     * Under the root's locks (and with the store, where one was given: checked first, and this root's
     * leases there removed), gives the root its new identity and says what it did.
     */
    private int giveUp(RepairSession session, Optional<RootAndStore> where, String oldNode, String newNode,
            PrintWriter out, PrintWriter err) throws IOException, StoreException {
        DataRoot dataRoot = session.root();
        if (session.hasStore()) {
            String oldPrefix = new SegmentKeys(where.orElseThrow().keyPrefix(), oldNode).nodePrefix();
            ObjectStore objectStore = session.store();
            NodeLease.Standing standing = NodeLease.standing(dataRoot, objectStore, oldPrefix);
            if (standing == NodeLease.Standing.THIS_ROOT) {
                throw new FelixOffload.UsageException("this root holds the lease of node '" + oldNode + "' in "
                        + objectStore.describe() + ": it wrote there last, and any other copy of it was stopped "
                        + "before it wrote. Give the other copy its own identity instead (reidentify it); this one "
                        + "keeps the node");
            }
            List<String> released = NodeLease.release(dataRoot, objectStore, oldPrefix);
            if (!released.isEmpty()) {
                out.printf("released this root's leases of node '%s': %s%n", oldNode, String.join(", ", released));
            }
        }
        Optional<String> oldRoot = OffloadRootId.read(dataRoot);
        // In this order, so a run cut short is finished by running it again: the old node id is kept as
        // this root's former one before anything stops naming it.
        FormerNodeIds.add(dataRoot, oldNode);
        String newRoot = OffloadRootId.renew(dataRoot);
        NodeId.write(dataRoot, newNode);
        NodeLease.forget(dataRoot);
        int entries = inheritedEntries(dataRoot, where.map(RootAndStore::keyPrefix).orElse(""), oldNode);
        out.printf("root id %s -> %s, node id %s -> %s%n", oldRoot.orElse("(none)"), newRoot, oldNode, newNode);
        out.printf("%d manifest entries still name objects under node '%s': this root reads them and never deletes "
                + "them; the root it was copied from may delete them by its own retention. `felix-offload legacy-keys "
                + "migrate` copies them under node '%s'.%n", entries, oldNode, newNode);
        boolean setOutside = where.map(w -> w.nodeIdSource().kind() != RootAndStore.NodeIdSource.Kind.ROOT_FILE)
                .orElse(false);
        if (FelixOffload.environment(spec).get(NodeId.ENV) != null || setOutside) {
            err.printf("felix-offload: warning: this root's node id comes from %s, which overrides its node-id file: "
                    + "set it to %s before the next pass (until then every pass is refused, as the old node's claim "
                    + "names the other root)%n", where.map(w -> w.nodeIdSource().label()).orElse(NodeId.ENV), newNode);
        }
        out.flush();
        err.flush();
        return FelixOffload.EXIT_OK;
    }

    private static String validated(String id) {
        try {
            return NodeId.validate(id, "--new-node-id");
        } catch (NodeId.InvalidNodeIdException e) {
            throw new FelixOffload.UsageException(e.getMessage());
        }
    }

    private static Optional<String> readNodeIdFile(DataRoot root) throws IOException {
        try {
            String text = Files.readString(root.identityFile(DataRoot.NODE_ID));
            return Optional.of(validated(text.endsWith("\n") ? text.substring(0, text.length() - 1) : text));
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        }
    }

    /** Entries of the root's shards naming keys under the old node's prefix. */
    private static int inheritedEntries(DataRoot root, String keyPrefix, String oldNode) throws IOException {
        String prefix = new SegmentKeys(keyPrefix, oldNode).nodePrefix();
        int n = 0;
        for (DataRoot.Shard shard : root.streamShards()) {
            try {
                for (ManifestEntry e : ManifestStore.read(shard.directory()).entries()) {
                    if (e.objectKey().startsWith(prefix)) {
                        n++;
                    }
                }
            } catch (NoSuchFileException | CorruptionException e) {
                // no manifest, or one scrub and the passes report
            }
        }
        return n;
    }
}
