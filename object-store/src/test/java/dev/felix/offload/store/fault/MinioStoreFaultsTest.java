package dev.felix.offload.store.fault;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.minio.MinioStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;

class MinioStoreFaultsTest extends StoreFaultsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return MinioStore.open(settings);
    }
}
