package dev.felix.offload.store.fs;

import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.contract.ObjectStoreContract;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/** A decorator that changes nothing is the store it wraps: every request of the contract goes through it. */
class ForwardingStoreContractTest extends ObjectStoreContract {
    @TempDir
    static Path storeRoot;

    /** Forwards everything, and the copy role the contract asks for. */
    private static final class Unchanged extends ForwardingObjectStore implements ObjectCopier {
        Unchanged(ObjectStore store) {
            super(store);
        }

        @Override
        public Optional<ObjectCopier> copier() {
            return delegate().copier().map(c -> this);
        }

        @Override
        public PutResult copy(String sourceKey, String targetKey) throws StoreException {
            return delegate().copier().orElseThrow().copy(sourceKey, targetKey);
        }
    }

    @Override
    protected ObjectStore openStore() throws Exception {
        return new Unchanged(FilesystemStore.open(storeRoot.resolve("root")));
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return EnumSet.complementOf(EnumSet.of(StoreCapability.CRC32_KEPT_BY_SERVER,
                StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT, StoreCapability.MD5_ETAG));
    }

    @Override
    protected Boolean storesCrc32OfBigObject() {
        return true;
    }
}
