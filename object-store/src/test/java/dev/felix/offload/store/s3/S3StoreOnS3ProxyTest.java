package dev.felix.offload.store.s3;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import java.util.EnumSet;
import java.util.Set;

/**
 * The contract on the AWS SDK store against S3Proxy (filesystem-nio2, SigV4 checked, checksum
 * mode auto). S3Proxy keeps no checksums, accepts a wrong CRC32 and ignores If-None-Match, so the
 * probe must find none of those capabilities.
 */
class S3StoreOnS3ProxyTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = S3Servers.s3proxy();
        return AwsSdkWire.store(server.settings(server.createBucket("s3-on-s3proxy")).build());
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
