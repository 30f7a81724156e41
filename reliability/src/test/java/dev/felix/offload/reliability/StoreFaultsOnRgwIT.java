package dev.felix.offload.reliability;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every scenario of {@link StoreFaultsIT} with Ceph's RADOS Gateway behind the fault proxy: a
 * production server that keeps no CRC32, so every copy the passes make is proven by a read-back,
 * and a damaged GET body meets verification as well as tiered reads.
 */
@ExtendWith(RgwAvailable.class)
class StoreFaultsOnRgwIT extends StoreFaultsIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }
}
