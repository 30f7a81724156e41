package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Remote retention and the orphan sweep through the one-shot commands against S3Proxy (SigV4
 * checked, so the credentials really come from the environment), or another server in a subclass.
 */
class RetentionIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    private List<String> keys(S3Server s3, String bucket, String prefix) {
        return s3.admin().listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
                .map(S3Object::key).toList();
    }

    /** The server the commands run against: S3Proxy here, another in a subclass. */
    protected S3Server server() {
        return S3Servers.s3proxy();
    }

    @Test
    void expiresRemoteCopiesAndSweepsOnlyThisNodesOrphans() throws Exception {
        S3Server s3 = server();
        String bucket = s3.createBucket("retention-it");
        Map<String, String> env = DaemonIT.credentials(s3);
        FelixJar.Result gen = FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "data", "--streams", "2",
                "--records", "1500", "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path config = work.resolve("felix.properties");
        Files.writeString(config, String.join("\n",
                "data-dir=data",
                "store=" + DaemonIT.storeUri(s3, bucket, "/tier"),
                "node-id=node-a",
                "local.retention.bytes=40KiB",
                "retention.streams.acme/default/stream-1.retention.bytes=64KiB",
                "orphans.grace=0s",
                // No broker rewrites manifests here, and retention runs right after offload recorded its
                // entries: with the default settle time those would still be settling (kept local).
                "offload.unlink-settle=0s",
                ""), StandardCharsets.UTF_8);

        FelixJar.Result offload = FelixJar.inside(work, env, "offload", "offload", "--config", config.toString(), "--json");
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        List<String> offloaded = keys(s3, bucket, "tier/node-a/");
        assertThat(offloaded).isNotEmpty();

        // An orphan of this node (an upload that never reached its manifest, of offsets the shard's local log
        // still holds after retention) and a key of another node.
        String shard1 = offloaded.stream().filter(k -> k.contains("stream-1")).findFirst().orElseThrow();
        String orphan = shard1.substring(0, shard1.lastIndexOf('/') + 1) + "00000000000000001495-00000000000000009999.segment";
        String foreign = "tier/node-b/" + shard1.substring("tier/node-a/".length());
        s3.admin().putObject(b -> b.bucket(bucket).key(orphan), RequestBody.fromString("left by a crash"));
        s3.admin().putObject(b -> b.bucket(bucket).key(foreign), RequestBody.fromString("another broker's"));

        FelixJar.Result retention = FelixJar.inside(work, env, "retention", "retention", "--config", config.toString(),
                "--json");
        assertThat(retention.exitCode()).as(retention.out() + retention.err()).isZero();
        JsonNode r = JSON.readTree(retention.out());
        assertThat(r.get("succeeded").asBoolean()).isTrue();
        assertThat(r.get("remote_segments_deleted").asInt()).as("stream-1 keeps 64 KiB in all").isPositive();
        assertThat(r.get("local_segments_deleted").asInt()).isPositive();
        List<String> deletedOrphans = new ArrayList<>();
        r.get("orphans").get("deleted").forEach(k -> deletedOrphans.add(k.asText()));
        assertThat(deletedOrphans).containsExactly(orphan.substring("tier/".length()));

        List<String> after = keys(s3, bucket, "tier/");
        assertThat(after).doesNotContain(orphan).contains(foreign);
        assertThat(after.size()).isLessThan(offloaded.size());
        for (JsonNode s : r.get("shards")) {
            if (s.get("dir").asText().contains("stream-1")) {
                assertThat(s.get("total_bytes_after").asLong()).isLessThanOrEqualTo(64 * 1024);
            }
        }

        // Every entry the manifests keep still has its object, and no orphan is left.
        FelixJar.Result scrub = FelixJar.inside(work, env, "scrub", "scrub", "--config", config.toString(), "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isZero();
        JsonNode sc = JSON.readTree(scrub.out());
        assertThat(sc.get("anomalies")).isEmpty();
        assertThat(sc.get("orphans_listed").asBoolean()).isTrue();

        // A key of this node that no manifest names shows up in scrub as an orphan, exit 1.
        s3.admin().putObject(b -> b.bucket(bucket).key(orphan), RequestBody.fromString("left by a crash"));
        FelixJar.Result dirty = FelixJar.inside(work, env, "scrub2", "scrub", "--config", config.toString());
        assertThat(dirty.exitCode()).as(dirty.out() + dirty.err()).isEqualTo(1);
        assertThat(dirty.out()).contains("orphan shard=");
        assertThat(dirty.out() + dirty.err() + retention.err()).doesNotContain(env.get("AWS_SECRET_ACCESS_KEY"));
    }
}
