package dev.felix.offload.store.s3;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import java.util.EnumSet;
import java.util.Set;

/** The contract on the AWS SDK store against Adobe S3Mock (checksum mode auto). */
class S3StoreOnS3MockTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = S3Servers.s3mock();
        return AwsSdkWire.store(server.settings(server.createBucket("s3-on-s3mock")).prefix("contract").build());
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
