package dev.felix.offload.store.fault;

import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every fault of {@link StoreFaultsTest} through the MinIO-client store, with Ceph's RADOS Gateway behind the proxy for all of them. */
@ExtendWith(RgwAvailable.class)
class MinioStoreFaultsOnRgwTest extends MinioStoreFaultsTest {
    @Override
    protected S3Server readWriteServer() {
        return CephRgw.server();
    }

    @Override
    protected S3Server multipartServer() {
        return CephRgw.server();
    }

    @Override
    protected Set<StoreCapability> probedCapabilities() {
        return EnumSet.of(StoreCapability.USER_METADATA, StoreCapability.CREATE_ONLY_PUT, // RGW keeps no CRC32
                StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT, StoreCapability.MD5_ETAG); // but checks Content-MD5
    }
}
