package dev.felix.offload.it;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.parallel.ResourceLock;
import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every case of {@link DaemonDeadlinesIT} with Ceph's RADOS Gateway behind the proxy. */
@ResourceLock(FelixJar.TIMED_DAEMON)
@Order(4) // one after another from the start, beside the other classes (see the pom): 35 s
@ExtendWith(RgwAvailable.class)
class DaemonDeadlinesOnRgwIT extends DaemonDeadlinesIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }
}
