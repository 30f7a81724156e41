package dev.felix.offload.cli;

import dev.felix.offload.daemon.DaemonConfig;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The data root and store a command works on, from {@code --config FILE} or from {@code --data-dir}
 * and {@code --store} (never both): the one reading of those options that repair commands and scrub
 * share.
 *
 * @param root         the data root
 * @param storeUri     the store URI
 * @param storeSetting where the URI came from, for errors
 * @param env          the environment, with the config file's {@code node-id} over it when one is given
 * @param config       the config file, when one was given
 */
record RootChoice(Path root, String storeUri, String storeSetting, Map<String, String> env,
                  Optional<DaemonConfig> config) {

    static RootChoice of(Path config, Path dataDir, String store, Map<String, String> env) throws IOException {
        if (config != null) {
            if (dataDir != null || store != null) {
                throw new FelixOffload.UsageException("give either --config or --data-dir and --store, not both");
            }
            DaemonConfig c = ConfigOption.load(config);
            return new RootChoice(c.dataDir, c.store, c.file + ": store", c.environment(env), Optional.of(c));
        }
        if (dataDir == null || store == null) {
            throw new FelixOffload.UsageException("give --data-dir and --store, or --config");
        }
        return new RootChoice(dataDir, store, "--store", env, Optional.empty());
    }
}
