package dev.felix.offload.store.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The real S3 servers of a test run, each a separate java process on free 127.0.0.1 ports: Adobe
 * S3Mock and S3Proxy (provider {@code filesystem-nio2}, SigV4 checked). Both start together on
 * first use. In a Maven build that sets {@code felix.test.servers.dir} (the parent pom does) they
 * are the build's, started by the first test JVM that needs them and shared by all the others
 * ({@link SharedServers}: data and logs under that directory, stopped when the build ends);
 * elsewhere they are this JVM's, stopped when it exits (a shutdown hook), data and logs under
 * {@code target/s3-servers/}.
 *
 * <p>The jars come from the Maven repository (copied by {@code maven-dependency-plugin}); their
 * paths arrive as system properties {@code felix.s3mock.jar} and {@code felix.s3proxy.jar}, and
 * the working directory as {@code felix.s3.servers.dir}. Other modules reusing this harness from
 * the test-jar may set the same properties, or rely on the fallback: the artifacts in the local
 * Maven repository (declare them, with their classifiers, for {@code dependency:copy} or
 * {@code dependency:get} so a fresh machine has them).
 */
public final class S3Servers {
    /** The KMS key S3Mock is started with; it refuses unknown ones with KMS.NotFoundException. */
    public static final String S3MOCK_KMS_ARN = "arn:aws:kms:us-east-1:111122223333:key/felix-test-key";

    /** The id part of {@link #S3MOCK_KMS_ARN}: what S3Mock checks requests against. */
    public static final String S3MOCK_KMS_KEY = "felix-test-key";

    private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static CompletableFuture<S3Server> s3mock;
    private static CompletableFuture<S3Server> s3proxy;

    private S3Servers() {}

    public static S3Server s3mock() {
        startAll();
        return join(s3mock);
    }

    public static S3Server s3proxy() {
        startAll();
        return join(s3proxy);
    }

