package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.StoreFindingsFile;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.remote.FindingsKeep;
import dev.felix.offload.store.remote.ProbeOptions;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.Bucket;
import dev.felix.offload.store.BucketMissingException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.StoreUriException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Opens the store a {@code --store} URI names; a malformed URI is a usage error naming the bad part.
 *
 * <p>A remote store keeps what the capability probe finds about its server in the data root
 * ({@link StoreFindingsFile}), so only the first command against an endpoint and bucket pays for the
 * probe; read-only commands never probe (it writes) and never write that file.
 */
final class Stores {

    /** What a command does with the store, for how the server's traits are learnt and kept. */
    enum Use {
        /** Writes or deletes objects: probes where nothing fresh is kept, and keeps what it learns. */
        WRITER,
        /** A writer asked to probe once now ({@code --probe-store}), whatever is kept. */
        WRITER_PROBING,
        /** Only reads the store (read, scrub, restore): never probes, never writes the root's file. */
        READER
    }

    private Stores() {
    }

    static ObjectStore open(String uri) throws IOException {
        return open(uri, "--store");
    }

    /** Opens a store an offload may create (a filesystem store's directory); {@code setting} names it in errors. */
    static ObjectStore open(String uri, String setting) throws IOException {
        return open(uri, setting, null, Use.WRITER);
    }

    /**
     * As {@link #open(String, String)}, keeping probe findings in {@code dataDir} (none kept where null).
     */
    static ObjectStore open(String uri, String setting, Path dataDir, Use use) throws IOException {
        // Remote credentials come from the environment or the SDK's default chain, never the command line.
        StoreUri parsed = parse(uri, setting);
        if (parsed.kind() == StoreUri.Kind.FILE) {
            Path root = parsed.root().orElseThrow();
            if (Files.exists(root) && !Files.isDirectory(root)) {
                throw new FelixOffload.UsageException(setting + ": " + root
                        + " is a file; a filesystem store is a directory (give a directory, or a path that does not exist yet)");
            }
        }
        return parsed.open(EmbeddedRun.storeCredentials(), probe(dataDir, use));
    }

    static ObjectStore openExisting(String uri, String setting) throws IOException {
        return openExisting(uri, setting, null, Use.READER);
    }

    /**
     * Opens a store that must already be there, for commands that only read from it or delete from it
     * (read, scrub, retention): a filesystem store's directory is not created, so a mistyped path is an
     * error naming {@code setting} rather than an empty store that reports every object missing.
     */
    static ObjectStore openExisting(String uri, String setting, Path dataDir, Use use) throws IOException {
        StoreUri parsed = parse(uri, setting);
        if (parsed.kind() == StoreUri.Kind.FILE) {
            Path root = parsed.root().orElseThrow();
            if (!Files.isDirectory(root)) {
                throw new FelixOffload.UsageException(setting + ": no store directory at " + root
                        + " (a filesystem store is created by the first offload into it)");
            }
        }
        return parsed.open(EmbeddedRun.storeCredentials(), probe(dataDir, use));
    }

    private static ProbeOptions probe(Path dataDir, Use use) {
        FindingsKeep keep = dataDir == null ? FindingsKeep.inMemory() : new StoreFindingsFile(new DataRoot(dataDir));
        return switch (use) {
            case READER -> ProbeOptions.reader(keep);
            case WRITER_PROBING -> ProbeOptions.writer(keep, true);
            default -> ProbeOptions.writer(keep, false);
        };
    }

    /**
     * Refuses a remote store whose bucket does not exist, as a usage error naming {@code setting} (exit 2),
     * before the command writes anything to the data root or the store: one listing of at most one key,
     * under this node's prefix when the root has a node id already (a policy may allow no wider listing),
     * else under the store's. A filesystem store is checked where it is opened. Any other failure of that
     * request is the command's own first store failure, thrown for it to report as it reports those.
     *
     * @param env where {@value NodeId#ENV} is looked up; the node id is never created here
     */
    static void requireBucket(ObjectStore store, String setting, DataRoot root, Map<String, String> env, String keyPrefix)
            throws IOException, StoreException {
        Optional<Bucket> bucket = store.bucket();
        if (bucket.isEmpty()) {
            return;
        }
        String prefix = "";
        if (env.get(NodeId.ENV) != null || Files.exists(root.identityFile(DataRoot.NODE_ID))) {
            prefix = new SegmentKeys(keyPrefix, NodeId.resolve(root, env)).nodePrefix();
        }
        try {
            bucket.get().requireExists(prefix);
        } catch (BucketMissingException e) {
            throw new FelixOffload.UsageException(setting + ": the bucket does not exist: " + store.describe() + ": "
                    + e.getMessage() + "; create the bucket, or correct the store URI (nothing was written)");
        }
    }

    private static StoreUri parse(String uri, String setting) {
        try {
            return StoreUri.parse(uri);
        } catch (StoreUriException e) {
            throw new FelixOffload.UsageException(setting + ": " + e.getMessage());
        }
    }
}
