package dev.felix.offload.store.harness;

import dev.felix.offload.store.RetryPolicy;
import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A running S3 server the tests talk to: where it is and the keys it accepts. Its admin client
 * (a plain SDK client) creates buckets and inspects what the stores left behind.
 */
public final class S3Server {
    private static final AtomicInteger BUCKETS = new AtomicInteger();
    private static final String JVM_TOKEN = String.format("%08x", new SecureRandom().nextInt());

    private final String name;
    private final URI endpoint;
    private final String accessKey;
    private final String secretKey;
    private final String region;
    private final Runnable stopper;
    private volatile S3Client admin;

    /** A server someone else stops (the harness, at JVM exit). */
    public S3Server(String name, URI endpoint, String accessKey, String secretKey, String region) {
        this(name, endpoint, accessKey, secretKey, region, () -> {});
    }

    /** A server {@link #stop()} stops. */
    public S3Server(String name, URI endpoint, String accessKey, String secretKey, String region, Runnable stopper) {
        this.stopper = stopper;
        this.name = name;
        this.endpoint = endpoint;
        this.accessKey = accessKey;
        this.secretKey = secretKey;
        this.region = region;
    }

    public String name() {
        return name;
    }

    public URI endpoint() {
        return endpoint;
    }

    public String region() {
        return region;
    }

    public Credentials credentials() {
        return Credentials.ofKeys(accessKey, secretKey);
    }

    /** Store settings for {@code bucket} on this server, with test-sized retries and multipart. */
    public RemoteStoreSettings.Builder settings(String bucket) {
        return RemoteStoreSettings.builder(bucket)
                .endpoint(endpoint)
                .region(region)
                .pathStyle(true)
                .credentials(credentials())
                .multipart(16L * 1024 * 1024, 8L * 1024 * 1024, 4)
                .retryPolicy(new RetryPolicy(4, Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofSeconds(20)))
                .timeouts(Duration.ofSeconds(5), Duration.ofSeconds(60));
    }

    /** A plain SDK client for test set-up and inspection. */
    public S3Client admin() {
        S3Client c = admin;
        if (c == null) {
            synchronized (this) {
                if (admin == null) {
                    admin = S3Client.builder()
                            .endpointOverride(endpoint)
                            .region(Region.of(region))
                            .forcePathStyle(true)
                            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                            .build();
                }
                c = admin;
            }
        }
        return c;
    }

    /**
     * Creates a fresh bucket named after {@code hint}: unique in this JVM by a counter, and among the
     * JVMs sharing a server (a build's modules) by this JVM's random token.
     */
    public String createBucket(String hint) {
        String base = hint.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
        String bucket = (base.length() > 40 ? base.substring(0, 40) : base) + "-" + BUCKETS.incrementAndGet()
                + "-" + JVM_TOKEN;
        bucket = bucket.replaceAll("^-+", "");
        String name = bucket;
        admin().createBucket(b -> b.bucket(name));
        return name;
    }

    /** This server with {@link #stop()} running {@code stopper} (a server of this JVM's own). */
    S3Server stoppedBy(Runnable stopper) {
        return new S3Server(name, endpoint, accessKey, secretKey, region, stopper);
    }

    /** Closes the admin client and stops the server where this handle owns it. */
    public void stop() {
        S3Client c = admin;
        if (c != null) {
            c.close();
        }
        stopper.run();
    }

    @Override
    public String toString() {
        return name + " at " + endpoint;
    }
}
