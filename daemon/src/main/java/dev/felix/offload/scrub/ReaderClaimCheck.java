package dev.felix.offload.scrub;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/**
 * The node-claim check of a command that only reads the store ({@code read}, {@code scrub}): it
 * runs before the command's first store request (scrub's at once; read's only when the read reaches
 * below the local base, since a read of local records needs nothing from the store) and never refuses
 * or writes; what a writer would be refused for comes back as a warning to print.
 */
public final class ReaderClaimCheck {

    private ReaderClaimCheck() {
    }

    /**
     * The check's result, empty when the root has no node id yet (nothing it reads can be another
     * root's then). The node id is never created here.
     */
    public static Optional<NodeClaimCheck.Result> run(DataRoot root, ObjectStore store, Map<String, String> env,
                                               String keyPrefix, String storeSetting) throws IOException, StoreException {
        if (env.get(NodeId.ENV) == null && !Files.exists(root.identityFile(DataRoot.NODE_ID))) {
            return Optional.empty();
        }
        SegmentKeys keys = new SegmentKeys(keyPrefix, NodeId.resolve(root, env));
        return Optional.of(new NodeClaimCheck(root, store, keys, storeSetting, Clock.systemUTC())
                .run(NodeClaimCheck.Access.READ, false));
    }
}
