package dev.felix.offload.store.s3;

import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;

import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Uploads a killed process left incomplete are found and aborted, and only under the prefix given. */
class IncompleteUploadsTest {

    static Stream<S3Server> servers() {
        return Stream.of(S3Servers.s3mock());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void abortsIncompleteUploadsUnderThePrefixStartedBeforeTheInstant(S3Server server) throws Exception {
        String bucket = server.createBucket("incomplete");
        try (S3Store store = S3Store.open(server.settings(bucket).prefix("base").build())) {
            var admin = server.admin();
            for (String key : List.of("base/node-a/s/1.segment", "base/node-a/s/2.segment", "base/node-b/s/1.segment")) {
                admin.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket).key(key).build());
            }
            assertThat(store.abortIncompleteUploads("node-a/", Instant.now().minusSeconds(3600))).isEmpty();
            List<String> aborted = store.abortIncompleteUploads("node-a/", Instant.now().plusSeconds(60));
            assertThat(aborted).containsExactlyInAnyOrder("node-a/s/1.segment", "node-a/s/2.segment");
            var left = admin.listMultipartUploads(ListMultipartUploadsRequest.builder().bucket(bucket).build()).uploads();
            assertThat(left).extracting(u -> u.key()).containsExactly("base/node-b/s/1.segment");
        }
    }
}