    private static S3Server join(CompletableFuture<S3Server> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw new IllegalStateException("S3 server did not start: " + e.getCause().getMessage(), e.getCause());
        }
    }

    private static synchronized void startAll() {
        if (s3mock != null) {
            return;
        }
        Path dir = Path.of(System.getProperty("felix.s3.servers.dir", "target/s3-servers")).toAbsolutePath();
        Optional<SharedServers> shared = SharedServers.ofThisBuild();
        if (shared.isPresent()) {
            s3mock = CompletableFuture.supplyAsync(() -> shared(shared.get(), "s3mock",
                    (work, processes) -> launchS3Mock(dir, work, processes::add).server(), S3Servers::s3mockAnswers));
            s3proxy = CompletableFuture.supplyAsync(() -> shared(shared.get(), "s3proxy",
                    (work, processes) -> launchS3Proxy(dir, work, processes::add).server(), S3Servers::s3proxyAnswers));
        } else {
            s3mock = CompletableFuture.supplyAsync(() -> startS3Mock(dir));
            s3proxy = CompletableFuture.supplyAsync(() -> startS3Proxy(dir));
        }
    }

    private static S3Server shared(SharedServers build, String name, SharedServers.Launch launch, Predicate<URI> answers) {
        try {
            return build.obtain(name, launch, answers);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + name, e);
        }
    }

    /**
     * The servers for a program of its own (the benchmarks), outside the shared ones of a test run:
     * {@code "s3mock"} or {@code "s3proxy"}, data and log under {@code dir}, stopped by
     * {@link S3Server#stop()} or at JVM exit, whichever comes first.
     */
    public static S3Server start(String which, Path dir) {
        return switch (which) {
            case "s3mock" -> startS3Mock(dir);
            case "s3proxy" -> startS3Proxy(dir);
            default -> throw new IllegalArgumentException("unknown S3 server '" + which + "': s3mock or s3proxy");
        };
    }

    /**
     * The jar named by {@code property}; else the copy in {@code dir}; else the artifact in the local
     * Maven repository, where any build that declared it has put it.
     */
    private static Path jar(String property, Path dir, String fileName, String repositoryPath) {
        String configured = System.getProperty(property);
        if (configured != null) {
            return Path.of(configured);
        }
        Path copied = dir.resolve(fileName);
        if (Files.isRegularFile(copied)) {
            return copied;
        }
        String repo = System.getProperty("maven.repo.local",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString());
        return Path.of(repo).resolve(repositoryPath);
    }

    private static List<String> s3mockJvmArgs() {
        return List.of("-Xmx768m", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true");
    }

    /**
     * S3Proxy compiles with C1 only: measured here, an offload of 5,080 segments of 64 KiB through it cost
     * the server 8.0-8.5 s of CPU (start-up 1.9-2.3 s) against 11.6-18.4 s (2.9-3.5 s) with C2, and ran
     * faster. S3Mock keeps both compilers: under the same load C1 alone cost it 62-70 s against 55 s.
     */
    private static List<String> s3proxyJvmArgs() {
        return List.of("-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true");
    }

    /** A server of this JVM's, stopped at its exit or by {@link S3Server#stop()}. */
    private static S3Server startS3Mock(Path dir) {
        try {
            Launched l = launchS3Mock(dir, dir, p -> {});
            return l.server().stoppedBy(stopOnExit(l.process()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static S3Server startS3Proxy(Path dir) {
        try {
            Launched l = launchS3Proxy(dir, dir, p -> {});
            return l.server().stoppedBy(stopOnExit(l.process()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A started server process and the handle tests use (which stops nothing). */
    record Launched(ServerProcess process, S3Server server) {}

    static boolean s3mockAnswers(URI endpoint) {
        return answers(endpoint.resolve("/actuator/health"), "application/json", true);
    }

    static boolean s3proxyAnswers(URI endpoint) {
        return answers(endpoint.resolve("/"), null, false);
    }

    /** S3Mock with its jar found from {@code jars}, data and log in {@code work}. */
    private static Launched launchS3Mock(Path jars, Path work, Consumer<ProcessHandle> spawned) throws IOException {
        Path data = freshDirectory(work.resolve("s3mock-data"));
        int http = ServerProcess.freePort();
        int https = ServerProcess.freePort();
        URI endpoint = URI.create("http://127.0.0.1:" + http);
        ServerProcess process = ServerProcess.start("S3Mock", jar("felix.s3mock.jar", jars, "s3mock-exec.jar",
                "com/adobe/testing/s3mock/4.11.0/s3mock-4.11.0-exec.jar"), s3mockJvmArgs(),
                List.of("--com.adobe.testing.s3mock.http-port=" + http,
                        "--server.port=" + https,
                        "--server.address=127.0.0.1",
                        "--com.adobe.testing.s3mock.store.root=" + data,
                        "--com.adobe.testing.s3mock.store.retain-files-on-exit=true",
                        "--com.adobe.testing.s3mock.store.valid-kms-keys=" + S3MOCK_KMS_ARN),
                work.resolve("s3mock.log"), spawned,
                () -> s3mockAnswers(endpoint),
                START_TIMEOUT);
        // S3Mock checks no signatures: any key pair works.
        return new Launched(process, new S3Server("S3Mock", endpoint, "s3mock-access", "s3mock-secret", "us-east-1"));
    }

    /** S3Proxy with its jar found from {@code jars}, data, configuration and log in {@code work}. */
    static Launched launchS3Proxy(Path jars, Path work, Consumer<ProcessHandle> spawned) throws IOException {
        Path data = freshDirectory(work.resolve("s3proxy-data"));
        int port = ServerProcess.freePort();
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        SecureRandom random = new SecureRandom();
        String access = "felix" + HexFormat.of().formatHex(random.generateSeed(6));
        String secret = HexFormat.of().formatHex(random.generateSeed(20));
        Path properties = work.resolve("s3proxy.properties");
        Files.writeString(properties, String.join("\n",
                "s3proxy.endpoint=" + endpoint,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + access,
                "s3proxy.credential=" + secret,
                // without this S3Proxy answers 501 to any x-amz-checksum-* header
                "s3proxy.ignore-unknown-headers=true",
                "jclouds.provider=filesystem-nio2",
                "jclouds.identity=unused",
                "jclouds.credential=unused",
                "jclouds.filesystem.basedir=" + data,
                ""), StandardCharsets.UTF_8);
        ServerProcess process = ServerProcess.start("S3Proxy", jar("felix.s3proxy.jar", jars, "s3proxy.jar",
                "org/gaul/s3proxy/2.7.0/s3proxy-2.7.0-jar-with-dependencies.jar"), s3proxyJvmArgs(),
                List.of("--properties", properties.toString()),
                work.resolve("s3proxy.log"), spawned,
                () -> s3proxyAnswers(endpoint),
                START_TIMEOUT);
        return new Launched(process, new S3Server("S3Proxy", endpoint, access, secret, "us-east-1"));
    }

    /** Stops the process at JVM exit; the returned action stops it before that (once, hook removed). */
    private static Runnable stopOnExit(ServerProcess process) {
        Thread hook = new Thread(process::stop, "stop-" + process.name());
        Runtime.getRuntime().addShutdownHook(hook);
        return () -> {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                return; // the hook runs anyway
            }
            process.stop();
        };
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

    private static Path freshDirectory(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
        return Files.createDirectories(dir);
    }
}
