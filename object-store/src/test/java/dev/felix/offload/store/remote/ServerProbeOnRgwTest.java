package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.contract.ContractData;
import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.RgwAvailable;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * What Ceph's RADOS Gateway 16.2 does differently from S3Mock and S3Proxy, as each store's probe
 * and requests meet it, through both clients: it takes an {@code x-amz-checksum-crc32} header and
 * neither checks nor keeps it (so nothing may be believed proven by it), honours
 * {@code If-None-Match: *}, and refuses a body whose signed SHA-256 does not match. None of it is
 * decided by the server's name: the probe finds it.
 */
@ExtendWith(RgwAvailable.class)
class ServerProbeOnRgwTest {
    private static final long MIB = 1024 * 1024;

    record Client(String name, Function<RemoteStoreSettings, ObjectStore> open, Function<ObjectStore, ServerTraits> traits) {
        @Override
        public String toString() {
            return name;
        }
    }

    @TempDir
    Path scratch;

    static Stream<Arguments> clients() {
        return Stream.of(
                Arguments.of(new Client("S3Store", AwsSdkWire::store, s -> unchecked(() -> ((RemoteStore) s).traits()))),
                Arguments.of(new Client("MinioStore", MinioWire::store, s -> unchecked(() -> ((RemoteStore) s).traits()))));
    }

    private interface Traits {
        ServerTraits get() throws StoreException;
    }

    private static ServerTraits unchecked(Traits t) {
        try {
            return t.get();
        } catch (StoreException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void theProbeFindsCreateOnlyAndNoChecksumsAndLeavesNothingBehind(Client client) throws Exception {
        S3Server rgw = CephRgw.server();
        String bucket = rgw.createBucket("probe-rgw");
        try (ObjectStore store = client.open().apply(rgw.settings(bucket).prefix("p").build())) {
            assertThat(client.traits().apply(store)).isEqualTo(new ServerTraits(true, false, false, true, true, true));
            assertThat(store.capabilities()).containsExactlyInAnyOrder(StoreCapability.USER_METADATA,
                    StoreCapability.CREATE_ONLY_PUT, StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT, StoreCapability.MD5_ETAG);
        }
        assertThat(rgw.admin().listObjectsV2(b -> b.bucket(bucket)).contents()).extracting(S3Object::key).isEmpty();
    }

    /** Why the probe matters: RGW takes a wrong CRC32 without a word, so the store must not claim a stored one. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void aWrongCrc32IsTakenSilentlySoNoStoredCrc32IsClaimed(Client client) throws Exception {
        S3Server rgw = CephRgw.server();
        String bucket = rgw.createBucket("wrong-crc-rgw");
        byte[] body = ContractData.bytes(4096, 3);
        long crc = ContractData.crc32(body);
        try (ObjectStore store = client.open().apply(rgw.settings(bucket).checksumMode(ChecksumPolicy.ALWAYS).build())) {
            store.put("k", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(crc ^ 0x10));
            assertThat(store.head("k").size()).isEqualTo(body.length);
            assertThat(store.readAll("k", 8192, OptionalLong.of(crc))).isEqualTo(body);
        }
        try (ObjectStore store = client.open().apply(rgw.settings(bucket).build())) {
            assertThat(store.head("k").crc32()).as("auto mode asks for no CRC32 RGW does not keep").isEmpty();
            assertThatThrownBy(() -> store.put("k", UploadBody.ofBytes(body), PutOptions.defaults().withCreateOnly(true)))
                    .isInstanceOf(PreconditionFailedException.class);
        }
    }

    /** A part whose bytes change on the wire is refused (RGW checks the signed SHA-256), and no object appears. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void aPartDamagedOnTheWireIsRefusedAndLeavesNoObject(Client client) throws Exception {
        S3Server rgw = CephRgw.server();
        String bucket = rgw.createBucket("parted-rgw");
        Path file = scratch.resolve("eleven.bin");
        Files.write(file, ContractData.bytes((int) (11 * MIB), 11));
        long crc = ContractData.crc32(Files.readAllBytes(file));
        try (FaultProxy faults = FaultProxy.start(rgw.endpoint());
                ObjectStore store = client.open().apply(rgw.settings(bucket).multipart(5 * MIB, 5 * MIB, 2)
                        .endpoint(faults.endpoint()).build())) {
            assertThat(store.put("whole", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)).parts()).isEqualTo(3);
            assertThat(store.head("whole").crc32()).as("no part CRC32s kept: read to verify").isEmpty();
            assertThat(store.readAll("whole", (int) (12 * MIB), OptionalLong.of(crc))).hasSize((int) (11 * MIB));
            faults.inject("PUT", t -> t.contains("partNumber=2"), new FaultProxy.FlipRequestByte(false), 1);
            assertThatThrownBy(() -> store.put("flipped", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)))
                    .isInstanceOf(IntegrityRejectedException.class);
            assertThatThrownBy(() -> store.head("flipped")).isInstanceOf(ObjectNotFoundException.class);
        }
    }
}
