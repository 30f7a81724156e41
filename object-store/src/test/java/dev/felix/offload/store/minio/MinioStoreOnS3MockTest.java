package dev.felix.offload.store.minio;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import java.util.EnumSet;
import java.util.Set;

/** The contract on the MinIO-client store against Adobe S3Mock (checksum mode auto). */
class MinioStoreOnS3MockTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = S3Servers.s3mock();
        return MinioWire.store(server.settings(server.createBucket("minio-on-s3mock")).prefix("contract/minio").build());
    }

    @Override
    protected int expectedPartsOfBigObject() {
        return 8; // 64 MiB in 8 MiB parts (S3Server.settings)
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return EnumSet.allOf(StoreCapability.class);
    }

    @Override
    protected Boolean storesCrc32OfBigObject() {
        return true; // S3Mock keeps part CRC32s; the store proves the whole CRC32 from them
    }
}
