package dev.felix.offload.reliability;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.remote.Credentials;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Where one data root offloads to: the URI the process is given, its environment (credentials
 * never go on a command line), and the same store opened in the test JVM for checks.
 */
interface StoreTarget {

    /** The {@code --store} URI. */
    String uri();

    /** Environment variables the process needs. */
    Map<String, String> env();

    /** The same store, opened here. */
    ObjectStore open() throws IOException;

    String describe();

    /**
     * What the stores keep for themselves under the reserved {@code .felix-} prefix (capability
     * probes, staging files), which listings never show and the orphan sweep never sees: a process
     * killed mid-probe or mid-put leaves them until a later probe (an hour on) or a later open of the
     * filesystem store (a day on) removes them.
     */
    default List<String> reservedLeftovers() throws IOException {
        return List.of();
    }

    /** A fresh filesystem store under {@code dir}. */
    static StoreTarget filesystem(Path dir) {
        String uri = dir.toAbsolutePath().toUri().toString();
        return new StoreTarget() {
            @Override
            public String uri() {
                return uri;
            }

            @Override
            public Map<String, String> env() {
                return Map.of();
            }

            @Override
            public ObjectStore open() throws IOException {
                return StoreUri.parse(uri).open();
            }

            @Override
            public String describe() {
                return "filesystem store " + uri;
            }

            @Override
            public List<String> reservedLeftovers() throws IOException {
                Path staging = dir.resolve(".felix-staging");
                if (!java.nio.file.Files.isDirectory(staging)) {
                    return List.of();
                }
                try (var files = java.nio.file.Files.list(staging)) {
                    return files.map(f -> ".felix-staging/" + f.getFileName()).toList();
                }
            }
        };
    }

    /** A fresh bucket on S3Mock, reached directly. */
    static StoreTarget s3mock(String hint) {
        S3Server server = S3Servers.s3mock();
        return s3(server, server.createBucket(hint), null, null);
    }

    /**
     * {@code bucket} on {@code server}, reached directly or through {@code endpoint} (a proxy in
     * front of it), with more URI parameters ({@code name=value&...}) when given.
     */
    static StoreTarget s3(S3Server server, String bucket, URI endpoint, String extraParameters) {
        URI via = endpoint == null ? server.endpoint() : endpoint;
        String uri = "s3://" + bucket + "?endpoint=" + via + "&region=" + server.region() + "&path-style=true"
                + (extraParameters == null || extraParameters.isEmpty() ? "" : "&" + extraParameters);
        Credentials credentials = server.credentials();
        String access = credentials.accessKey().orElseThrow();
        String secret = credentials.secretKey().orElseThrow();
        return new StoreTarget() {
            @Override
            public String uri() {
                return uri;
            }

            @Override
            public Map<String, String> env() {
                return Map.of("AWS_ACCESS_KEY_ID", access, "AWS_SECRET_ACCESS_KEY", secret, "AWS_REGION", server.region());
            }

            @Override
            public ObjectStore open() throws IOException {
                return StoreUri.parse(uri).open(credentials);
            }

            @Override
            public String describe() {
                return "S3Mock bucket " + bucket + " via " + via;
            }

            @Override
            public List<String> reservedLeftovers() {
                return server.admin().listObjectsV2(b -> b.bucket(bucket).prefix(".felix-")).contents().stream()
                        .map(o -> o.key()).toList();
            }
        };
    }
}
