package dev.felix.offload.store.remote;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.minio.MinioWire;

class MinioStoreOptionsTest extends RemoteStoreOptionsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return MinioWire.store(settings);
    }

    @Override
    protected ServerTraits traits(ObjectStore store) throws StoreException {
        return ((RemoteStore) store).traits();
    }

    @Override
    protected String damagedBodyRefusal() {
        return "XAmzContentSHA256Mismatch";
    }

    @Override
    protected boolean leavesCheckedBodiesUnsigned() {
        return false;
    }
}
