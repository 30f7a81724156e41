package dev.felix.offload.store.remote;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.minio.MinioStore;

class MinioStoreOptionsTest extends RemoteStoreOptionsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return MinioStore.open(settings);
    }

    @Override
    protected ServerTraits traits(ObjectStore store) throws StoreException {
        return ((MinioStore) store).traits();
    }
}
