package dev.felix.offload.store.remote;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.s3.S3Store;

class S3StoreOptionsTest extends RemoteStoreOptionsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return S3Store.open(settings);
    }

    @Override
    protected ServerTraits traits(ObjectStore store) throws StoreException {
        return ((S3Store) store).traits();
    }
}
