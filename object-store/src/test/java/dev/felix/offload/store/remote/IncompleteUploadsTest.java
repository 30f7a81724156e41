package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.MultipartUpload;

/**
 * Uploads a killed process left incomplete are found and aborted, only under the prefix given and
 * only those begun before the instant, by both remote stores on both servers. S3Proxy 2.7.0 lists
 * multipart uploads only when asked with no delimiter, max-uploads or markers (it answers 501
 * otherwise), which is why the MinIO store does not use its client's listing call.
 */
class IncompleteUploadsTest {

    record Kind(String name, Function<RemoteStoreSettings, ObjectStore> open) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final Kind SDK = new Kind("S3Store", AwsSdkWire::store);
    static final Kind MINIO = new Kind("MinioStore", MinioWire::store);

    static Stream<Arguments> storesAndServers() {
        List<Arguments> all = new ArrayList<>();
        for (S3Server server : List.of(S3Servers.s3mock(), S3Servers.s3proxy())) {
            all.add(Arguments.of(SDK, server));
            all.add(Arguments.of(MINIO, server));
        }
        return all.stream();
    }

    static Stream<Arguments> storesOnS3Mock() {
        return Stream.of(Arguments.of(SDK, S3Servers.s3mock()), Arguments.of(MINIO, S3Servers.s3mock()));
    }

    private static IncompleteUploads uploads(ObjectStore store) {
        return store.incompleteUploads().orElseThrow(() -> new AssertionError(store.describe() + " offers no cleanup"));
    }

    private static List<String> left(S3Server server, String bucket) {
        return server.admin().listMultipartUploadsPaginator(ListMultipartUploadsRequest.builder().bucket(bucket).build())
                .uploads().stream().map(MultipartUpload::key).sorted().toList();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("storesAndServers")
    void abortsIncompleteUploadsUnderThePrefixStartedBeforeTheInstant(Kind kind, S3Server server) throws Exception {
        String bucket = server.createBucket("incomplete");
        try (ObjectStore store = kind.open().apply(server.settings(bucket).prefix("base").build())) {
            var admin = server.admin();
            for (String key : List.of("base/node-a/s/1.segment", "base/node-a/s/2.segment", "base/node-ab/s/1.segment",
                    "base/node-b/s/1.segment", "other/node-a/s/1.segment")) {
                admin.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket).key(key).build());
            }
            assertThat(uploads(store).abortIncompleteUploads("node-a/", Instant.now().minusSeconds(3600)))
                    .as("all begun after the instant").isEmpty();
            assertThat(left(server, bucket)).hasSize(5);
            List<String> aborted = uploads(store).abortIncompleteUploads("node-a/", Instant.now().plusSeconds(60));
            assertThat(aborted).containsExactlyInAnyOrder("node-a/s/1.segment", "node-a/s/2.segment");
            assertThat(left(server, bucket)).containsExactly("base/node-ab/s/1.segment", "base/node-b/s/1.segment",
                    "other/node-a/s/1.segment");
            assertThat(uploads(store).abortIncompleteUploads("node-a/", Instant.now().plusSeconds(60))).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("storesOnS3Mock")
    void followsTheListingPastOnePage(Kind kind, S3Server server) throws Exception {
        String bucket = server.createBucket("incomplete-many");
        int count = 1005; // S3 lists at most 1000 uploads a page
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> created = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String key = String.format("n/s/%05d.segment", i);
                created.add(pool.submit(() -> server.admin().createMultipartUpload(b -> b.bucket(bucket).key(key))));
            }
            for (Future<?> f : created) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = kind.open().apply(server.settings(bucket).endpoint(recorder.endpoint()).build())) {
            assertThat(uploads(store).abortIncompleteUploads("n/", Instant.now().plusSeconds(60))).hasSize(count);
            assertThat(recorder.exchanges("GET", t -> t.contains("uploads"))).as("two pages").hasSize(2);
        }
        assertThat(left(server, bucket)).isEmpty();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("storesOnS3Mock")
    void anUploadThatEndedMeanwhileIsNeitherAnErrorNorCounted(Kind kind, S3Server server) throws Exception {
        String bucket = server.createBucket("incomplete-gone");
        for (String key : List.of("n/s/1.segment", "n/s/2.segment")) {
            server.admin().createMultipartUpload(b -> b.bucket(bucket).key(key));
        }
        try (FaultProxy proxy = FaultProxy.start(server.endpoint());
                ObjectStore store = kind.open().apply(server.settings(bucket).endpoint(proxy.endpoint()).build())) {
            // what S3 answers when the upload was completed or aborted between the listing and the abort
            proxy.inject("DELETE", t -> t.contains("/n/s/1.segment?") && t.contains("uploadId="),
                    new FaultProxy.ErrorAnswer(404, "NoSuchUpload"), 1);
            assertThat(uploads(store).abortIncompleteUploads("n/", Instant.now().plusSeconds(60)))
                    .containsExactly("n/s/2.segment");
        }
        assertThat(left(server, bucket)).containsExactly("n/s/1.segment");
    }
}
