package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A paced body's bytes pass its pacer as they are sent, in slices, through both clients and for
 * single and multipart puts: what a bandwidth limit is built on. Counted, never timed.
 */
class PacedUploadTest {
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"sdk", "minio"})
    void everyByteSentIsAskedOfThePacerInSlices(String client) throws Exception {
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("paced-" + client);
        RemoteStoreSettings settings = server.settings(bucket).multipart(5 * MIB, 5 * MIB, 2).build();
        Function<RemoteStoreSettings, RemoteStore> open = client.equals("sdk") ? AwsSdkWire::store : MinioWire::store;
        byte[] small = new byte[(int) (2 * MIB)];
        byte[] large = new byte[(int) (11 * MIB)];
        new Random(7).nextBytes(small);
        new Random(8).nextBytes(large);
        Path smallFile = Files.write(tmp.resolve("small"), small);
        Path largeFile = Files.write(tmp.resolve("large"), large);
        try (ObjectStore store = open.apply(settings)) {
            for (Path file : new Path[] {smallFile, largeFile}) {
                AtomicLong asked = new AtomicLong();
                AtomicLong largestSlice = new AtomicLong();
                UploadBody body = UploadBody.ofFile(file).paced(n -> {
                    asked.addAndGet(n);
                    largestSlice.accumulateAndGet(n, Math::max);
                });
                String key = "k/" + file.getFileName();
                store.put(key, body);
                long length = Files.size(file);
                // every byte once, though the SDK reads a body twice over plain HTTP (to sign it, then to send it)
                assertThat(asked.get()).as("bytes asked of the pacer for %s", key).isEqualTo(length);
                assertThat(largestSlice.get()).isLessThanOrEqualTo(UploadBody.PACE_SLICE);
                assertThat(store.readAll(key, (int) length, OptionalLong.empty())).isEqualTo(Files.readAllBytes(file));
            }
        }
    }
}
