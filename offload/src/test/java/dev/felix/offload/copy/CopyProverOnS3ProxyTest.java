package dev.felix.offload.copy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.pass.TestRoots;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A later proof of a copy recorded without one ({@code --verify none}) on S3Proxy, which keeps no
 * CRC32 but answers the MD5 of a single-request object as its ETag: with the local segment, one
 * head and a local read prove it; without it, or with local bytes that differ, it is read back.
 */
class CopyProverOnS3ProxyTest {
    @TempDir
    Path tmp;

    @Test
    void theEtagOfASingleRequestObjectProvesItAgainstTheLocalBytes() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 200, 41);
        Path shard = written.keySet().iterator().next();
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("prover");
        try (FaultProxy recorder = FaultProxy.start(server.endpoint());
                ObjectStore store = AwsSdkWire.store(server.settings(bucket).endpoint(recorder.endpoint()).build())) {
            PassReport report = new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults()
                    .withVerify(VerifyMode.NONE).withRetries(3, Duration.ofMillis(5)), StepHook.none(),
                    Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(report.complete()).as(report.toString()).isTrue();
            ManifestEntry entry = ManifestStore.read(shard).oldestEntry().orElseThrow();
            Path local = SegmentFile.list(shard).stream().filter(f -> f.id() == entry.segmentId()).findFirst()
                    .orElseThrow().log();
            int before = recorder.exchanges("GET", t -> true).size();

            CopyProver.Outcome byEtag = new CopyProver(store).prove(entry, local);
            assertThat(byEtag.proven()).as(String.valueOf(byEtag.mismatch())).isTrue();
            assertThat(byEtag.how()).isEqualTo("content-md5");
            assertThat(recorder.exchanges("GET", t -> true)).as("nothing read back").hasSize(before);

            assertThat(new CopyProver(store).prove(entry).how()).isEqualTo("read-back");

            // Local bytes other than the entry's prove nothing by the ETag: it is read back (and matches).
            Path other = tmp.resolve("other.segment");
            Files.copy(local, other, StandardCopyOption.REPLACE_EXISTING);
            byte[] bytes = Files.readAllBytes(other);
            bytes[bytes.length / 2] ^= 0x20;
            Files.write(other, bytes);
            CopyProver.Outcome fallback = new CopyProver(store).prove(entry, other);
            assertThat(fallback.how()).isEqualTo("read-back");
            assertThat(fallback.proven()).isTrue();
        }
    }
}
