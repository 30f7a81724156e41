package dev.felix.offload.store.fault;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.s3.AwsSdkWire;

class S3StoreFaultsTest extends StoreFaultsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return AwsSdkWire.store(settings);
    }
}
