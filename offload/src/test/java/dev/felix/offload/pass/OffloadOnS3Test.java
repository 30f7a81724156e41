package dev.felix.offload.pass;

import dev.felix.offload.copy.VerifyMode;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.copy.CopyProofKind;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.read.TieredReader;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The offload pass and the tiered reader against real S3 servers, through both clients. */
class OffloadOnS3Test {

    @TempDir
    Path tmp;

    record Backend(String name, S3Server server, boolean minioClient) {
        ObjectStore open(String bucket) throws IOException {
            var settings = server.settings(bucket).prefix("tiered").build();
            return minioClient ? MinioWire.store(settings) : AwsSdkWire.store(settings);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> backends() {
        return Stream.of(
                Arguments.of(new Backend("SDK on S3Mock", S3Servers.s3mock(), false)),
                Arguments.of(new Backend("SDK on S3Proxy", S3Servers.s3proxy(), false)),
                Arguments.of(new Backend("MinIO client on S3Proxy", S3Servers.s3proxy(), true)));
    }

    private static OffloadSettings settings() {
        return OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300))
                .withRetries(3, Duration.ofMillis(5));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void offloadThenReadEveryOffsetBack(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Map<Path, List<Record>> written = TestRoots.write(root, 2, 300, 21);
        String bucket = backend.server().createBucket("offload");
        try (ObjectStore store = backend.open(bucket)) {
            PassReport report = new OffloadPass(new DataRoot(root), store, settings(), StepHook.none(),
                    Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(report.complete()).as(report.toString()).isTrue();
            assertThat(report.segmentsUploaded()).isPositive();
            for (Path shard : written.keySet()) {
                assertThat(SegmentFile.list(shard)).hasSize(1);
            }
            TestRoots.assertEveryOffsetReadsBack(written, store);
        }
    }

    static Stream<Arguments> everyClientOnEveryServer() {
        return Stream.of(
                Arguments.of(new Backend("SDK on S3Mock", S3Servers.s3mock(), false)),
                Arguments.of(new Backend("MinIO client on S3Mock", S3Servers.s3mock(), true)),
                Arguments.of(new Backend("SDK on S3Proxy", S3Servers.s3proxy(), false)),
                Arguments.of(new Backend("MinIO client on S3Proxy", S3Servers.s3proxy(), true)));
    }

    /** Create-only where the server honours If-None-Match (S3Mock), a head first where it does not (S3Proxy). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyClientOnEveryServer")
    void anUploadNeverReplacesAnotherShardsObjectAtItsKey(Backend backend) throws Exception {
        String bucket = backend.server().createBucket("collide");
        try (ObjectStore store = backend.open(bucket)) {
            Collisions.secondRootNeverReplacesTheFirstRootsObjects(tmp, store);
        }
    }

    static Stream<Arguments> multipartBackends() {
        return Stream.of(
                // auto takes the put's own answer where it proves the copy, before asking for a kept CRC32: on
                // S3Mock the part CRC32s it checked (no MD5 is sent), on S3Proxy the Content-MD5s and the ETag
                Arguments.of(new Backend("SDK on S3Mock", S3Servers.s3mock(), false), VerifyMode.AUTO, "server-checksum"),
                Arguments.of(new Backend("SDK on S3Mock", S3Servers.s3mock(), false), VerifyMode.SERVER_CHECKSUM,
                        "server-checksum"),
                Arguments.of(new Backend("MinIO client on S3Mock", S3Servers.s3mock(), true), VerifyMode.AUTO,
                        "server-checksum"),
                Arguments.of(new Backend("MinIO client on S3Mock", S3Servers.s3mock(), true), VerifyMode.SERVER_CHECKSUM,
                        "server-checksum"),
                Arguments.of(new Backend("SDK on S3Proxy", S3Servers.s3proxy(), false), VerifyMode.AUTO, "content-md5"),
                Arguments.of(new Backend("MinIO client on S3Proxy", S3Servers.s3proxy(), true), VerifyMode.AUTO,
                        "content-md5"));
    }

    static Stream<Arguments> s3proxyClients() {
        return Stream.of(
                Arguments.of(new Backend("SDK on S3Proxy", S3Servers.s3proxy(), false)),
                Arguments.of(new Backend("MinIO client on S3Proxy", S3Servers.s3proxy(), true)));
    }

    /**
     * S3Proxy keeps no CRC32 but checks Content-MD5 and answers MD5 ETags: under {@code auto} the put's
     * answer proves each copy and no segment is read back; {@code read-back} still reads every one.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("s3proxyClients")
    void whereTheServerChecksContentMd5NothingIsReadBackUnlessReadBackIsAsked(Backend backend) throws Exception {
        String bucket = backend.server().createBucket("content-md5");
        for (VerifyMode mode : List.of(VerifyMode.AUTO, VerifyMode.READ_BACK)) {
            recordedPass(backend, bucket, mode, 25, (recorder, uploads, shard) -> {
                assertThat(uploads).isNotEmpty();
                List<String> segmentGets = recorder.exchanges("GET", t -> t.contains(".segment")).stream()
                        .map(dev.felix.offload.store.harness.FaultProxy.Exchange::target).toList();
                if (mode == VerifyMode.AUTO) {
                    assertThat(uploads).allSatisfy(u -> assertThat(u.verifiedBy()).isEqualTo(CopyProofKind.CONTENT_MD5));
                    assertThat(segmentGets).as("nothing read back").isEmpty();
                    assertThat(Files.readString(shard.resolve(dev.felix.offload.manifest.CopyProofs.FILE_NAME)))
                            .contains(" content-md5 ");
                } else {
                    assertThat(uploads).allSatisfy(u -> assertThat(u.verifiedBy()).isEqualTo(CopyProofKind.READ_BACK));
                    assertThat(segmentGets).hasSizeGreaterThanOrEqualTo(uploads.size());
                }
            });
        }
    }

    /**
     * S3Proxy ignores If-None-Match, so a put that must not replace heads its key first; a fresh shard
     * with several segments to send is listed once instead, and none of its puts is headed. (A key the
     * listing holds is still headed and never replaced: {@link #anUploadNeverReplacesAnotherShardsObjectAtItsKey}
     * and the crash test, whose second pass meets its first pass's objects.)
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("s3proxyClients")
    void aFreshShardIsListedOnceInsteadOfAHeadBeforeEachPut(Backend backend) throws Exception {
        String bucket = backend.server().createBucket("listed-absent");
        recordedPass(backend, bucket, VerifyMode.AUTO, 26, 800, (recorder, uploads, shard) -> {
            assertThat(uploads).hasSizeGreaterThanOrEqualTo(2 * ListedAbsence.HEADS_PER_PAGE);
            String shardPrefix = "n1%2F" + shard.getFileName() + "%2F";
            assertThat(recorder.exchanges()).filteredOn(e -> e.method().equals("GET") && e.target().contains("list-type=2")
                    && e.target().contains(shardPrefix)).as("listings of the shard's prefix").hasSize(1);
            assertThat(recorder.exchanges()).filteredOn(e -> e.method().equals("HEAD") && e.target().contains(".segment"))
                    .as("heads of segment keys").isEmpty();
            assertThat(recorder.exchanges()).filteredOn(e -> e.method().equals("PUT") && e.target().contains(".segment"))
                    .hasSize(uploads.size());
        });
    }

    /** What a test checks of a pass it ran through a recording proxy. */
    @FunctionalInterface
    private interface PassChecks {
        void check(dev.felix.offload.store.harness.FaultProxy recorder, List<SegmentUpload> uploads, Path shard)
                throws Exception;
    }

    /**
     * Runs one complete pass over a fresh one-shard root (seed {@code seed}) under {@code mode}, to
     * {@code bucket} under the mode's prefix through a proxy recording every request, hands the
     * uploads to {@code checks}, and then reads every offset back through the same store.
     */
    private void recordedPass(Backend backend, String bucket, VerifyMode mode, int seed, PassChecks checks)
            throws Exception {
        recordedPass(backend, bucket, mode, seed, 300, checks);
    }

    /** As above, with a shard of {@code records} records. */
    private void recordedPass(Backend backend, String bucket, VerifyMode mode, int seed, int records, PassChecks checks)
            throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root-" + mode.label()));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, records, seed);
        Path shard = written.keySet().iterator().next();
        try (dev.felix.offload.store.harness.FaultProxy recorder =
                     dev.felix.offload.store.harness.FaultProxy.start(backend.server().endpoint());
             ObjectStore store = open(backend, backend.server().settings(bucket).prefix(mode.label())
                     .endpoint(recorder.endpoint()).build())) {
            PassReport report = new OffloadPass(new DataRoot(root), store, settings().withVerify(mode),
                    StepHook.none(), Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(report.complete()).as(report.toString()).isTrue();
            checks.check(recorder, report.shards().get(0).uploaded(), shard);
            TestRoots.assertEveryOffsetReadsBack(written, store);
        }
    }

    static Stream<Arguments> s3mockClients() {
        return Stream.of(
                Arguments.of(new Backend("SDK on S3Mock", S3Servers.s3mock(), false)),
                Arguments.of(new Backend("MinIO client on S3Mock", S3Servers.s3mock(), true)));
    }

    /**
     * S3Mock checks the CRC32 header of every upload: under {@code auto} the put's acceptance proves
     * each copy ({@code server-checksum}), no segment upload carries a Content-MD5, and nothing is
     * headed or read back; {@code server-checksum} still asks a head for the kept CRC32.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("s3mockClients")
    void whereTheServerChecksCrc32sThePutsAcceptanceIsTheProofWithoutAnMd5OrAHead(Backend backend) throws Exception {
        String bucket = backend.server().createBucket("crc-proof");
        for (VerifyMode mode : List.of(VerifyMode.AUTO, VerifyMode.SERVER_CHECKSUM)) {
            recordedPass(backend, bucket, mode, 26, (recorder, uploads, shard) -> {
                assertThat(uploads).isNotEmpty().allSatisfy(u ->
                        assertThat(u.verifiedBy()).isEqualTo(CopyProofKind.SERVER_CHECKSUM));
                assertThat(Files.readString(shard.resolve(dev.felix.offload.manifest.CopyProofs.FILE_NAME)))
                        .contains(" server-checksum ");
                assertThat(recorder.exchanges("PUT", t -> t.contains(".segment")))
                        .hasSizeGreaterThanOrEqualTo(uploads.size())
                        .allSatisfy(x -> assertThat(x.headers()).doesNotContainKey("content-md5")
                                .containsKey("x-amz-checksum-crc32"));
                assertThat(recorder.exchanges("GET", t -> t.contains(".segment"))).as("nothing read back").isEmpty();
                List<dev.felix.offload.store.harness.FaultProxy.Exchange> heads =
                        recorder.exchanges("HEAD", t -> t.contains(".segment"));
                if (mode == VerifyMode.AUTO) {
                    assertThat(heads).as("no head asked").isEmpty();
                } else {
                    assertThat(heads).hasSizeGreaterThanOrEqualTo(uploads.size());
                }
            });
        }
    }

    private static ObjectStore open(Backend backend, dev.felix.offload.store.remote.RemoteStoreSettings settings) {
        return backend.minioClient() ? MinioWire.store(settings) : AwsSdkWire.store(settings);
    }

    /**
     * Segments larger than the multipart threshold go up in parts; where the server keeps part CRC32s the
     * pass proves them without reading them back, and where it keeps none it reads them back.
     */
    @ParameterizedTest(name = "{0}, verify {1}")
    @MethodSource("multipartBackends")
    void multipartSegmentsAreProvenByTheServerWhereItKeepsPartChecksums(Backend backend, VerifyMode verify,
            String provenBy) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path dir = root.resolve(new dev.felix.offload.log.ShardKey("acme", "default", "big", 0).directoryName());
        java.util.SplittableRandom random = new java.util.SplittableRandom(24);
        try (dev.felix.offload.log.ShardLog log = dev.felix.offload.log.ShardLog.open(dir,
                TestRoots.SMALL_SEGMENTS.withSegmentSizeBytes(12L << 20))) {
            for (int i = 0; i < 400; i++) { // about 25 MiB: two sealed segments of three 5 MiB parts each
                byte[] payload = new byte[64 * 1024];
                random.nextBytes(payload);
                log.append(1000L + i, payload);
            }
        }
        String bucket = backend.server().createBucket("parts");
        var parted = backend.server().settings(bucket).prefix("tiered").multipart(5L << 20, 5L << 20, 2).build();
        try (ObjectStore store = backend.minioClient() ? MinioWire.store(parted) : AwsSdkWire.store(parted)) {
            PassReport report = new OffloadPass(new DataRoot(root), store, settings().withVerify(verify), StepHook.none(),
                    Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(report.complete()).as(report.toString()).isTrue();
            List<SegmentUpload> uploads = report.shards().get(0).uploaded();
            assertThat(uploads).hasSize(2).allSatisfy(u -> {
                assertThat(u.bytes()).isGreaterThan(10L << 20);
                assertThat(u.verifiedBy().label()).isEqualTo(provenBy);
            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aCrashBeforeTheCommitPointIsRedoneAndAfterItOnlyUnlinks(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 250, 22);
        String bucket = backend.server().createBucket("crash");
        try (ObjectStore store = backend.open(bucket)) {
            for (OffloadStep crashAt : List.of(OffloadStep.UPLOADED, OffloadStep.RECORDED)) {
                AtomicInteger n = new AtomicInteger();
                StepHook crash = (step, s, id) -> {
                    if (step == crashAt && n.incrementAndGet() == 1) {
                        throw new IOException("simulated crash after " + step);
                    }
                };
                new OffloadPass(new DataRoot(root), store, settings(), crash, Map.of(NodeId.ENV, "n1"),
                        d -> OptionalLong.empty()).run(ProgressListener.none());
            }
            PassReport last = new OffloadPass(new DataRoot(root), store, settings(), StepHook.none(),
                    Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(last.complete()).isTrue();
            TestRoots.assertEveryOffsetReadsBack(written, store);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aCorruptedObjectIsNeverReturnedAsRecords(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 200, 23);
        Path shard = written.keySet().iterator().next();
        String bucket = backend.server().createBucket("rot");
        try (ObjectStore store = backend.open(bucket)) {
            new OffloadPass(new DataRoot(root), store, settings(), StepHook.none(), Map.of(NodeId.ENV, "n1"),
                    d -> OptionalLong.empty()).run(ProgressListener.none());
            ManifestEntry first = ManifestStore.read(shard).oldestEntry().orElseThrow();
            byte[] bytes = store.readAll(first.objectKey(), Integer.MAX_VALUE - 16, OptionalLong.empty());
            bytes[bytes.length - 3] ^= 0x04;
            // Rot behind the store's back: written with the plain SDK, no checksum.
            backend.server().admin().putObject(PutObjectRequest.builder().bucket(bucket)
                    .key("tiered/" + first.objectKey()).build(), RequestBody.fromBytes(bytes));
            TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 4096, 1 << 20));
            assertThatThrownBy(() -> reader.read(first.lastOffset(), 1, 1 << 20)).isInstanceOf(CorruptionException.class)
                    .hasMessageContaining(first.objectKey());
        }
    }
}
