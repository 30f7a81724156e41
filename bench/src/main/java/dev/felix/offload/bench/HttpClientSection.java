package dev.felix.offload.bench;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.crt.AwsCrtHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import dev.felix.offload.store.s3.UnsignedBodySigning;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Which HTTP client, and whether to sign payloads, for the S3 store: the same sealed segment files
 * put and then fetched whole with one SDK client per side, {@code parallelism} requests at a time.
 * Every side is configured as the store configures its client (path style, no aws-chunked bodies, no
 * SDK checksums) and differs in one thing: the HTTP client (Apache, the CRT-based client, the JDK's
 * URLConnection) or payload signing. Over plain HTTP the SDK signs each body's SHA-256, which reads
 * every body twice and hashes it once; with signing off it sends {@code UNSIGNED-PAYLOAD}, as it does
 * over HTTPS. The baseline is what the store does today: Apache, payload signed.
 */
final class HttpClientSection {

    static final String BASELINE = "apache, signed payload";
    static final List<String> SIDES = List.of(BASELINE, "apache, unsigned payload", "crt, unsigned payload",
            "url-connection, unsigned payload");

    /** What one server's runs measured: MiB/s per side, and each round's ratio to the baseline. */
    static final class Result {
        final String server;
        final Map<String, List<Double>> putMibps = new LinkedHashMap<>();
        final Map<String, List<Double>> getMibps = new LinkedHashMap<>();
        final Map<String, List<Double>> putRatio = new LinkedHashMap<>();
        final Map<String, List<Double>> getRatio = new LinkedHashMap<>();
        final Map<String, String> failures = new LinkedHashMap<>();

        Result(String server) {
            this.server = server;
            for (String side : SIDES) {
                putMibps.put(side, new ArrayList<>());
                getMibps.put(side, new ArrayList<>());
                putRatio.put(side, new ArrayList<>());
                getRatio.put(side, new ArrayList<>());
            }
        }
    }

    private final BenchConfig config;
    private final RootGenerator.Root root;

    HttpClientSection(BenchConfig config, RootGenerator.Root root) {
        this.config = config;
        this.root = root;
    }

    Result run(S3ServerProcess server) {
        String bucket = "bench-http";
        server.createBucket(bucket);
        Result result = new Result(server.label());
        for (int round = -config.warmups; round < config.runs; round++) {
            Map<String, double[]> thisRound = new LinkedHashMap<>();
            for (int i = 0; i < SIDES.size(); i++) {
                String side = SIDES.get(Math.floorMod(i + round, SIDES.size()));
                if (result.failures.containsKey(side)) {
                    continue;
                }
                String prefix = (round < 0 ? "warm" + (-round) : "run" + round) + "-" + i;
                try (S3Client client = client(server, side)) {
                    double put = timed(() -> putAll(client, bucket, prefix));
                    double get = timed(() -> getAll(client, bucket, prefix));
                    double mib = root.sealedBytes() / (double) BenchConfig.MiB;
                    thisRound.put(side, new double[] {mib / put, mib / get});
                    System.out.printf("  [http %s] %s %s: put %.1f MiB/s, get %.1f MiB/s%n", server.name,
                            round < 0 ? "warm-up" : "run " + (round + 1) + "/" + config.runs, side, mib / put,
                            mib / get);
                } catch (IOException | RuntimeException e) {
                    result.failures.put(side, "failed: " + e.getMessage());
                    System.out.printf("  [http %s] %s failed: %s%n", server.name, side, e);
                } finally {
                    server.deleteAll(bucket, prefix + "/");
                }
            }
            if (round >= 0) {
                double[] base = thisRound.get(BASELINE);
                for (Map.Entry<String, double[]> e : thisRound.entrySet()) {
                    result.putMibps.get(e.getKey()).add(e.getValue()[0]);
                    result.getMibps.get(e.getKey()).add(e.getValue()[1]);
                    if (base != null) {
                        result.putRatio.get(e.getKey()).add(e.getValue()[0] / base[0]);
                        result.getRatio.get(e.getKey()).add(e.getValue()[1] / base[1]);
                    }
                }
            }
        }
        return result;
    }

    private double timed(Callable<Void> work) throws IOException {
        long start = System.nanoTime();
        try {
            work.call();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private Void putAll(S3Client client, String bucket, String prefix) throws IOException {
        List<Callable<Void>> calls = new ArrayList<>();
        for (Path file : root.sealed()) {
            String key = key(prefix, file);
            calls.add(() -> {
                client.putObject(b -> b.bucket(bucket).key(key).contentType("application/octet-stream"),
                        RequestBody.fromFile(file));
                return null;
            });
        }
        return inParallel(calls);
    }

    private Void getAll(S3Client client, String bucket, String prefix) throws IOException {
        List<Callable<Void>> calls = new ArrayList<>();
        for (Path file : root.sealed()) {
            String key = key(prefix, file);
            calls.add(() -> {
                byte[] buf = new byte[256 * 1024];
                try (InputStream in = client.getObject(b -> b.bucket(bucket).key(key))) {
                    while (in.read(buf) >= 0) {
                        continue; // the bytes are only counted by the clock
                    }
                }
                return null;
            });
        }
        return inParallel(calls);
    }

    private Void inParallel(List<Callable<Void>> calls) throws IOException {
        Parallel.run(config.offloadParallelism, calls);
        return null;
    }

    static String key(String prefix, Path file) {
        return prefix + "/" + file.getParent().getFileName() + "/" + file.getFileName();
    }

    /** The store's client settings, with this side's HTTP client and payload signing. */
    private S3Client client(S3ServerProcess server, String side) {
        int connections = config.offloadParallelism * 2 + 16;
        SdkHttpClient.Builder<?> http;
        if (side.startsWith("crt")) {
            http = AwsCrtHttpClient.builder().maxConcurrency(connections);
        } else if (side.startsWith("url-connection")) {
            http = UrlConnectionHttpClient.builder();
        } else {
            http = ApacheHttpClient.builder().maxConnections(connections);
        }
        S3ClientBuilder b = S3Client.builder()
                .endpointOverride(server.endpoint)
                .region(Region.of(server.region))
                .forcePathStyle(true)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(server.accessKey, server.secretKey)))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .httpClientBuilder(http);
        if (side.endsWith("unsigned payload")) {
            // The SDK's signer hashes every body over plain HTTP whatever its settings say; this one does not.
            b.putAuthScheme(new UnsignedBodySigning());
        }
        return b.build();
    }
}
