package dev.felix.offload.bench;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An S3 server for one benchmark section: S3Mock or S3Proxy (on {@code filesystem-nio2}, SigV4
 * checked) started by the tests' own harness ({@link S3Servers#start}), or Ceph's RADOS Gateway
 * through {@link CephRgw}; so the benchmarks measure the servers exactly as the tests run them.
 * Stopped on {@link #close()} and at JVM exit.
 */
final class S3ServerProcess implements AutoCloseable {

    static final String S3MOCK = "s3mock";
    static final String S3PROXY = "s3proxy";
    static final String RGW = "rgw";

    final String name;
    final URI endpoint;
    final String accessKey;
    final String secretKey;
    final String region;
    private final S3Server server;
    private final Runnable stopper;
    private final Path log;

    private S3ServerProcess(String name, S3Server server, Runnable stopper, Path log) {
        this.name = name;
        this.server = server;
        this.endpoint = server.endpoint();
        this.accessKey = server.credentials().accessKey().orElseThrow();
        this.secretKey = server.credentials().secretKey().orElseThrow();
        this.region = server.region();
        this.stopper = stopper;
        this.log = log;
    }

    String label() {
        return label(name);
    }

    /** How the tables name server {@code name}, also where it could not be started. */
    static String label(String name) {
        return switch (name) {
            case S3MOCK -> "S3Mock 4.11.0";
            case RGW -> "Ceph RGW 16.2 (memstore OSD)";
            case S3PROXY -> "S3Proxy 2.7.0 (filesystem-nio2)";
            default -> name;
        };
    }

    static S3ServerProcess start(String name, Path dir) throws IOException {
        return switch (name) {
            case S3MOCK -> startJavaServer(S3MOCK, dir, "felix.s3mock.jar", "bench.s3mock.jar", "s3mock-exec.jar", "s3mock.log");
            case S3PROXY -> startJavaServer(S3PROXY, dir, "felix.s3proxy.jar", "bench.s3proxy.jar", "s3proxy.jar", "s3proxy.log");
            case RGW -> startRgw(dir);
            default -> throw new IllegalArgumentException("unknown server " + name + "; use s3mock, s3proxy or rgw");
        };
    }

    /**
     * Ceph's RADOS Gateway in front of a one-node cluster, started by the test harness's
     * {@link CephRgw} (Debian's {@code radosgw ceph-mon ceph-osd ceph-common} must be installed).
     */
    private static S3ServerProcess startRgw(Path dir) throws IOException {
        Optional<String> missing = CephRgw.missingPackages();
        if (missing.isPresent()) {
            throw new IOException(missing.get());
        }
        Path rgwDir = Files.createDirectories(dir).resolve("rgw");
        System.setProperty("felix.rgw.dir", rgwDir.toString());
        // Room for a round's sides (a GiB each, deleted after each, freed by the gateway's collector a
        // few seconds later) with margin; the OSD only takes the memory it holds data in.
        if (System.getProperty("felix.rgw.memstore.bytes") == null) {
            System.setProperty("felix.rgw.memstore.bytes", Long.toString(10L << 30));
        }
        // The gateway as deployed, at Ceph's own debug levels: the tests turn them down to save CPU.
        if (System.getProperty("felix.rgw.debug") == null) {
            System.setProperty("felix.rgw.debug", "default");
        }
        try {
            return new S3ServerProcess(RGW, CephRgw.server(), CephRgw::shutdown, rgwDir.resolve("log"));
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * A java server through the harness. Its jar: {@code -D<benchProperty>}; else the copy beside
     * felix-bench.jar in {@code s3-servers/} (where the build puts it); else the harness's own
     * lookup (its property, then the local Maven repository).
     */
    private static S3ServerProcess startJavaServer(String name, Path dir, String harnessProperty, String benchProperty,
            String fileName, String logName) throws IOException {
        String configured = System.getProperty(benchProperty);
        if (configured != null) {
            System.setProperty(harnessProperty, configured);
        } else if (System.getProperty(harnessProperty) == null) {
            besideBenchJar(fileName).ifPresent(p -> System.setProperty(harnessProperty, p.toString()));
        }
        Files.createDirectories(dir);
        try {
            S3Server server = S3Servers.start(name, dir);
            return new S3ServerProcess(name, server, server::stop, dir.resolve(logName));
        } catch (IllegalStateException | UncheckedIOException e) {
            throw new IOException(name + " did not start: " + e.getMessage(), e);
        }
    }

    private static Optional<Path> besideBenchJar(String fileName) {
        try {
            Path self = Path.of(S3ServerProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path beside = self.getParent().resolve("s3-servers").resolve(fileName);
            return Files.isRegularFile(beside) ? Optional.of(beside) : Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    /**
     * A plain SDK client as a user would configure one for an S3-compatible server: path style, and no
     * aws-chunked bodies with checksum trailers (S3Proxy refuses them; S3Mock is slow with them). The
     * same client settings as the project's S3 store, so only what the project adds differs.
     */
    S3Client client(int maxConnections) {
        return S3Client.builder()
                .endpointOverride(endpoint)
                .region(Region.of(region))
                .forcePathStyle(true)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(maxConnections))
                .build();
    }

    S3Client admin() {
        return server.admin();
    }

    /** The project's store settings for {@code bucket} here: what an {@code s3://} URI gives by default. */
    RemoteStoreSettings settings(String bucket) {
        return RemoteStoreSettings.builder(bucket).endpoint(endpoint).region(region).pathStyle(true)
                .credentials(Credentials.ofKeys(accessKey, secretKey)).build();
    }

    /** The store URI the CLI would be given. */
    String storeUri(String bucket) {
        return "s3://" + bucket + "?endpoint=" + endpoint + "&region=" + region + "&path-style=true";
    }

    /** Creates {@code bucket} unless this server already has it (a section run once per segment size). */
    void createBucket(String bucket) {
        try {
            admin().headBucket(b -> b.bucket(bucket));
        } catch (NoSuchBucketException absent) {
            admin().createBucket(b -> b.bucket(bucket));
        }
    }

    /** Deletes every object under {@code prefix} in {@code bucket}. */
    void deleteAll(String bucket, String prefix) {
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response page = admin().listObjectsV2(b -> b.bucket(bucket).prefix(prefix).continuationToken(t));
            List<ObjectIdentifier> ids = new ArrayList<>();
            for (S3Object o : page.contents()) {
                ids.add(ObjectIdentifier.builder().key(o.key()).build());
            }
            if (!ids.isEmpty()) {
                admin().deleteObjects(b -> b.bucket(bucket).delete(Delete.builder().objects(ids).quiet(true).build()));
            }
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
    }

    /** Bytes stored under {@code prefix}, by listing. */
    long storedBytes(String bucket, String prefix) {
        return countKeys(bucket, prefix)[1];
    }

    /** Keys and their bytes under {@code prefix} in {@code bucket}, by listing. */
    long[] countKeys(String bucket, String prefix) {
        long keys = 0;
        long bytes = 0;
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response page = admin().listObjectsV2(b -> b.bucket(bucket).prefix(prefix).continuationToken(t));
            for (S3Object o : page.contents()) {
                keys++;
                bytes += o.size();
            }
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
        return new long[] {keys, bytes};
    }

    @Override
    public void close() {
        stopper.run();
    }

    Path log() {
        return log;
    }
}
