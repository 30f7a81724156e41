package dev.felix.offload.store.remote;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Every test of {@link IncompleteUploadsTest} on Ceph's RADOS Gateway through both stores. Both
 * sources are hidden with RGW behind them, the second one too although its name says S3Mock: it
 * stands for "a server whose listing pages and abort answers are those of real S3".
 */
@ExtendWith(RgwAvailable.class)
class IncompleteUploadsOnRgwTest extends IncompleteUploadsTest {
    static Stream<Arguments> storesAndServers() {
        return Stream.of(Arguments.of(SDK, CephRgw.server()), Arguments.of(MINIO, CephRgw.server()));
    }

    static Stream<Arguments> storesOnS3Mock() {
        return storesAndServers();
    }
}
