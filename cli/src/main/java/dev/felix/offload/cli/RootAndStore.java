package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.NodeId;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The data root, store and node id a repair command works on: from {@code --config FILE} or from
 * {@code --data-dir} and {@code --store}, with {@code --node-id} over both. The node id is never
 * invented here: a repair of a root that lost its {@code node-id} file must be told whose keys it
 * works on.
 *
 * @param root         the data root (it may not exist yet, for restore)
 * @param storeUri     the store URI
 * @param storeSetting where the URI came from, for errors
 * @param keyPrefix    the key prefix offload writes under
 * @param nodeId       the node id when known: {@code --node-id}, the file's {@code node-id},
 *                     {@value NodeId#ENV}, the root's {@code node-id} file, in that order
 * @param nodeIdSource where it came from
 * @param batchSize    keys per delete request
 */
record RootAndStore(Path root, String storeUri, String storeSetting, String keyPrefix, Optional<String> nodeId,
                    NodeIdSource nodeIdSource, int batchSize) {

    /**
     * Where the node id came from: callers tell the cases apart by {@link #kind()}; {@link #label()} names
     * the option, setting or file for output only.
     */
    record NodeIdSource(Kind kind, String label) {
        enum Kind {
            /** {@code --node-id}. */
            OPTION,
            /** The config file's {@code node-id}, or {@value NodeId#ENV}: set outside the root, over its file. */
            SETTING,
            /** The root's own {@code node-id} file (whether or not it exists). */
            ROOT_FILE
        }
    }

    static RootAndStore of(Path config, Path dataDir, String store, String nodeIdOption, Map<String, String> environment)
            throws IOException {
        RootChoice choice = RootChoice.of(config, dataDir, store, environment);
        Path root = choice.root();
        Map<String, String> env = choice.env();
        String prefix = choice.config().map(c -> c.retentionPassSettings().keyPrefix()).orElse("");
        int batch = choice.config().map(c -> c.retentionPassSettings().deleteBatchSize()).orElse(1000);
        Optional<String> id;
        NodeIdSource source;
        try {
            if (nodeIdOption != null) {
                id = Optional.of(NodeId.validate(nodeIdOption, "--node-id"));
                source = new NodeIdSource(NodeIdSource.Kind.OPTION, "--node-id");
            } else if (env.get(NodeId.ENV) != null) {
                id = Optional.of(NodeId.validate(env.get(NodeId.ENV), config != null ? config + ": node-id or "
                        + NodeId.ENV : NodeId.ENV));
                source = new NodeIdSource(NodeIdSource.Kind.SETTING, config != null ? "node-id" : NodeId.ENV);
            } else {
                Path file = new DataRoot(root).identityFile(DataRoot.NODE_ID);
                String text;
                try {
                    text = Files.readString(file, StandardCharsets.UTF_8);
                    id = Optional.of(NodeId.validate(text.endsWith("\n") ? text.substring(0, text.length() - 1) : text,
                            file.toString()));
                } catch (NoSuchFileException absent) {
                    id = Optional.empty();
                }
                source = new NodeIdSource(NodeIdSource.Kind.ROOT_FILE, file.toString());
            }
        } catch (NodeId.InvalidNodeIdException e) {
            throw new FelixOffload.UsageException(e.getMessage());
        }
        return new RootAndStore(root, choice.storeUri(), choice.storeSetting(), prefix, id, source, batch);
    }

    /** The node id, or a usage error saying how to give one. */
    String requireNodeId() {
        return nodeId.orElseThrow(() -> new FelixOffload.UsageException("the data root " + root
                + " has no node-id file and no node id was given; give --node-id (the id its keys start with)"));
    }
}
