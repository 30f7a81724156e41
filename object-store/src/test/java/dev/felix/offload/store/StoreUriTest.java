package dev.felix.offload.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.remote.ChecksumPolicy;
import dev.felix.offload.store.remote.Encryption;
import dev.felix.offload.store.remote.RemoteStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StoreUriTest {
    @TempDir
    Path dir;

    @Test
    void fileUriNamesARootDirectory() throws Exception {
        StoreUri uri = StoreUri.parse(dir.toUri().toString());
        assertThat(uri.kind()).isEqualTo(StoreUri.Kind.FILE);
        assertThat(uri.root()).hasValue(dir);
        try (ObjectStore store = uri.open()) {
            assertThat(store).isInstanceOf(FilesystemStore.class);
            store.put("a/b", UploadBody.ofBytes(new byte[] {1}));
            assertThat(dir.resolve("a/b")).exists();
        }
    }

    @Test
    void s3UriCarriesEveryPart() {
        StoreUri uri = StoreUri.parse("s3://my-bucket/tiered/felix?endpoint=http://127.0.0.1:9000&region=eu-west-1"
                + "&path-style=true&checksum=when-required&sse=kms&sse-kms-key-id=key-1&storage-class=STANDARD_IA"
                + "&multipart-threshold=33554432&part-size=8388608&part-concurrency=2&max-attempts=9"
                + "&attempt-timeout=30&api-call-timeout=300");
        RemoteStoreSettings s = uri.settings().orElseThrow();
        assertThat(uri.kind()).isEqualTo(StoreUri.Kind.S3);
        assertThat(s.bucket()).isEqualTo("my-bucket");
        assertThat(s.prefix()).isEqualTo("tiered/felix");
        assertThat(s.fullKey("k")).isEqualTo("tiered/felix/k");
        assertThat(s.endpoint()).hasValue(URI.create("http://127.0.0.1:9000"));
        assertThat(s.region()).isEqualTo("eu-west-1");
        assertThat(s.pathStyle()).isTrue();
        assertThat(s.checksumMode()).isEqualTo(ChecksumPolicy.WHEN_REQUIRED);
        assertThat(s.encryption()).isEqualTo(Encryption.kms("key-1"));
        assertThat(s.storageClass()).hasValue("STANDARD_IA");
        assertThat(s.multipartThreshold()).isEqualTo(32L << 20);
        assertThat(s.partSize()).isEqualTo(8L << 20);
        assertThat(s.partConcurrency()).isEqualTo(2);
        assertThat(s.retryPolicy().maxAttempts()).isEqualTo(9);
        assertThat(s.attemptTimeout()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(s.retryPolicy().maxTotal()).isEqualTo(java.time.Duration.ofSeconds(300));
    }

    @Test
    void s3UriDefaults() {
        RemoteStoreSettings s = StoreUri.parse("s3://bucket.with.dots").settings().orElseThrow();
        assertThat(s.prefix()).isEmpty();
        assertThat(s.endpoint()).isEmpty();
        assertThat(s.region()).isEqualTo("us-east-1");
        assertThat(s.pathStyle()).isFalse();
        assertThat(s.checksumMode()).isEqualTo(ChecksumPolicy.AUTO);
        assertThat(s.encryption()).isEqualTo(Encryption.NONE);
        // a store that does not answer is given up on within seconds, not minutes
        assertThat(s.connectTimeout()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(s.readTimeout()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(s.describe()).contains("connect timeout 5 s, read timeout 30 s");
    }

    @Test
    void connectAndReadTimeoutsAreSettableInWholeSeconds() {
        RemoteStoreSettings s = StoreUri.parse("s3://bkt?connect-timeout=2&read-timeout=7").settings().orElseThrow();
        assertThat(s.connectTimeout()).isEqualTo(java.time.Duration.ofSeconds(2));
        assertThat(s.readTimeout()).isEqualTo(java.time.Duration.ofSeconds(7));
        assertThat(StoreUri.parse("s3://bkt?read-timeout=300&attempt-timeout=60").settings().orElseThrow().readTimeout())
                .as("never longer than an attempt").isEqualTo(java.time.Duration.ofSeconds(60));
        assertThatThrownBy(() -> StoreUri.parse("s3://bkt?read-timeout=0")).isInstanceOf(StoreUriException.class)
                .hasMessageContaining("read-timeout");
        assertThatThrownBy(() -> StoreUri.parse("minio://bkt?endpoint=http://h:9000&connect-timeout=soon"))
                .isInstanceOf(StoreUriException.class).hasMessageContaining("connect-timeout");
    }

    @Test
    void minioUriNeedsAnEndpoint() {
        StoreUri uri = StoreUri.parse("minio://bucket/pre?endpoint=https://minio.example:9000");
        assertThat(uri.kind()).isEqualTo(StoreUri.Kind.MINIO);
        assertThat(uri.settings().orElseThrow().prefix()).isEqualTo("pre");
        assertThatThrownBy(() -> StoreUri.parse("minio://bucket"))
                .isInstanceOfSatisfying(StoreUriException.class, e -> assertThat(e.part()).isEqualTo("endpoint"));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "''|scheme",
        "no-scheme|scheme",
        "ftp://bucket|scheme",
        "s3://|bucket",
        "s3://Upper_Case|bucket",
        "s3://ab|bucket",
        "s3://host:9000/x|bucket",
        "s3://user:secret@bucket|credentials",
        "s3://bucket/a/../b|prefix",
        "s3://bucket?endpoint=ftp://x|endpoint",
        "s3://bucket?endpoint=http://h:1/path|endpoint",
        "s3://bucket?region=EU WEST|syntax",
        "s3://bucket?region=EU_WEST|region",
        "s3://bucket?path-style=yes|path-style",
        "s3://bucket?checksum=sometimes|checksum",
        "s3://bucket?sse=des|sse",
        "s3://bucket?sse-kms-key-id=k|sse-kms-key-id",
        "s3://bucket?storage-class=glacier|storage-class",
        "s3://bucket?part-size=1024|part-size",
        "s3://bucket?part-size=ten|part-size",
        "s3://bucket?part-concurrency=0|part-concurrency",
        "s3://bucket?multipart-threshold=6000000&part-size=8388608|multipart-threshold",
        "s3://bucket?colour=blue|colour",
        "s3://bucket?max-attempts=0|max-attempts",
        "s3://bucket?attempt-timeout=0|attempt-timeout",
        "s3://bucket?api-call-timeout=soon|api-call-timeout",
        "s3://bucket?region=a&region=b|region",
        "s3://bucket?region=|region",
        "s3://bucket?novalue|query",
        "s3://bucket#frag|fragment",
        "file:relative/path|path",
        "file://server/share|host",
        "file:///|path",
        "file:///tmp/x?y=1|query",
        "file:///tmp/x%00y|path",
    })
    void malformedUrisNameTheWrongPart(String text, String part) {
        assertThatThrownBy(() -> StoreUri.parse(text))
                .isInstanceOfSatisfying(StoreUriException.class, e -> assertThat(e.part()).as(e.getMessage()).isEqualTo(part));
    }

    @Test
    void remoteUrisOpenWorkingStoresWithCredentialsGivenApart() throws Exception {
        S3Server server = S3Servers.s3proxy();
        String bucket = server.createBucket("uri");
        String query = "?endpoint=" + server.endpoint() + "&path-style=true&region=" + server.region();
        try (ObjectStore s3 = StoreUri.parse("s3://" + bucket + "/via-sdk" + query).open(server.credentials());
                ObjectStore minio = StoreUri.parse("minio://" + bucket + "/via-minio" + query).open(server.credentials())) {
            assertThat(s3).isInstanceOfSatisfying(RemoteStore.class, r -> assertThat(r.wire()).isInstanceOf(AwsSdkWire.class));
            assertThat(minio).isInstanceOfSatisfying(RemoteStore.class, r -> assertThat(r.wire()).isInstanceOf(MinioWire.class));
            s3.put("k", UploadBody.ofBytes("sdk".getBytes(StandardCharsets.UTF_8)));
            minio.put("k", UploadBody.ofBytes("minio".getBytes(StandardCharsets.UTF_8)));
            assertThat(s3.readAll("k", 10, OptionalLong.empty())).asString().isEqualTo("sdk");
            assertThat(minio.readAll("k", 10, OptionalLong.empty())).asString().isEqualTo("minio");
            assertThat(server.admin().headObject(b -> b.bucket(bucket).key("via-sdk/k")).contentLength()).isEqualTo(3);
            assertThat(server.admin().headObject(b -> b.bucket(bucket).key("via-minio/k")).contentLength()).isEqualTo(5);
            assertThat(s3.describe()).doesNotContain(server.credentials().secretKey().orElseThrow())
                    .doesNotContain(server.credentials().accessKey().orElseThrow());
        }
    }

    /** Store URIs take the configuration file's units: durations for the timeouts, byte units for the parts. */
    @org.junit.jupiter.api.Test
    void timeoutsAndPartSizesTakeTheConfigurationFilesUnits() {
        RemoteStoreSettings units = StoreUri.parse("s3://bkt?connect-timeout=5s&read-timeout=2m&api-call-timeout=1h"
                + "&multipart-threshold=64MiB&part-size=16MiB&probe-max-age=1d").settings().orElseThrow();
        RemoteStoreSettings bare = StoreUri.parse("s3://bkt?connect-timeout=5&read-timeout=120&api-call-timeout=3600"
                + "&multipart-threshold=67108864&part-size=16777216&probe-max-age=86400").settings().orElseThrow();
        assertThat(units.connectTimeout()).isEqualTo(java.time.Duration.ofSeconds(5)).isEqualTo(bare.connectTimeout());
        assertThat(units.readTimeout()).isEqualTo(java.time.Duration.ofMinutes(2)).isEqualTo(bare.readTimeout());
        assertThat(units.partSize()).isEqualTo(16L << 20).isEqualTo(bare.partSize());
        assertThat(units.multipartThreshold()).isEqualTo(64L << 20).isEqualTo(bare.multipartThreshold());
        assertThat(units.probeMaxAge()).isEqualTo(java.time.Duration.ofDays(1)).isEqualTo(bare.probeMaxAge());
        assertThat(units.describe()).isEqualTo(bare.describe());
        assertThatThrownBy(() -> StoreUri.parse("s3://bkt?read-timeout=1500ms"))
                .isInstanceOf(StoreUriException.class).hasMessageContaining("read-timeout").hasMessageContaining("whole seconds");
        assertThatThrownBy(() -> StoreUri.parse("s3://bkt?part-size=16 furlongs"))
                .isInstanceOf(StoreUriException.class).hasMessageContaining("part-size");
    }
}
