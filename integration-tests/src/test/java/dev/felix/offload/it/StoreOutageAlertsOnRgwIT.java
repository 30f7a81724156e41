package dev.felix.offload.it;

import org.junit.jupiter.api.parallel.Isolated;
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
@Isolated("its series are scraped at a pace promtool reads as time: nothing else runs beside it")
@ExtendWith(RgwAvailable.class)
class StoreOutageAlertsOnRgwIT extends StoreOutageAlertsIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }

    /** A call fails only at the 2 s read timeout here: a scrape a second keeps a minute a minute. */
    @Override
    protected long outagePauseMillis() {
        return 1000;
    }

    @Override
    protected void outage(FaultProxy proxy) {
        proxy.policy((method, target) -> new FaultProxy.NoAnswer());
    }
}
