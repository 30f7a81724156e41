package dev.felix.offload.store.remote;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.s3.AwsSdkWire;

class S3StoreOptionsTest extends RemoteStoreOptionsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return AwsSdkWire.store(settings);
    }

    @Override
    protected ServerTraits traits(ObjectStore store) throws StoreException {
        return ((RemoteStore) store).traits();
    }

    @Override
    protected String damagedBodyRefusal() {
        return "BadDigest";
    }
}
