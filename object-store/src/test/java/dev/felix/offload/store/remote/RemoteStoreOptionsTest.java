package dev.felix.offload.store.remote;

import software.amazon.awssdk.services.s3.model.ChecksumMode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.ChecksumMismatchException;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.contract.ContractData;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Settings of the remote stores seen from the server's side: server-side encryption and storage
 * class arrive with every upload (single and multipart), and the checksum modes send, verify and
 * read back CRC32s as documented, with the auto probe finding what each server does.
 */
abstract class RemoteStoreOptionsTest {
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path scratch;

    protected abstract ObjectStore open(RemoteStoreSettings settings);

    protected abstract ServerTraits traits(ObjectStore store) throws StoreException;

    /**
     * The error code S3Proxy answers an upload body damaged on its way with: the MinIO client signs
     * every body's SHA-256 over plain HTTP (XAmzContentSHA256Mismatch); the SDK store leaves a body
     * with a checked Content-MD5 out of the signature, so the MD5 refuses it (BadDigest).
     */
    protected abstract String damagedBodyRefusal();

    /**
     * Whether this client leaves a body whose checksum header the server checks out of the signature
     * ({@code UNSIGNED-PAYLOAD}); the MinIO client hashes every body over plain HTTP whatever it carries.
     */
    protected abstract boolean leavesCheckedBodiesUnsigned();

    private static RemoteStoreSettings.Builder small(S3Server server, String bucket) {
        return server.settings(bucket).multipart(5 * MIB, 5 * MIB, 2);
    }

    private Path sixMiB() throws Exception {
        Path file = scratch.resolve("six.bin");
        Files.write(file, ContractData.bytes((int) (6 * MIB), 6));
        return file;
    }

