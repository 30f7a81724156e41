package dev.felix.offload.cli;

import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;

/**
 * {@code --config}, or {@code --data-dir} and {@code --store}: the data root and store a repair
 * command works on, worded the same for every such command.
 */
final class RootOptions {

    @Option(names = "--config", paramLabel = "FILE", description = "Take data-dir, store and node-id from this file.")
    Path config;

    @Option(names = "--data-dir", paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--store", paramLabel = "URI", description = "The store, as for offload.")
    String store;

    /**
     * The root, store and node id these options name, with {@code nodeId} ({@code --node-id}, or null) over the
     * rest; {@code environment} is the command's (where {@code FELIX_NODE_ID} is looked up).
     */
    RootAndStore resolve(String nodeId, java.util.Map<String, String> environment) throws IOException {
        return RootAndStore.of(config, dataDir, store, nodeId, environment);
    }
}
