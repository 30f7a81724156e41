package dev.felix.offload.reliability;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;

/** {@link BrokerRewritesIT} on Ceph's RADOS Gateway, a production server that keeps no CRC32. */
@ExtendWith(RgwAvailable.class)
class BrokerRewritesOnRgwIT extends BrokerRewritesIT {

    @Override
    protected StoreTarget target(Path work) {
        var server = CephRgw.server();
        return StoreTarget.s3(server, server.createBucket("rewrites"), null, null);
    }

    @Override
    protected String name() {
        return "rgw";
    }
}
