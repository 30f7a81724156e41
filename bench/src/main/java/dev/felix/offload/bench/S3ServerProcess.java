package dev.felix.offload.bench;

import dev.felix.offload.store.harness.CephRgw;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.RemoteStoreSettings;
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
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * An S3 server run as a separate java process from its own jar, started the way the project's tests
 * start them (object-store's {@code S3Servers}): S3Mock, or S3Proxy on {@code filesystem-nio2} with
 * SigV4 checked; or Ceph's RADOS Gateway, through the test harness's {@link CephRgw} itself. Stopped
 * on {@link #close()} and at JVM exit.
 */
final class S3ServerProcess implements AutoCloseable {

    static final String S3MOCK = "s3mock";
    static final String S3PROXY = "s3proxy";
    static final String RGW = "rgw";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    final String name;
    final URI endpoint;
    final String accessKey;
    final String secretKey;
    final String region = "us-east-1";
    /** Stops the server; for a java process its {@link #stopProcess}. */
    private final Runnable stopper;
    private final Path log;
    private final Thread hook;
    private S3Client admin;

    private S3ServerProcess(String name, URI endpoint, String accessKey, String secretKey, Process process, Path log) {
        this(name, endpoint, accessKey, secretKey, () -> stopProcess(process), log);
    }

    private S3ServerProcess(String name, URI endpoint, String accessKey, String secretKey, Runnable stopper, Path log) {
        this.name = name;
        this.endpoint = endpoint;
        this.accessKey = accessKey;
        this.secretKey = secretKey;
        this.stopper = stopper;
        this.log = log;
        this.hook = new Thread(this::stop, "stop-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    String label() {
        return switch (name) {
            case S3MOCK -> "S3Mock 4.11.0";
            case RGW -> "Ceph RGW 16.2 (memstore OSD)";
            default -> "S3Proxy 2.7.0 (filesystem-nio2)";
        };
    }

    static S3ServerProcess start(String name, Path dir) throws IOException {
        return switch (name) {
            case S3MOCK -> startS3Mock(dir);
            case S3PROXY -> startS3Proxy(dir);
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
        S3Server s;
        try {
            s = CephRgw.server();
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        return new S3ServerProcess(RGW, s.endpoint(), s.credentials().accessKey().orElseThrow(),
                s.credentials().secretKey().orElseThrow(), CephRgw::shutdown, rgwDir.resolve("log"));
    }

    private static S3ServerProcess startS3Mock(Path dir) throws IOException {
        Path data = Files.createDirectories(dir.resolve("s3mock-data"));
        int http = freePort();
        int https = freePort();
        URI endpoint = URI.create("http://127.0.0.1:" + http);
        List<String> args = List.of("--com.adobe.testing.s3mock.http-port=" + http, "--server.port=" + https,
                "--server.address=127.0.0.1", "--com.adobe.testing.s3mock.store.root=" + data,
                "--com.adobe.testing.s3mock.store.retain-files-on-exit=false");
        Path log = dir.resolve("s3mock.log");
        Process p = launch(jar("bench.s3mock.jar", "s3mock-exec.jar", "com/adobe/testing/s3mock/4.11.0/s3mock-4.11.0-exec.jar"),
                args, log);
        waitUntil(S3MOCK, p, log, () -> answers(endpoint.resolve("/actuator/health"), "application/json", true));
        // S3Mock checks no signatures: any key pair works.
        return new S3ServerProcess(S3MOCK, endpoint, "bench-access", "bench-secret", p, log);
    }

    private static S3ServerProcess startS3Proxy(Path dir) throws IOException {
        Path data = Files.createDirectories(dir.resolve("s3proxy-data"));
        int port = freePort();
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        SecureRandom random = new SecureRandom();
        String access = "bench" + HexFormat.of().formatHex(random.generateSeed(6));
        String secret = HexFormat.of().formatHex(random.generateSeed(20));
        Path properties = dir.resolve("s3proxy.properties");
        Files.writeString(properties, String.join("\n",
                "s3proxy.endpoint=" + endpoint,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + access,
                "s3proxy.credential=" + secret,
                "s3proxy.ignore-unknown-headers=true",
                "jclouds.provider=filesystem-nio2",
                "jclouds.identity=unused",
                "jclouds.credential=unused",
                "jclouds.filesystem.basedir=" + data,
                ""), StandardCharsets.UTF_8);
        Path log = dir.resolve("s3proxy.log");
        Process p = launch(jar("bench.s3proxy.jar", "s3proxy.jar", "org/gaul/s3proxy/2.7.0/s3proxy-2.7.0-jar-with-dependencies.jar"),
                List.of("--properties", properties.toString()), log);
        waitUntil(S3PROXY, p, log, () -> answers(endpoint.resolve("/"), null, false));
        return new S3ServerProcess(S3PROXY, endpoint, access, secret, p, log);
    }

    /**
     * The jar: the system property; else beside felix-bench.jar in {@code s3-servers/} (where the build
     * copies it); else in the local Maven repository.
     */
    private static Path jar(String property, String fileName, String repositoryPath) throws IOException {
        String configured = System.getProperty(property);
        if (configured != null) {
            return Path.of(configured);
        }
        try {
            Path self = Path.of(S3ServerProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path beside = self.getParent().resolve("s3-servers").resolve(fileName);
            if (Files.isRegularFile(beside)) {
                return beside;
            }
        } catch (Exception e) {
            // fall through to the repository
        }
        String repo = System.getProperty("maven.repo.local",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString());
        Path p = Path.of(repo).resolve(repositoryPath);
        if (!Files.isRegularFile(p)) {
            throw new IOException("no " + fileName + ": build the bench module (it copies the server jars) or set -D"
                    + property);
        }
        return p;
    }

    private static Process launch(Path jar, List<String> args, Path log) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("-Xmx1g", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true", "-jar", jar.toString()));
        command.addAll(args);
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static void waitUntil(String name, Process p, Path log, BooleanSupplier ready) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!ready.getAsBoolean()) {
            if (!p.isAlive()) {
                throw new IOException(name + " exited with " + p.exitValue() + " before it was ready; see " + log);
            }
            if (System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IOException(name + " not ready within 180 s; see " + log);
            }
            try {
                Thread.sleep(150);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
                throw new IOException("interrupted while starting " + name, e);
            }
        }
    }

    private static boolean answers(URI uri, String accept, boolean needUp) {
        try {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).GET();
            if (accept != null) {
                b.header("Accept", accept);
            }
            HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return !needUp || (r.statusCode() == 200 && r.body().contains("\"UP\""));
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
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

    synchronized S3Client admin() {
        if (admin == null) {
            admin = client(8);
        }
        return admin;
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

    void createBucket(String bucket) {
        admin().createBucket(b -> b.bucket(bucket));
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
        long total = 0;
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response page = admin().listObjectsV2(b -> b.bucket(bucket).prefix(prefix).continuationToken(t));
            for (S3Object o : page.contents()) {
                total += o.size();
            }
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
        return total;
    }

    private void stop() {
        stopper.run();
    }

    private static void stopProcess(Process process) {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // shutting down already
        }
    }

    Path log() {
        return log;
    }
}
