package dev.felix.offload.it;

import org.junit.jupiter.api.parallel.Isolated;
import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every case of {@link DaemonDeadlinesIT} with Ceph's RADOS Gateway behind the proxy. */
@Isolated("it holds the daemon to its deadlines: nothing else runs beside it")
@ExtendWith(RgwAvailable.class)
class DaemonDeadlinesOnRgwIT extends DaemonDeadlinesIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }
}
