package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.contract.ContractData;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One PUT or parts, seen from the server's side (S3Mock behind a recording proxy): the rate kept with
 * the server's findings decides before anything is measured here (so nothing depends on how fast this
 * machine is), the pass's bandwidth limit counts, and an operator's {@code multipart-threshold}
 * decides alone.
 */
class UploadChoiceOnS3MockTest {
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path scratch;

    private Path twentyMiB() throws Exception {
        Path file = scratch.resolve("twenty.bin");
        if (!Files.exists(file)) {
            Files.write(file, ContractData.bytes((int) (20 * MIB), 20));
        }
        return file;
    }

    /** A store whose findings (S3Mock's traits, kept now) say a body uploads at {@code rate} bytes/s. */
    private static ObjectStore store(RemoteStoreSettings settings, long rate) throws Exception {
        FindingsKeep keep = FindingsKeep.inMemory();
        keep.save(new ServerFindings(ServerFindings.Key.of(settings), "", Instant.now(),
                new ServerTraits(true, true, true, true, true, true), OptionalLong.of(rate)));
        return AwsSdkWire.store(settings, ProbeOptions.writer(keep, false));
    }

    private static RemoteStoreSettings.Builder adaptive(S3Server server, FaultProxy proxy, String bucket) {
        // the harness's settings fix a threshold; these leave the choice to the store, as a URI without one does
        return RemoteStoreSettings.builder(bucket).endpoint(proxy.endpoint()).region(server.region()).pathStyle(true)
                .credentials(server.credentials());
    }

    @Test
    void aFastKeptRateSendsOnePutASlowOneParts() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("upload-choice");
        try (FaultProxy proxy = FaultProxy.start(server.endpoint())) {
            try (ObjectStore fast = store(adaptive(server, proxy, bucket).build(), 1024 * MIB)) {
                PutResult put = fast.put("fast", UploadBody.ofFile(twentyMiB()));
                assertThat(put.parts()).isEqualTo(1);
                assertThat(proxy.exchanges("POST", t -> t.contains("/fast?uploads"))).isEmpty();
                assertThat(fast.describeUploads().orElseThrow()).startsWith("bodies over the 16 MiB part size: 1 in one PUT each "
                        + "(a body uploads at 1024 MiB/s here, so one PUT of 20 MiB takes 0.0 s, within 4.0 s");
            }
            try (ObjectStore slow = store(adaptive(server, proxy, bucket).build(), 2 * MIB)) {
                PutResult put = slow.put("slow", UploadBody.ofFile(twentyMiB()));
                assertThat(put.parts()).isEqualTo(2);
                assertThat(proxy.exchanges("POST", t -> t.contains("/slow?uploads"))).hasSize(1);
                assertThat(slow.describeUploads().orElseThrow()).contains("1 in parts (a body uploads at 2 MiB/s here, "
                        + "so one PUT of 20 MiB takes 10.0 s, more than 4.0 s");
            }
        }
    }

    @Test
    void theBandwidthLimitCountsAndTheOperatorsThresholdDecidesAlone() throws Exception {
        S3Server server = S3Servers.s3mock();
        String bucket = server.createBucket("upload-choice-limits");
        try (FaultProxy proxy = FaultProxy.start(server.endpoint())) {
            try (ObjectStore paced = store(adaptive(server, proxy, bucket).build(), 1024 * MIB)) {
                paced.uploadsPacedAt(4 * MIB);
                assertThat(paced.put("paced", UploadBody.ofFile(twentyMiB())).parts()).isEqualTo(2);
                assertThat(paced.describeUploads().orElseThrow()).contains("(--bandwidth 4 MiB/s)");
            }
            try (ObjectStore chosen = store(adaptive(server, proxy, bucket).multipart(16 * MIB, 16 * MIB, 4).build(),
                    1024 * MIB)) {
                assertThat(chosen.put("chosen", UploadBody.ofFile(twentyMiB())).parts()).isEqualTo(2);
                assertThat(chosen.describeUploads().orElseThrow()).contains("multipart-threshold is set to 16777216 bytes");
            }
            try (ObjectStore chosenHigh = store(adaptive(server, proxy, bucket).multipart(64 * MIB, 16 * MIB, 4).build(),
                    2 * MIB)) {
                assertThat(chosenHigh.put("chosen-high", UploadBody.ofFile(twentyMiB())).parts()).isEqualTo(1);
            }
        }
    }
}
