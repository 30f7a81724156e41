package dev.felix.offload.store.s3;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The contract on the AWS SDK store against Ceph's RADOS Gateway 16.2 (checksum mode auto).
 * RGW accepts an x-amz-checksum-crc32 header but neither checks nor keeps it, and honours
 * If-None-Match, so the probe must find create-only puts and no checksum capability.
 */
@ExtendWith(RgwAvailable.class)
class S3StoreOnRgwTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = CephRgw.server();
        return AwsSdkWire.store(server.settings(server.createBucket("s3-on-rgw")).prefix("contract").build());
    }

    @Override
    protected int expectedPartsOfBigObject() {
        return 8; // 64 MiB in 8 MiB parts (S3Server.settings)
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return EnumSet.of(StoreCapability.USER_METADATA, StoreCapability.CREATE_ONLY_PUT,
                StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT, StoreCapability.MD5_ETAG);
    }

    @Override
    protected Boolean storesCrc32OfBigObject() {
        return false; // RGW keeps no checksums
    }
}
