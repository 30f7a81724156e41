package dev.felix.offload.store.fault;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.remote.RemoteStoreSettings;

class MinioStoreFaultsTest extends StoreFaultsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return MinioWire.store(settings);
    }
}
