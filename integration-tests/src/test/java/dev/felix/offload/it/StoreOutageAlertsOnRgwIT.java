package dev.felix.offload.it;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link StoreOutageAlertsIT} with Ceph's RADOS Gateway behind the proxy, and the other kind of
 * outage: the store keeps accepting connections and never answers (a hung server, a network that
 * drops what it carries), so every request ends at the daemon's read timeout instead of at once.
 */
@ExtendWith(RgwAvailable.class)
class StoreOutageAlertsOnRgwIT extends StoreOutageAlertsIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }

    @Override
    protected void outage(FaultProxy proxy) {
        proxy.policy((method, target) -> new FaultProxy.NoAnswer());
    }
}
