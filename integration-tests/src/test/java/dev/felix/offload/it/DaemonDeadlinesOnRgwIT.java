package dev.felix.offload.it;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every case of {@link DaemonDeadlinesIT} with Ceph's RADOS Gateway behind the proxy. */
@ExtendWith(RgwAvailable.class)
class DaemonDeadlinesOnRgwIT extends DaemonDeadlinesIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }
}