    @Test
    void encryptionAndStorageClassArriveWithSingleAndMultipartUploads() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("sse-s3");
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(recorder.endpoint())
                        .encryption(Encryption.s3Managed()).storageClass("STANDARD_IA").build())) {
            store.put("single", UploadBody.ofBytes(new byte[] {1, 2, 3}));
            store.put("parted", UploadBody.ofFile(sixMiB()));
            HeadObjectResponse head = server.admin().headObject(b -> b.bucket(bucket).key("single"));
            assertThat(head.serverSideEncryptionAsString()).isEqualTo("AES256");
            assertThat(head.storageClassAsString()).isEqualTo("STANDARD_IA");
            // S3Mock does not carry these from CreateMultipartUpload to the object, so the request itself is checked.
            List<FaultProxy.Exchange> creates = recorder.exchanges("POST", t -> t.contains("/parted?uploads"));
            assertThat(creates).hasSize(1);
            assertThat(creates.get(0).headers()).containsEntry("x-amz-server-side-encryption", "AES256")
                    .containsEntry("x-amz-storage-class", "STANDARD_IA");
            assertThat(server.admin().headObject(b -> b.bucket(bucket).key("parted")).contentLength()).isEqualTo(6 * MIB);
        }
    }

    @Test
    void kmsEncryptionSendsTheKeyId() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("sse-kms");
        String keyId = S3Servers.S3MOCK_KMS_KEY;
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(recorder.endpoint()).encryption(Encryption.kms(keyId)).build())) {
            store.put("single", UploadBody.ofBytes(new byte[] {1, 2, 3}));
            store.put("parted", UploadBody.ofFile(sixMiB()));
            HeadObjectResponse head = server.admin().headObject(b -> b.bucket(bucket).key("single"));
            assertThat(head.serverSideEncryptionAsString()).isEqualTo("aws:kms");
            assertThat(head.ssekmsKeyId()).isEqualTo(keyId);
            List<FaultProxy.Exchange> creates = recorder.exchanges("POST", t -> t.contains("/parted?uploads"));
            assertThat(creates).hasSize(1);
            assertThat(creates.get(0).headers()).containsEntry("x-amz-server-side-encryption", "aws:kms")
                    .containsEntry("x-amz-server-side-encryption-aws-kms-key-id", keyId);
        }
    }

    private static String contentMd5(byte[] bytes, int from, int to) {
        return java.util.Base64.getEncoder().encodeToString(dev.felix.offload.store.BodyDigests.md5()
                .digest(java.util.Arrays.copyOfRange(bytes, from, to)));
    }

    @Test
    void everyUploadRequestCarriesItsContentMd5AndTheAnswerProvesTheCopy() throws Exception {
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("content-md5");
        byte[] single = ContractData.bytes(3000, 8);
        byte[] parted = Files.readAllBytes(sixMiB());
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(recorder.endpoint()).build())) {
            assertThat(store.put("single", UploadBody.ofBytes(single)).contentMd5Proven()).isTrue();
            PutResult two = store.put("parted", UploadBody.ofFile(sixMiB()));
            assertThat(two.parts()).isEqualTo(2);
            assertThat(two.contentMd5Proven()).isTrue();
            assertThat(recorder.exchanges("PUT", t -> t.endsWith("/single")))
                    .singleElement().satisfies(x -> assertThat(x.headers()).containsEntry("content-md5",
                            contentMd5(single, 0, single.length)));
            assertThat(recorder.exchanges("PUT", t -> t.contains("partNumber=1")))
                    .singleElement().satisfies(x -> assertThat(x.headers()).containsEntry("content-md5",
                            contentMd5(parted, 0, (int) (5 * MIB))));
            assertThat(recorder.exchanges("PUT", t -> t.contains("partNumber=2")))
                    .singleElement().satisfies(x -> assertThat(x.headers()).containsEntry("content-md5",
                            contentMd5(parted, (int) (5 * MIB), parted.length)));
        }
    }

    @Test
    void underKmsEtagsAreNoMd5sSoNoPutIsProvenByOne() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("kms-md5");
        try (ObjectStore store = open(small(server, bucket).encryption(Encryption.kms(S3Servers.S3MOCK_KMS_KEY)).build())) {
            assertThat(store.capabilities()).contains(StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT)
                    .doesNotContain(StoreCapability.MD5_ETAG);
            assertThat(store.put("single", UploadBody.ofBytes(new byte[] {4, 5, 6})).contentMd5Proven()).isFalse();
            assertThat(store.put("parted", UploadBody.ofFile(sixMiB())).contentMd5Proven()).isFalse();
            // the CRC32 the server checks proves a copy whatever the ETags are
            assertThat(store.put("single", UploadBody.ofBytes(new byte[] {4, 5, 6})).crc32Proven()).isTrue();
        }
    }

    @Test
    void whereTheServerChecksCrc32sNoRequestCarriesAnMd5AndTheAcceptanceProvesTheCopy() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("crc-proof");
        Path singleFile = scratch.resolve("single.bin");
        byte[] single = ContractData.bytes(3000, 9);
        Files.write(singleFile, single);
        Path partedFile = sixMiB();
        byte[] parted = Files.readAllBytes(partedFile);
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(recorder.endpoint()).build())) {
            PutResult one = store.put("single", UploadBody.ofFile(singleFile),
                    PutOptions.defaults().withCrc32(ContractData.crc32(single)));
            assertThat(one.crc32Proven()).isTrue();
            assertThat(one.contentMd5Proven()).isFalse();
            PutResult two = store.put("parted", UploadBody.ofFile(partedFile),
                    PutOptions.defaults().withCrc32(ContractData.crc32(parted)));
            assertThat(two.parts()).isEqualTo(2);
            assertThat(two.crc32Proven()).isTrue();
            assertThat(two.contentMd5Proven()).isFalse();

            List<FaultProxy.Exchange> uploads = new java.util.ArrayList<>(recorder.exchanges("PUT", t -> t.endsWith("/single")));
            assertThat(uploads).hasSize(1);
            assertThat(uploads.get(0).headers()).containsEntry("x-amz-checksum-crc32",
                    Crc32Text.toBase64(ContractData.crc32(single)));
            List<FaultProxy.Exchange> parts = recorder.exchanges("PUT", t -> t.contains("partNumber="));
            assertThat(parts).hasSize(2);
            assertThat(parts.get(0).headers()).containsKey("x-amz-checksum-crc32");
            uploads.addAll(parts);
            for (FaultProxy.Exchange x : uploads) {
                assertThat(x.headers()).as(x.target()).doesNotContainKey("content-md5")
                        .doesNotContainKey("x-amz-trailer").doesNotContainEntry("content-encoding", "aws-chunked");
                assertThat("UNSIGNED-PAYLOAD".equals(x.headers().get("x-amz-content-sha256"))).as(x.target())
                        .isEqualTo(leavesCheckedBodiesUnsigned());
            }
            // the probe's own puts stay signed in full
            assertThat(recorder.exchanges("PUT", t -> t.contains("probe"))).isNotEmpty().allSatisfy(x ->
                    assertThat(x.headers().get("x-amz-content-sha256")).isNotEqualTo("UNSIGNED-PAYLOAD"));
            assertThat(store.readAll("single", 4000, OptionalLong.of(ContractData.crc32(single)))).isEqualTo(single);
            assertThat(store.head("parted").crc32()).hasValue(ContractData.crc32(parted));
        }
    }

    @Test
    void aSingleBodyDamagedOnItsWayIsRefusedOnEitherServer() throws Exception {
        byte[] body = ContractData.bytes(100_000, 12);
        Path file = scratch.resolve("damaged.bin");
        Files.write(file, body);
        for (S3Server server : List.of(S3Servers.s3mock(), S3Servers.s3proxy())) {
            String bucket = server.createBucket("damaged-single");
            try (FaultProxy proxy = FaultProxy.start(server.endpoint());
                    ObjectStore store = open(small(server, bucket).endpoint(proxy.endpoint()).build())) {
                store.capabilities();
                proxy.inject("PUT", t -> t.endsWith("/flipped"), new FaultProxy.FlipRequestByte(false), 1);
                // S3Mock checks the CRC32 header; S3Proxy the signature or the Content-MD5
                assertThatThrownBy(() -> store.put("flipped", UploadBody.ofFile(file),
                        PutOptions.defaults().withCrc32(ContractData.crc32(body))))
                        .isInstanceOf(IntegrityRejectedException.class);
                assertThatThrownBy(() -> store.head("flipped")).isInstanceOf(ObjectNotFoundException.class);
            }
        }
    }

    @Test
    void autoProbeFindsWhatEachServerDoesAndLeavesNothingBehind() throws Exception {
        S3Server mock = S3Servers.s3mock();
        String mockBucket = mock.createBucket("probe-mock");
        try (ObjectStore store = open(mock.settings(mockBucket).prefix("p").build())) {
            assertThat(traits(store)).isEqualTo(new ServerTraits(true, true, true, true, true, true));
        }
        assertThat(mock.admin().listObjectsV2(b -> b.bucket(mockBucket)).contents()).isEmpty();

        S3Server proxy = S3Servers.s3proxy();
        String proxyBucket = proxy.createBucket("probe-proxy");
        try (ObjectStore store = open(proxy.settings(proxyBucket).build())) {
            // S3Proxy (with ignore-unknown-headers) takes the header but neither checks nor keeps it, and ignores If-None-Match;
            // it does check Content-MD5 (400 BadDigest) and answers the body's MD5 as the ETag.
            assertThat(traits(store)).isEqualTo(new ServerTraits(true, false, false, false, true, true));
        }
        assertThat(proxy.admin().listObjectsV2(b -> b.bucket(proxyBucket)).contents()).extracting(S3Object::key).isEmpty();
    }

    @Test
    void whenRequiredSendsNoChecksumsAndAsksForNone() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("when-required");
        byte[] body = ContractData.bytes(1000, 1);
        try (ObjectStore store = open(server.settings(bucket).checksumMode(ChecksumPolicy.WHEN_REQUIRED).build())) {
            assertThat(store.capabilities()).containsExactlyInAnyOrder(StoreCapability.USER_METADATA, StoreCapability.CREATE_ONLY_PUT);
            // Not sent, so the server cannot refuse it: when-required trades that check for compatibility.
            store.put("k", UploadBody.ofBytes(body), PutOptions.defaults().withCrc32(ContractData.crc32(body) ^ 1));
            assertThat(store.head("k").crc32()).isEmpty();
        }
    }

    @Test
    void alwaysSendsAComputedCrcAndReadsItBack() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("always");
        byte[] body = ContractData.bytes(1000, 2);
        try (ObjectStore store = open(server.settings(bucket).checksumMode(ChecksumPolicy.ALWAYS).build())) {
            store.put("k", UploadBody.ofBytes(body));
            assertThat(store.head("k").crc32()).hasValue(ContractData.crc32(body));
            assertThat(server.admin().headObject(b -> b.bucket(bucket).key("k")
                    .checksumMode(ChecksumMode.ENABLED)).checksumCRC32())
                    .isEqualTo(Crc32Text.toBase64(ContractData.crc32(body)));
        }
        S3Server proxy = S3Servers.s3proxy();
        String proxyBucket = proxy.createBucket("always-proxy");
        try (ObjectStore store = open(proxy.settings(proxyBucket).checksumMode(ChecksumPolicy.ALWAYS).build())) {
            store.put("k", UploadBody.ofBytes(body));
            assertThat(store.readAll("k", 2000, OptionalLong.of(ContractData.crc32(body)))).isEqualTo(body);
        }
    }

    @Test
    void multipartChecksumsThePartsAndChecksTheCallersCrcBeforeUploading() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("parted-crc");
        Path file = sixMiB();
        long crc = ContractData.crc32(Files.readAllBytes(file));
        try (ObjectStore store = open(small(server, bucket).build())) {
            assertThatThrownBy(() -> store.put("bad", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc ^ 1)))
                    .isInstanceOf(IntegrityRejectedException.class);
            assertThat(server.admin().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();
            assertThatThrownBy(() -> store.head("bad")).isInstanceOf(ObjectNotFoundException.class);
            assertThat(store.put("good", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)).parts()).isEqualTo(2);
            // The server keeps a CRC of the part CRCs ("...-2"), not the object's; head proves the object's from it.
            String composite = server.admin().headObject(b -> b.bucket(bucket).key("good")
                    .checksumMode(ChecksumMode.ENABLED)).checksumCRC32();
            assertThat(composite).endsWith("-2");
            assertThat(store.head("good").crc32()).hasValue(crc);
            assertThat(store.readAll("good", (int) (7 * MIB), OptionalLong.of(crc))).hasSize((int) (6 * MIB));
        }
    }

    private Path elevenMiB() throws Exception {
        Path file = scratch.resolve("eleven.bin");
        if (!Files.exists(file)) {
            Files.write(file, ContractData.bytes((int) (11 * MIB), 11));
        }
        return file;
    }

    private static String serverChecksum(S3Server server, String bucket, String key) {
        return server.admin().headObject(b -> b.bucket(bucket).key(key)
                .checksumMode(ChecksumMode.ENABLED)).checksumCRC32();
    }

    @Test
    void aMultipartObjectsCrcIsProvenFromTheServersPartChecksumsWithoutReadingIt() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("parted-proof");
        Path file = elevenMiB();
        long crc = ContractData.crc32(Files.readAllBytes(file));
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(recorder.endpoint()).build())) {
            PutOptions options = PutOptions.defaults().withCrc32(crc).withUserMetadata(java.util.Map.of("origin", "test"));
            assertThat(store.put("k", UploadBody.ofFile(file), options).parts()).isEqualTo(3);
            assertThat(store.capabilities()).contains(StoreCapability.CRC32_STORED);
            ObjectHead head = store.head("k");
            assertThat(head.crc32()).hasValue(crc);
            assertThat(head.userMetadata()).as("the part record is the store's own").isEqualTo(java.util.Map.of("origin", "test"));
            assertThat(recorder.exchanges("GET", t -> t.contains("/k"))).as("nothing read back").isEmpty();
            assertThat(serverChecksum(server, bucket, "k")).endsWith("-3");
        }
    }

    @Test
    void aByteFlippedInOnePartIsCaught() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("parted-flip");
        Path file = elevenMiB();
        long crc = ContractData.crc32(Files.readAllBytes(file));
        try (FaultProxy proxy = FaultProxy.start(server.endpoint());
                ObjectStore store = open(small(server, bucket).endpoint(proxy.endpoint()).build())) {
            store.capabilities();
            // Damaged on the way: the server checks the part against its CRC32 header and refuses it.
            proxy.inject("PUT", t -> t.contains("partNumber=2"), new FaultProxy.FlipRequestByte(false), 1);
            assertThatThrownBy(() -> store.put("refused", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)))
                    .isInstanceOf(IntegrityRejectedException.class);
            assertThatThrownBy(() -> store.head("refused")).isInstanceOf(ObjectNotFoundException.class);
            assertThat(server.admin().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();

            // Damaged where no part CRC32 can see it (the header made to match): the server keeps the bad
            // part, and its composite no longer matches the part CRC32s the store recorded, so head proves
            // nothing and only reading the object (which fails) could tell.
            proxy.inject("PUT", t -> t.contains("partNumber=2"), new FaultProxy.FlipRequestByte(true), 1);
            store.put("damaged", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc));
            assertThat(serverChecksum(server, bucket, "damaged")).endsWith("-3");
            assertThat(store.head("damaged").crc32()).isEmpty();
            assertThatThrownBy(() -> store.readAll("damaged", (int) (12 * MIB), OptionalLong.of(crc)))
                    .isInstanceOf(ChecksumMismatchException.class);
        }
    }

    @Test
    void serversThatKeepNoPartChecksumsLeaveMultipartObjectsToBeRead() throws Exception {
        Path file = elevenMiB();
        long crc = ContractData.crc32(Files.readAllBytes(file));
        S3Server proxy = S3Servers.s3proxy();
        String proxyBucket = proxy.createBucket("parted-proxy");
        try (ObjectStore store = open(small(proxy, proxyBucket).build())) {
            assertThat(store.put("k", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)).parts()).isEqualTo(3);
            assertThat(store.capabilities()).doesNotContain(StoreCapability.CRC32_STORED);
            assertThat(store.head("k").crc32()).isEmpty();
            assertThat(store.readAll("k", (int) (12 * MIB), OptionalLong.of(crc))).hasSize((int) (11 * MIB));
        }
        try (FaultProxy faults = FaultProxy.start(proxy.endpoint());
                ObjectStore store = open(small(proxy, proxyBucket).endpoint(faults.endpoint()).build())) {
            store.capabilities();
            faults.inject("PUT", t -> t.contains("partNumber=2"), new FaultProxy.FlipRequestByte(false), 1);
            // S3Proxy keeps no part CRC32s, but checks what the request's signature or Content-MD5 names.
            assertThatThrownBy(() -> store.put("flipped", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc)))
                    .isInstanceOf(IntegrityRejectedException.class).hasMessageContaining(damagedBodyRefusal());
            assertThatThrownBy(() -> store.head("flipped")).isInstanceOf(ObjectNotFoundException.class);
        }
        S3Server mock = S3Servers.s3mock();
        String mockBucket = mock.createBucket("parted-when-required");
        try (ObjectStore store = open(small(mock, mockBucket).checksumMode(ChecksumPolicy.WHEN_REQUIRED).build())) {
            store.put("k", UploadBody.ofFile(file), PutOptions.defaults().withCrc32(crc));
            assertThat(serverChecksum(mock, mockBucket, "k")).as("no part CRC32s sent, none kept").isNull();
            assertThat(store.head("k").crc32()).isEmpty();
        }
    }
}
