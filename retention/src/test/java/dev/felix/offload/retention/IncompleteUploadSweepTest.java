package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.s3.AwsSdkWire;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/** The sweep aborts multipart uploads a killed pass left behind under the node's prefix, once past the grace period. */
class IncompleteUploadSweepTest {

    @TempDir
    Path tmp;

    @Test
    void theSweepAbortsOnlyThisNodesUploadsOlderThanTheGracePeriod() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("incomplete-sweep");
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 50, Duration.ofMinutes(1), 7);
        SegmentKeys keys = new SegmentKeys("", TestData.NODE);
        try (ObjectStore store = AwsSdkWire.store(server.settings(bucket).build())) {
            TestData.offload(root, store);
            String mine = keys.segmentKey(shard.getFileName().toString(), 1000, 9);
            String theirs = new SegmentKeys("", "another-node").segmentKey(shard.getFileName().toString(), 1000, 9);
            for (String key : new String[] {mine, theirs}) {
                server.admin().createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(bucket).key(key).build());
            }
            OrphanSweepSettings settings = OrphanSweepSettings.defaults().withGrace(Duration.ofHours(1));

            OrphanSweepReport young = new OrphanSweep(new DataRoot(root), store, keys,
                    new ManualClock(Instant.now(), ZoneOffset.UTC), settings, RetentionHook.none()).run(StopSignal.never());
            assertThat(young.abortedUploads()).as("within the grace period").isEmpty();

            OrphanSweepReport old = new OrphanSweep(new DataRoot(root), store, keys,
                    new ManualClock(Instant.now().plus(Duration.ofHours(2)), ZoneOffset.UTC), settings,
                    RetentionHook.none()).run(StopSignal.never());
            assertThat(old.abortedUploads()).containsExactly(mine);
            var left = server.admin().listMultipartUploads(ListMultipartUploadsRequest.builder().bucket(bucket).build());
            assertThat(left.uploads()).extracting(u -> u.key()).containsExactly(theirs);
        }
    }
}
