package dev.felix.offload.cli;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.StoreUriException;

import java.io.IOException;

/** Opens the store a {@code --store} URI names; a malformed URI is a usage error naming the bad part. */
final class Stores {

    private Stores() {
    }

    static ObjectStore open(String uri) throws IOException {
        StoreUri parsed;
        try {
            parsed = StoreUri.parse(uri);
        } catch (StoreUriException e) {
            throw new FelixOffload.UsageException("--store: " + e.getMessage());
        }
        // Remote credentials come from the environment or the SDK's default chain, never the command line.
        return parsed.open();
    }
}
