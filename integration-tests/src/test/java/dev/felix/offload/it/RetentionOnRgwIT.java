package dev.felix.offload.it;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link RetentionIT} through the runnable jar against Ceph's RADOS Gateway (SigV4 checked). */
@ExtendWith(RgwAvailable.class)
class RetentionOnRgwIT extends RetentionIT {
    @Override
    protected S3Server server() {
        return CephRgw.server();
    }
}
