package dev.felix.offload.store.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ChecksumMismatchException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.RetryPolicy;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.ThrottledException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.contract.ContractData;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.FaultProxy.Delay;
import dev.felix.offload.store.harness.FaultProxy.ErrorAnswer;
import dev.felix.offload.store.harness.FaultProxy.FlipByte;
import dev.felix.offload.store.harness.FaultProxy.HoldUntilConcurrent;
import dev.felix.offload.store.harness.FaultProxy.ResetMidBody;
import dev.felix.offload.store.harness.FaultProxy.TruncateBody;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.remote.ChecksumPolicy;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.MultipartUpload;

/**
 * Each fault, injected by {@link FaultProxy} in front of a real server, gives the documented retry
 * or typed error. The stores run with 3 attempts, so "retried" means exactly the attempts counted
 * at the proxy. By default reads and writes go through S3Proxy (signatures checked through the
 * proxy) and the multipart tests through S3Mock, whose ListMultipartUploads shows what an upload
 * left behind; subclasses may put another server behind either.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StoreFaultsTest {
    private static final int ATTEMPTS = 3;
    private static final String FIXTURE = "fixture.bin";
    private static final long MIB = 1024 * 1024;

    private S3Server s3proxy;
    private S3Server s3mock;
    private FaultProxy proxy;
    private FaultProxy mockProxy;
    private String bucket;
    private String mockBucket;
    private ObjectStore store;
    private ObjectStore quickTimeoutStore;
    private ObjectStore multipartStore;
    private final byte[] fixture = ContractData.bytes(64 * 1024, 99);
    private final long fixtureCrc = ContractData.crc32(fixture);

    @TempDir
    Path scratch;

    /** Opens the store under test with these settings. */
    protected abstract ObjectStore open(RemoteStoreSettings settings);

    /** The server behind the plain reads and writes (its field keeps the name of the default). */
    protected S3Server readWriteServer() {
        return S3Servers.s3proxy();
    }

    /** The server behind the multipart and read-only tests, whose listing shows what an upload left. */
    protected S3Server multipartServer() {
        return S3Servers.s3mock();
    }

    /** What a probe with write access finds {@link #multipartServer()} can do. */
    protected Set<StoreCapability> probedCapabilities() {
        return EnumSet.allOf(StoreCapability.class); // S3Mock checks and keeps CRC32s and honours If-None-Match
    }

    @BeforeAll
    void start() throws Exception {
        s3proxy = readWriteServer();
        s3mock = multipartServer();
        bucket = s3proxy.createBucket("faults");
        mockBucket = s3mock.createBucket("faults-multipart");
        proxy = FaultProxy.start(s3proxy.endpoint());
        mockProxy = FaultProxy.start(s3mock.endpoint());
        // The probe is not needed with checksum when-required, so only the operations under test cross the proxy.
        RetryPolicy retries = new RetryPolicy(ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(60));
        store = open(s3proxy.settings(bucket).endpoint(proxy.endpoint()).checksumMode(ChecksumPolicy.WHEN_REQUIRED)
                .retryPolicy(retries).build());
        quickTimeoutStore = open(s3proxy.settings(bucket).endpoint(proxy.endpoint()).checksumMode(ChecksumPolicy.WHEN_REQUIRED)
                .retryPolicy(retries).timeouts(Duration.ofSeconds(2), Duration.ofSeconds(1)).build());
        multipartStore = open(s3mock.settings(mockBucket).endpoint(mockProxy.endpoint()).checksumMode(ChecksumPolicy.WHEN_REQUIRED)
                .retryPolicy(retries).multipart(5 * MIB, 5 * MIB, 4).build());
        s3proxy.admin().putObject(b -> b.bucket(bucket).key(FIXTURE), RequestBody.fromBytes(fixture));
    }

    @AfterAll
    void stop() throws Exception {
        for (ObjectStore s : List.of(store, quickTimeoutStore, multipartStore)) {
            s.close();
        }
        proxy.close();
        mockProxy.close();
    }

    @BeforeEach
    void clearFaults() {
        proxy.reset();
        mockProxy.reset();
    }

    private static Predicate<String> key(String key) {
        return target -> target.startsWith("/") && target.contains("/" + key) ;
    }

    private int requests(String method, String key) {
        return proxy.exchanges(method, key(key)).size();
    }

    /**
     * Credentials that may read but not write (as a scrub's may be): the capability probe, which
     * writes, is refused; reads still work, as if the server kept no checksums; a put meets the refusal
     * itself; and once writes are allowed a later store finds the server's real traits.
     */
    @Test
    void aStoreThatMayOnlyReadStillReadsAndReportsNoStoredChecksums() throws Exception {
        s3mock.admin().putObject(b -> b.bucket(mockBucket).key("read-only/" + FIXTURE), RequestBody.fromBytes(fixture));
        RetryPolicy retries = new RetryPolicy(ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(60));
        RemoteStoreSettings auto = s3mock.settings(mockBucket).endpoint(mockProxy.endpoint()).prefix("read-only")
                .retryPolicy(retries).build();
        mockProxy.inject("PUT", t -> true, new ErrorAnswer(403, "AccessDenied"), 1000);
        try (ObjectStore readOnly = open(auto)) {
            assertThat(readOnly.capabilities()).doesNotContain(dev.felix.offload.store.StoreCapability.CRC32_STORED);
            assertThat(readOnly.head(FIXTURE).crc32()).as("no stored CRC32 believed without a probe").isEmpty();
            assertThat(readOnly.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc))).isEqualTo(fixture);
            int probesSoFar = mockProxy.exchanges("PUT", t -> t.contains(".felix-probe")).size();
            readOnly.head(FIXTURE);
            assertThat(mockProxy.exchanges("PUT", t -> t.contains(".felix-probe")))
                    .as("a refused probe is not sent again for every read").hasSize(probesSoFar);
            assertThatThrownBy(() -> readOnly.put("written", UploadBody.ofBytes(fixture)))
                    .isInstanceOf(AccessDeniedException.class);
        }
        mockProxy.reset();
        try (ObjectStore readWrite = open(auto)) {
            assertThat(readWrite.capabilities()).isEqualTo(probedCapabilities());
        }
    }

    @Test
    void serverErrorIsRetriedAndTheReadSucceeds() throws Exception {
        proxy.inject("GET", key(FIXTURE), new ErrorAnswer(500, "InternalError"), 1);
        assertThat(store.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc))).isEqualTo(fixture);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2);
    }

    @Test
    void serverErrorsPastTheAttemptBudgetAreTransient() {
        proxy.inject("GET", key(FIXTURE), new ErrorAnswer(500, "InternalError"), 100);
        assertThatThrownBy(() -> store.readAll(FIXTURE, fixture.length, OptionalLong.empty()))
                .isInstanceOf(TransientStoreException.class)
                .satisfies(e -> assertThat(((TransientStoreException) e).answer().httpStatus()).isEqualTo(500));
        assertThat(requests("GET", FIXTURE)).isEqualTo(ATTEMPTS);
    }

    @Test
    void slowDownIsThrottledAndRetried() throws Exception {
        proxy.inject("PUT", key("slow-down"), new ErrorAnswer(503, "SlowDown"), 1);
        store.put("slow-down", UploadBody.ofBytes(fixture));
        assertThat(requests("PUT", "slow-down")).isEqualTo(2);
        assertThat(s3proxy.admin().headObject(b -> b.bucket(bucket).key("slow-down")).contentLength()).isEqualTo(fixture.length);

        proxy.inject("PUT", key("slow-down-always"), new ErrorAnswer(503, "SlowDown"), 100);
        assertThatThrownBy(() -> store.put("slow-down-always", UploadBody.ofBytes(fixture)))
                .isInstanceOf(ThrottledException.class);
        assertThat(requests("PUT", "slow-down-always")).isEqualTo(ATTEMPTS);
    }

    @Test
    void accessDeniedIsTypedAndNotRetried() {
        proxy.inject("GET", key(FIXTURE), new ErrorAnswer(403, "AccessDenied"), 100);
        assertThatThrownBy(() -> store.readRange(FIXTURE, ByteRange.of(0, 10))).isInstanceOf(AccessDeniedException.class);
        assertThat(requests("GET", FIXTURE)).isEqualTo(1);
    }

    @Test
    void notFoundAnswerIsTypedAndNotRetried() {
        proxy.inject("HEAD", key(FIXTURE), new ErrorAnswer(404, "NoSuchKey"), 100);
        assertThatThrownBy(() -> store.head(FIXTURE)).isInstanceOf(ObjectNotFoundException.class);
        assertThat(requests("HEAD", FIXTURE)).isEqualTo(1);
    }

    @Test
    void preconditionFailedIsTypedAndNotRetried() {
        proxy.inject("PUT", key("conditional"), new ErrorAnswer(412, "PreconditionFailed"), 100);
        assertThatThrownBy(() -> store.put("conditional", UploadBody.ofBytes(fixture)))
                .isInstanceOf(PreconditionFailedException.class);
        assertThat(requests("PUT", "conditional")).isEqualTo(1);
    }

    @Test
    void connectionResetMidBodyIsRetried() throws Exception {
        proxy.inject("GET", key(FIXTURE), new ResetMidBody(), 1);
        Path target = scratch.resolve("reset.bin");
        assertThat(store.download(FIXTURE, target, OptionalLong.empty()).size()).isEqualTo(fixture.length);
        assertThat(Files.readAllBytes(target)).isEqualTo(fixture);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2);

        proxy.reset();
        proxy.inject("GET", key(FIXTURE), new ResetMidBody(), 100);
        Path untouched = scratch.resolve("reset-always.bin");
        assertThatThrownBy(() -> store.download(FIXTURE, untouched, OptionalLong.empty()))
                .isInstanceOf(TransientStoreException.class);
        assertThat(untouched).doesNotExist();
        assertThat(requests("GET", FIXTURE)).isEqualTo(ATTEMPTS);
    }

    @Test
    void answerSlowerThanTheAttemptTimeoutIsRetried() throws Exception {
        proxy.inject("GET", key(FIXTURE), new Delay(Duration.ofSeconds(4)), 1);
        assertThat(quickTimeoutStore.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc))).isEqualTo(fixture);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2);
    }

    @Test
    void aRangeReadIntoPiecesResumesAfterABrokenBodyAtTheFirstPieceNotHeard() throws Exception {
        // four pieces of 10,000 bytes; the proxy cuts the first answer after half its body (two pieces)
        proxy.inject("GET", key(FIXTURE), new TruncateBody(), 1);
        java.util.List<byte[]> pieces = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            pieces.add(new byte[10_000]);
        }
        java.util.List<Integer> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.List<byte[]> asHeard = new java.util.ArrayList<>();
        store.readRangeInto(FIXTURE, ByteRange.of(1000, 40_000), pieces, n -> {
            heard.add(n);
            asHeard.add(pieces.get(n).clone());
        });
        assertThat(heard).containsExactly(0, 1, 2, 3);
        for (int i = 0; i < 4; i++) {
            byte[] want = java.util.Arrays.copyOfRange(fixture, 1000 + i * 10_000, 1000 + (i + 1) * 10_000);
            assertThat(pieces.get(i)).as("piece %d", i).isEqualTo(want);
            assertThat(asHeard.get(i)).as("piece %d when it was handed over", i).isEqualTo(want);
        }
        assertThat(requests("GET", FIXTURE)).as("the first answer, then one for the rest").isEqualTo(2);
    }

    @Test
    void truncatedBodyIsRetriedAndNeverReturned() throws Exception {
        proxy.inject("GET", key(FIXTURE), new TruncateBody(), 1);
        assertThat(store.readAll(FIXTURE, fixture.length, OptionalLong.empty())).isEqualTo(fixture);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2);

        proxy.reset();
        proxy.inject("GET", key(FIXTURE), new TruncateBody(), 100);
        assertThatThrownBy(() -> store.readAll(FIXTURE, fixture.length, OptionalLong.empty()))
                .isInstanceOf(TransientStoreException.class);
        assertThatThrownBy(() -> store.readRange(FIXTURE, ByteRange.of(100, 20_000)))
                .isInstanceOf(TransientStoreException.class);
        Path untouched = scratch.resolve("truncated.bin");
        assertThatThrownBy(() -> store.download(FIXTURE, untouched, OptionalLong.empty()))
                .isInstanceOf(TransientStoreException.class);
        assertThat(untouched).doesNotExist();
        assertThat(requests("GET", FIXTURE)).isEqualTo(3 * ATTEMPTS);
    }

    @Test
    void flippedByteNeverPassesForGoodDataWhenTheCrcIsGiven() throws Exception {
        proxy.inject("GET", key(FIXTURE), new FlipByte(), 1);
        assertThat(store.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc))).isEqualTo(fixture);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2);

        proxy.reset();
        proxy.inject("GET", key(FIXTURE), new FlipByte(), 100);
        assertThatThrownBy(() -> store.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc)))
                .isInstanceOf(ChecksumMismatchException.class);
        Path target = scratch.resolve("flipped.bin");
        Files.write(target, new byte[] {1, 2, 3});
        assertThatThrownBy(() -> store.download(FIXTURE, target, OptionalLong.of(fixtureCrc)))
                .isInstanceOf(ChecksumMismatchException.class);
        assertThat(Files.readAllBytes(target)).containsExactly(1, 2, 3);
        assertThat(requests("GET", FIXTURE)).isEqualTo(2 * ATTEMPTS);
        // Without an expected CRC (and no stored one) the damage is not detectable: that is the caller's choice.
        assertThat(store.readAll(FIXTURE, fixture.length, OptionalLong.empty())).isNotEqualTo(fixture);
    }

    @Test
    void multipartUploadWithAFailingPartIsAborted() throws Exception {
        // First show that the server's ListMultipartUploads does list an open upload, so "none" below means something.
        String probeId = s3mock.admin().createMultipartUpload(b -> b.bucket(mockBucket).key("listing-check")).uploadId();
        assertThat(openUploads()).extracting(MultipartUpload::uploadId).contains(probeId);
        s3mock.admin().abortMultipartUpload(b -> b.bucket(mockBucket).key("listing-check").uploadId(probeId));
        assertThat(openUploads()).isEmpty();

        Path file = scratch.resolve("twelve.bin");
        Files.write(file, ContractData.bytes((int) (12 * MIB), 12));
        mockProxy.inject("PUT", t -> t.contains("partNumber=2"), new ErrorAnswer(500, "InternalError"), 100);
        assertThatThrownBy(() -> multipartStore.put("parted", UploadBody.ofFile(file)))
                .isInstanceOf(TransientStoreException.class);
        assertThat(mockProxy.exchanges("PUT", t -> t.contains("partNumber=2"))).hasSize(ATTEMPTS);
        assertThat(mockProxy.exchanges("DELETE", t -> t.contains("uploadId="))).isNotEmpty();
        assertThat(openUploads()).isEmpty();
        assertThatThrownBy(() -> multipartStore.head("parted")).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void partsTravelConcurrently() throws Exception {
        Path file = scratch.resolve("fifteen.bin");
        byte[] body = ContractData.bytes((int) (15 * MIB), 15);
        Files.write(file, body);
        mockProxy.inject("PUT", t -> t.contains("partNumber="), new HoldUntilConcurrent(2, Duration.ofSeconds(30)), 100);
        assertThat(multipartStore.put("concurrent", UploadBody.ofFile(file)).parts()).isEqualTo(3);
        assertThat(mockProxy.maxHeldTogether()).isGreaterThanOrEqualTo(2);
        assertThat(multipartStore.readAll("concurrent", body.length, OptionalLong.of(ContractData.crc32(body)))).isEqualTo(body);
    }

    /**
     * A server that accepts the connection and never answers is given up on after the read timeout
     * (1 s here), each attempt, though the attempt timeout would allow a minute.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void aServerThatNeverAnswersIsGivenUpOnAfterTheReadTimeout() throws Exception {
        RetryPolicy retries = new RetryPolicy(ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(60));
        try (ObjectStore silent = open(s3proxy.settings(bucket).endpoint(proxy.endpoint())
                .checksumMode(ChecksumPolicy.WHEN_REQUIRED).retryPolicy(retries)
                .timeouts(Duration.ofSeconds(2), Duration.ofSeconds(60)).readTimeout(Duration.ofSeconds(1)).build())) {
            proxy.inject("GET", key(FIXTURE), new FaultProxy.NoAnswer(), ATTEMPTS);
            assertThatThrownBy(() -> silent.readAll(FIXTURE, fixture.length, OptionalLong.of(fixtureCrc)))
                    .isInstanceOf(TransientStoreException.class);
            assertThat(requests("GET", FIXTURE)).isEqualTo(ATTEMPTS);
        }
    }

    /** A store of its own over the multipart server, 5 MiB parts one at a time, for the tests that stop it. */
    private ObjectStore stoppable() {
        RetryPolicy retries = new RetryPolicy(ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(60));
        return open(s3mock.settings(mockBucket).endpoint(mockProxy.endpoint()).checksumMode(ChecksumPolicy.WHEN_REQUIRED)
                .retryPolicy(retries).multipart(5 * MIB, 5 * MIB, 1).readTimeout(Duration.ofSeconds(2)).build());
    }

    /** Runs a put of {@code file} on a thread of its own; the future holds what it threw, if anything. */
    private static java.util.concurrent.CompletableFuture<Throwable> putInBackground(ObjectStore s, String key, Path file) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                s.put(key, UploadBody.ofFile(file));
                return null;
            } catch (Exception e) {
                return e;
            }
        });
    }

    /**
     * Once requests are stopped (a process stopping), a multipart upload sends no further part: the
     * one under way ends, the next is refused without a request, and the upload is aborted, the one
     * request still sent. Any later call is refused without a request too.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void afterRequestsAreStoppedOnlyTheAbortOfAnOpenUploadIsSent() throws Exception {
        Path file = scratch.resolve("twelve-stopped.bin");
        Files.write(file, ContractData.bytes((int) (12 * MIB), 13));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        mockProxy.inject("PUT", t -> t.contains("partNumber=1"), new FaultProxy.HoldUntilReleased(release), 1);
        try (ObjectStore s = stoppable()) {
            java.util.concurrent.CompletableFuture<Throwable> put = putInBackground(s, "stopped", file);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (mockProxy.heldNow() < 1) {
                assertThat(System.nanoTime() < deadline).as("the first part reaches the proxy").isTrue();
                Thread.sleep(20);
            }
            int before = mockProxy.exchanges().size();
            ((dev.felix.offload.store.RequestGate) s).stopRequests();
            release.countDown();
            assertThat(put.get(60, java.util.concurrent.TimeUnit.SECONDS))
                    .isInstanceOf(dev.felix.offload.store.StoreStoppedException.class);
            assertThat(mockProxy.exchanges().subList(before, mockProxy.exchanges().size()))
                    .as("requests sent after the stop").singleElement()
                    .satisfies(e -> assertThat(e.method() + " " + e.target()).matches("DELETE .*uploadId=.*"));
            assertThat(openUploads()).isEmpty();
            assertThatThrownBy(() -> s.head("stopped")).isInstanceOf(dev.felix.offload.store.StoreStoppedException.class);
            assertThat(mockProxy.exchanges()).hasSize(before + 1);
        }
    }

    /**
     * An upload whose part the server never answers is still aborted at a stop: the store keeps the
     * uploads it has open, and aborts them on request while the part still waits.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void openUploadsAreAbortedOnRequestWhileAPartHangs() throws Exception {
        Path file = scratch.resolve("twelve-hanging.bin");
        Files.write(file, ContractData.bytes((int) (12 * MIB), 14));
        mockProxy.inject("PUT", t -> t.contains("partNumber="), new FaultProxy.NoAnswer(), 100);
        try (ObjectStore s = stoppable()) {
            java.util.concurrent.CompletableFuture<Throwable> put = putInBackground(s, "hanging", file);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (mockProxy.exchanges("PUT", t -> t.contains("partNumber=")).isEmpty() || openUploads().isEmpty()) {
                assertThat(System.nanoTime() < deadline).as("a part is under way").isTrue();
                Thread.sleep(20);
            }
            ((dev.felix.offload.store.RequestGate) s).stopRequests();
            assertThat(((dev.felix.offload.store.RequestGate) s).abortOpenUploads()).containsExactly("hanging");
            assertThat(openUploads()).isEmpty();
            assertThat(put.get(60, java.util.concurrent.TimeUnit.SECONDS)).as("the put fails").isNotNull();
        }
    }

    private List<MultipartUpload> openUploads() {
        return new ArrayList<>(s3mock.admin().listMultipartUploads(b -> b.bucket(mockBucket)).uploads());
    }
}
