package dev.felix.offload.retention;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Every test of {@link RetentionOnS3Test} (remote retention, deleted streams, the orphan sweep and
 * its dry run) on Ceph's RADOS Gateway through both clients; the source below hides the parent's.
 */
@ExtendWith(RgwAvailable.class)
class RetentionOnRgwTest extends RetentionOnS3Test {
    static Stream<Arguments> backends() {
        return Stream.of(
                Arguments.of(new Backend("SDK on RGW", CephRgw.server(), false)),
                Arguments.of(new Backend("MinIO client on RGW", CephRgw.server(), true)));
    }
}
