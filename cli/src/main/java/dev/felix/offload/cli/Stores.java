package dev.felix.offload.cli;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.StoreUriException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opens the store a {@code --store} URI names; a malformed URI is a usage error naming the bad part. */
final class Stores {

    private Stores() {
    }

    static ObjectStore open(String uri) throws IOException {
        return open(uri, "--store");
    }

    /** Opens a store an offload may create (a filesystem store's directory); {@code setting} names it in errors. */
    static ObjectStore open(String uri, String setting) throws IOException {
        // Remote credentials come from the environment or the SDK's default chain, never the command line.
        StoreUri parsed = parse(uri, setting);
        if (parsed.kind() == StoreUri.Kind.FILE) {
            Path root = parsed.root().orElseThrow();
            if (Files.exists(root) && !Files.isDirectory(root)) {
                throw new FelixOffload.UsageException(setting + ": " + root
                        + " is a file; a filesystem store is a directory (give a directory, or a path that does not exist yet)");
            }
        }
        return parsed.open();
    }

    /**
     * Opens a store that must already be there, for commands that only read from it or delete from it
     * (read, scrub, retention): a filesystem store's directory is not created, so a mistyped path is an
     * error naming {@code setting} rather than an empty store that reports every object missing.
     */
    static ObjectStore openExisting(String uri, String setting) throws IOException {
        StoreUri parsed = parse(uri, setting);
        if (parsed.kind() == StoreUri.Kind.FILE) {
            Path root = parsed.root().orElseThrow();
            if (!Files.isDirectory(root)) {
                throw new FelixOffload.UsageException(setting + ": no store directory at " + root
                        + " (a filesystem store is created by the first offload into it)");
            }
        }
        return parsed.open();
    }

    private static StoreUri parse(String uri, String setting) {
        try {
            return StoreUri.parse(uri);
        } catch (StoreUriException e) {
            throw new FelixOffload.UsageException(setting + ": " + e.getMessage());
        }
    }
}
