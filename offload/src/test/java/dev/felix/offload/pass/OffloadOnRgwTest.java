package dev.felix.offload.pass;

import dev.felix.offload.copy.VerifyMode;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.RgwAvailable;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Every test of {@link OffloadOnS3Test} (the pass and tiered reads, a crash before and after the
 * commit point, rot in an object, segments above the multipart threshold) on Ceph's RADOS Gateway,
 * through both clients. The sources below hide the parent's of the same names, so the inherited
 * tests run on RGW only. RGW keeps no CRC32, so every copy is proven by reading it back.
 */
@ExtendWith(RgwAvailable.class)
class OffloadOnRgwTest extends OffloadOnS3Test {
    static Stream<Arguments> backends() {
        return Stream.of(
                Arguments.of(new Backend("SDK on RGW", CephRgw.server(), false)),
                Arguments.of(new Backend("MinIO client on RGW", CephRgw.server(), true)));
    }

    static Stream<Arguments> multipartBackends() {
        return Stream.of(
                // RGW keeps no CRC32 but checks Content-MD5 and answers md5-of-part-md5s-N ETags
                Arguments.of(new Backend("SDK on RGW", CephRgw.server(), false), VerifyMode.AUTO, "content-md5"),
                Arguments.of(new Backend("MinIO client on RGW", CephRgw.server(), true), VerifyMode.AUTO, "content-md5"));
    }
}
