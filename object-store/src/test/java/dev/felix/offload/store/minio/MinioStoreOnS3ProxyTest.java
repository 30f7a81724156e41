package dev.felix.offload.store.minio;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import java.util.EnumSet;
import java.util.Set;

/** The contract on the MinIO-client store against S3Proxy (SigV4 checked; no checksums, no If-None-Match). */
class MinioStoreOnS3ProxyTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = S3Servers.s3proxy();
        return MinioWire.store(server.settings(server.createBucket("minio-on-s3proxy")).build());
    }

    @Override
    protected int expectedPartsOfBigObject() {
        return 8; // 64 MiB in 8 MiB parts (S3Server.settings)
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return EnumSet.of(StoreCapability.USER_METADATA, StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT,
                StoreCapability.MD5_ETAG);
    }

    @Override
    protected Boolean storesCrc32OfBigObject() {
        return false; // S3Proxy keeps no checksums
    }
}
