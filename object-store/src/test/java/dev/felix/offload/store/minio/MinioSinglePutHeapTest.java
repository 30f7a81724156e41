package dev.felix.offload.store.minio;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single-request PUT of a file through the MinIO client goes from the file, not through a copy of
 * the body in the heap: a child JVM whose heap is a third of the body uploads it in one request
 * (the client's stream form would need the whole body in memory and fail with OutOfMemoryError).
 */
class MinioSinglePutHeapTest {
    private static final long BODY = 96L * 1024 * 1024;

    @Test
    void aFileBodyAboveTheHeapGoesInOneRequest(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("body.bin");
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("minio-single-put");
        ChildRun run = upload(dir, file, server, bucket, "file");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("parts=1 size=" + BODY);

        try (ObjectStore store = MinioWire.store(server.settings(bucket).build())) {
            var head = store.head("single");
            assertThat(head.size()).isEqualTo(BODY);
            // S3Proxy's ETag of a single PUT is the MD5 of what it stored: the file's bytes, in order.
            @SuppressWarnings("deprecation")
            String md5 = com.google.common.io.Files.asByteSource(file.toFile())
                    .hash(com.google.common.hash.Hashing.md5()).toString();
            assertThat(head.etag()).isEqualTo(md5);
        }
    }

    /**
     * A paced body has no file the client can read by itself, so it still goes through the stream
     * form and into memory (README says so); when that runs out, the caller sees the JVM's
     * OutOfMemoryError, not a store failure to retry.
     */
    @Test
    void aPacedBodyAboveTheHeapFailsAsTheJvmsErrorNotAsAStoreFailure(@TempDir Path dir) throws Exception {
        S3Server server = S3Servers.s3proxy();
        ChildRun run = upload(dir, dir.resolve("body.bin"), server, server.createBucket("minio-paced-put"), "paced");
        assertThat(run.exit()).as(run.output()).isNotZero();
        assertThat(run.output()).contains("java.lang.OutOfMemoryError").doesNotContain("StoreException");
    }

    private record ChildRun(int exit, String output) {
    }

    /** Writes {@code file} and has a child JVM upload it ({@code mode}: "file" or "paced"). */
    private static ChildRun upload(Path dir, Path file, S3Server server, String bucket, String mode) throws Exception {
        writeRandom(file);
        Path log = dir.resolve("child-" + mode + ".log");
        Process child = child(server, bucket, file, mode, log);
        assertThat(child.waitFor(5, TimeUnit.MINUTES)).as("child finished").isTrue();
        return new ChildRun(child.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }

    private static void writeRandom(Path file) throws IOException {
        Random random = new Random(18);
        byte[] block = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long written = 0; written < BODY; written += block.length) {
                random.nextBytes(block);
                out.write(block);
            }
        }
    }

    private static Process child(S3Server server, String bucket, Path file, String mode, Path log) throws IOException {
        return new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx32m", "-cp", System.getProperty("java.class.path"), Child.class.getName(),
                server.endpoint().toString(), server.region(), bucket,
                server.credentials().accessKey().orElseThrow(), server.credentials().secretKey().orElseThrow(),
                file.toString(), mode)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /** The upload, in a JVM with a small heap. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            RemoteStoreSettings settings = RemoteStoreSettings.builder(args[2])
                    .endpoint(URI.create(args[0])).region(args[1]).pathStyle(true)
                    .credentials(Credentials.ofKeys(args[3], args[4]))
                    .multipart(256L * 1024 * 1024, 16L * 1024 * 1024, 4)
                    .timeouts(Duration.ofSeconds(5), Duration.ofSeconds(120))
                    .build();
            try (ObjectStore store = MinioWire.store(settings)) {
                UploadBody body = UploadBody.ofFile(Path.of(args[5]));
                if (args[6].equals("paced")) {
                    body = body.paced(bytes -> { });
                }
                var put = store.put("single", body, PutOptions.defaults());
                System.out.println("parts=" + put.parts() + " size=" + Files.size(Path.of(args[5])));
            }
        }
    }
}
