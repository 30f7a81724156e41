package dev.felix.offload.cli;

import dev.felix.offload.daemon.ConfigException;
import dev.felix.offload.daemon.DaemonConfig;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Loads {@code --config FILE} for a command; anything wrong with it is a usage error (exit 2). */
final class ConfigOption {

    private ConfigOption() {
    }

    static DaemonConfig load(Path file) {
        try {
            return DaemonConfig.load(file);
        } catch (ConfigException e) {
            throw new FelixOffload.UsageException(e.getMessage());
        } catch (NoSuchFileException e) {
            throw new FelixOffload.UsageException("no configuration file at " + file);
        } catch (IOException e) {
            throw new FelixOffload.UsageException("cannot read the configuration file " + file + ": " + e.getMessage());
        }
    }
}
