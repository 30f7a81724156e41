package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.contract.ContractData;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class S3StoreOptionsTest extends RemoteStoreOptionsTest {
    @Override
    protected ObjectStore open(RemoteStoreSettings settings) {
        return AwsSdkWire.store(settings);
    }

    @Override
    protected ServerTraits traits(ObjectStore store) throws StoreException {
        return ((RemoteStore) store).traits();
    }

    @Override
    protected String damagedBodyRefusal() {
        return "BadDigest";
    }

    @Override
    protected boolean leavesCheckedBodiesUnsigned() {
        return true;
    }

    /**
     * S3Mock checks no signature, so the signing of an unsigned body bound by its CRC32 header is
     * shown on S3Proxy (which checks SigV4): told that the server checks CRC32s, the SDK's wire sends
     * a single put and a part with the plain CRC32 header, unsigned-payload, and the server takes
     * both signatures.
     */
    @Test
    void aBodyBoundByItsCrc32HeaderGoesUnsignedWithASignatureTheServerTakes() throws Exception {
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("unsigned-crc");
        byte[] body = ContractData.bytes(6000, 13);
        long crc = ContractData.crc32(body);
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                RemoteStore store = AwsSdkWire.store(server.settings(bucket).endpoint(recorder.endpoint()).build())) {
            S3Wire wire = store.wire();
            wire.bodyChecksumCheckedByServer(S3Wire.BodyChecksum.CRC32);
            String key = store.settings().fullKey("single");
            wire.putObject(key, UploadBody.ofBytes(body), new S3Wire.Upload(Map.of(), Map.of(), OptionalLong.of(crc),
                    Optional.empty(), false));
            String parted = store.settings().fullKey("parted");
            String uploadId = wire.createMultipartUpload(parted, new S3Wire.Upload(Map.of(), Map.of(), OptionalLong.empty(),
                    Optional.empty(), false), true);
            wire.uploadPart(parted, uploadId, 1, UploadBody.ofBytes(body), 0, body.length,
                    Optional.of(Crc32Text.toBase64(crc)), Optional.empty());
            wire.abortMultipartUpload(parted, uploadId);
            assertThat(recorder.exchanges("PUT", t -> t.endsWith("/single") || t.contains("partNumber=1")))
                    .hasSize(2).allSatisfy(x -> assertThat(x.headers())
                            .containsEntry("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
                            .containsEntry("x-amz-checksum-crc32", Crc32Text.toBase64(crc))
                            .doesNotContainKey("x-amz-trailer").doesNotContainKey("content-md5"));
            assertThat(store.readAll("single", 7000, OptionalLong.of(crc))).isEqualTo(body);
        }
    }
}
