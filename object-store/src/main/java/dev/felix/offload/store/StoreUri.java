package dev.felix.offload.store;

import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.remote.ChecksumPolicy;
import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.Encryption;
import dev.felix.offload.store.remote.ProbeOptions;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One URI that names a store:
 * <ul>
 *   <li>{@code file:///absolute/path}: the filesystem store rooted there;</li>
 *   <li>{@code s3://bucket[/prefix][?endpoint=URL&region=R&path-style=true]}: the AWS SDK store;</li>
 *   <li>{@code minio://bucket[/prefix]?endpoint=URL[&region=R]}: the MinIO-client store.</li>
 * </ul>
 * Remote URIs also take {@code checksum} (auto, when-required, always), {@code sse} (none, s3,
 * kms), {@code sse-kms-key-id}, {@code storage-class}, {@code multipart-threshold} and
 * {@code part-size} (bytes, with the configuration file's units: {@code 16MiB}), {@code part-concurrency}, {@code max-attempts}, and
 * {@code connect-timeout}, {@code read-timeout}, {@code attempt-timeout}, {@code api-call-timeout}
 * and {@code probe-max-age} (whole seconds: a bare number is seconds, or a duration such as
 * {@code 30s}, {@code 2m}, as the configuration file writes them), and {@code ca-bundle} (a PEM file of the CA certificates
 * to trust for an {@code https} endpoint, instead of the JVM's). Credentials are never part of a URI:
 * they come from the environment or the default provider chain (or from code). Every error is a
 * {@link StoreUriException} naming the part that is wrong.
 */
public final class StoreUri {
    public enum Kind {
        FILE,
        S3,
        MINIO
    }

    private static final Set<String> REMOTE_PARAMETERS = Set.of("endpoint", "region", "path-style", "checksum", "sse",
            "sse-kms-key-id", "storage-class", "multipart-threshold", "part-size", "part-concurrency", "max-attempts",
            "attempt-timeout", "api-call-timeout", "connect-timeout", "read-timeout", "ca-bundle", "probe-max-age");

    private final String text;
    private final Kind kind;
    private final Path root;
    private final RemoteStoreSettings settings;

    private StoreUri(String text, Kind kind, Path root, RemoteStoreSettings settings) {
        this.text = text;
        this.kind = kind;
        this.root = root;
        this.settings = settings;
    }

    public Kind kind() {
        return kind;
    }

    /** The filesystem root of a {@code file:} URI. */
    public Optional<Path> root() {
        return Optional.ofNullable(root);
    }

    /** The settings of an {@code s3:} or {@code minio:} URI, with credentials from the default chain. */
    public Optional<RemoteStoreSettings> settings() {
        return Optional.ofNullable(settings);
    }

    @Override
    public String toString() {
        return text;
    }

    /** Opens the store with credentials from the default provider chain. */
    public ObjectStore open() throws IOException {
        return open(Credentials.defaultChain());
    }

    /** Opens the store; {@code credentials} matter only for remote stores. */
    public ObjectStore open(Credentials credentials) throws IOException {
        return open(credentials, ProbeOptions.inMemory());
    }

    /**
     * Opens the store; {@code credentials} and {@code probe} (how what its server does is learnt and
     * kept) matter only for remote stores.
     */
    public ObjectStore open(Credentials credentials, ProbeOptions probe) throws IOException {
        switch (kind) {
            case FILE:
                return FilesystemStore.open(root);
            case S3:
                return AwsSdkWire.store(settings.toBuilder().credentials(credentials).build(), probe);
            default:
                return MinioWire.store(settings.toBuilder().credentials(credentials).build(), probe);
        }
    }

    public static StoreUri parse(String text) {
        if (text == null || text.isBlank()) {
            throw new StoreUriException("scheme", "the URI is empty; use file:///path, s3://bucket or minio://bucket", null);
        }
        if (text.trim().matches("(?i)(s3|minio)://([/?#].*)?")) {
            throw new StoreUriException("bucket", "'" + text + "' names no bucket: s3://bucket[/prefix]", null);
        }
        URI uri;
        try {
            uri = new URI(text.trim());
        } catch (URISyntaxException e) {
            throw new StoreUriException("syntax", "'" + text + "' is not a URI: " + e.getReason()
                    + " at index " + e.getIndex(), e);
        }
        String scheme = uri.getScheme();
        if (scheme == null) {
            throw new StoreUriException("scheme", "'" + text + "' has no scheme; use file:///path, s3://bucket or minio://bucket", null);
        }
        if (uri.getRawUserInfo() != null) {
            throw new StoreUriException("credentials", "credentials must not be written into a store URI; "
                    + "give them through the environment", null);
        }
        if (uri.getRawFragment() != null) {
            throw new StoreUriException("fragment", "a store URI takes no '#" + uri.getRawFragment() + "'", null);
        }
        switch (scheme.toLowerCase(java.util.Locale.ROOT)) {
            case "file":
                return parseFile(text, uri);
            case "s3":
                return parseRemote(text, uri, Kind.S3);
            case "minio":
                return parseRemote(text, uri, Kind.MINIO);
            default:
                throw new StoreUriException("scheme", "'" + scheme + "' is not a store kind; use file, s3 or minio", null);
        }
    }

    private static StoreUri parseFile(String text, URI uri) {
        if (uri.isOpaque()) {
            throw new StoreUriException("path", "'" + text + "' needs an absolute path: file:///path", null);
        }
        String host = uri.getHost();
        if (uri.getRawAuthority() != null && !(host != null && host.equals("localhost"))) {
            throw new StoreUriException("host", "a file URI names a local path: file:///path, not file://"
                    + uri.getRawAuthority() + "/...", null);
        }
        if (uri.getRawQuery() != null) {
            throw new StoreUriException("query", "a file URI takes no parameters", null);
        }
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            throw new StoreUriException("path", "a file URI needs a directory below the file system root", null);
        }
        Path root;
        try {
            root = Path.of(uri);
        } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
            // A NUL written as %00, say: the URI parses but names no path this file system can hold.
            throw new StoreUriException("path", "'" + text + "' names no usable path: " + e.getMessage(), e);
        }
        return new StoreUri(text, Kind.FILE, root, null);
    }

    private static StoreUri parseRemote(String text, URI uri, Kind kind) {
        String scheme = kind == Kind.S3 ? "s3" : "minio";
        String bucket = uri.getRawAuthority();
        if (bucket == null || bucket.isEmpty()) {
            throw new StoreUriException("bucket", "'" + text + "' names no bucket: " + scheme + "://bucket[/prefix]", null);
        }
        if (bucket.contains(":")) {
            throw new StoreUriException("bucket", "'" + bucket + "' is not a bucket name (a port belongs in the endpoint parameter)", null);
        }
        RemoteStoreSettings.Builder b;
        try {
            b = RemoteStoreSettings.builder(bucket);
        } catch (IllegalArgumentException e) {
            throw new StoreUriException("bucket", e.getMessage(), e);
        }
        String path = uri.getPath();
        if (path != null && path.length() > 1) {
            try {
                b.prefix(path.substring(1));
            } catch (IllegalArgumentException e) {
                throw new StoreUriException("prefix", e.getMessage(), e);
            }
        }
        Map<String, String> params = parameters(uri.getRawQuery());
        for (String name : params.keySet()) {
            if (!REMOTE_PARAMETERS.contains(name)) {
                throw new StoreUriException(name, "unknown parameter; known: " + new java.util.TreeSet<>(REMOTE_PARAMETERS), null);
            }
        }
        String endpoint = params.get("endpoint");
        if (endpoint == null && kind == Kind.MINIO) {
            throw new StoreUriException("endpoint", "a minio URI needs ?endpoint=http(s)://host:port", null);
        }
        apply("endpoint", () -> {
            if (endpoint != null) {
                URI e;
                try {
                    e = new URI(endpoint);
                } catch (URISyntaxException ex) {
                    throw new IllegalArgumentException("'" + endpoint + "' is not a URL", ex);
                }
                if (e.getRawPath() != null && !e.getRawPath().isEmpty() && !e.getRawPath().equals("/")) {
                    throw new IllegalArgumentException("'" + endpoint + "' must not have a path; the bucket goes in the URI's host part");
                }
                b.endpoint(e);
            }
        });
        apply("region", () -> {
            if (params.containsKey("region")) {
                b.region(params.get("region"));
            }
        });
        apply("path-style", () -> b.pathStyle(kind == Kind.MINIO || bool(params.getOrDefault("path-style", "false"))));
        apply("checksum", () -> b.checksumMode(ChecksumPolicy.parse(params.getOrDefault("checksum", "auto"))));
        apply("sse", () -> b.encryption(Encryption.parse(params.get("sse"), params.get("sse-kms-key-id"))));
        apply("storage-class", () -> b.storageClass(params.get("storage-class")));
        apply("ca-bundle", () -> {
            if (params.containsKey("ca-bundle")) {
                b.caBundle(dev.felix.offload.store.remote.CaBundle.read(Path.of(params.get("ca-bundle")).toAbsolutePath()));
            }
        });
        RemoteStoreSettings defaults = b.build();
        apply("part-size", () -> {
            long size = byteCount("part-size", params.get("part-size"), defaults.partSize());
            int concurrency = (int) number("part-concurrency", params.get("part-concurrency"), defaults.partConcurrency());
            if (params.containsKey("multipart-threshold")) {
                // the operator's threshold decides alone which bodies go in parts
                b.multipart(byteCount("multipart-threshold", params.get("multipart-threshold"), 0), size, concurrency);
            } else {
                b.parts(size, concurrency);
            }
        });
        apply("probe-max-age", () -> {
            if (params.containsKey("probe-max-age")) {
                long n = wholeSeconds(params.get("probe-max-age"));
                if (n < 0 || n > 366L * 86_400) {
                    throw new StoreUriException("probe-max-age", "'" + params.get("probe-max-age")
                            + "' must be whole seconds from 0 to 366 days (a number of seconds, or 30s, 12h, 1d;"
                            + " 0: probe at every start)", null);
                }
                b.probeMaxAge(java.time.Duration.ofSeconds(n));
            }
        });
        apply("max-attempts", () -> {
            if (params.containsKey("max-attempts")) {
                b.maxAttempts((int) number("max-attempts", params.get("max-attempts"), 0));
            }
        });
        apply("attempt-timeout", () -> {
            if (params.containsKey("attempt-timeout")) {
                b.timeouts(defaults.connectTimeout(), seconds("attempt-timeout", params.get("attempt-timeout")));
            }
        });
        apply("connect-timeout", () -> {
            if (params.containsKey("connect-timeout")) {
                b.connectTimeout(seconds("connect-timeout", params.get("connect-timeout")));
            }
        });
        apply("read-timeout", () -> {
            if (params.containsKey("read-timeout")) {
                b.readTimeout(seconds("read-timeout", params.get("read-timeout")));
            }
        });
        apply("api-call-timeout", () -> {
            if (params.containsKey("api-call-timeout")) {
                b.apiCallTimeout(seconds("api-call-timeout", params.get("api-call-timeout")));
            }
        });
        return new StoreUri(text, kind, null, b.build());
    }

    private static java.time.Duration seconds(String name, String value) {
        long n = wholeSeconds(value);
        if (n < 1 || n > 86_400) {
            throw new StoreUriException(name, "'" + value + "' must be whole seconds from 1 s to 1 day (a number of "
                    + "seconds, or 30s, 2m, 1h)", null);
        }
        return java.time.Duration.ofSeconds(n);
    }

    /** A bare number of seconds, or a duration with a unit that is whole seconds; -1 when it is neither. */
    private static long wholeSeconds(String value) {
        if (value.matches("[0-9]{1,12}")) {
            return Long.parseLong(value);
        }
        java.time.Duration d = Quantities.duration(value);
        return d == null || d.getNano() != 0 ? -1 : d.getSeconds();
    }

    /** A byte count with or without a unit ({@code 16MiB}), for the part sizes. */
    private static long byteCount(String name, String value, long fallback) {
        if (value == null) {
            return fallback;
        }
        Long n = Quantities.bytes(value);
        if (n == null) {
            throw new StoreUriException(name, "'" + value + "' is not a number of bytes (a number, or with a unit: "
                    + "16MiB, 64MB)", null);
        }
        return n;
    }

    private interface Step {
        void run();
    }

    private static void apply(String part, Step step) {
        try {
            step.run();
        } catch (StoreUriException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            // Settings name themselves as "setting 'x'": report that part when it differs.
            int at = message == null ? -1 : message.indexOf("setting '");
            String named = at < 0 ? part : message.substring(at + 9, message.indexOf('\'', at + 9));
            throw new StoreUriException(named, message, e);
        }
    }

    private static boolean bool(String value) {
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        if (value.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("setting 'path-style' must be true or false, not '" + value + "'");
    }

    private static long number(String name, String value, long fallback) {
        if (value == null) {
            return fallback;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new StoreUriException(name, "'" + value + "' is not a whole number", e);
        }
    }

    private static Map<String, String> parameters(String rawQuery) {
        Map<String, String> params = new LinkedHashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return params;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new StoreUriException("query", "'" + pair + "' is not name=value", null);
            }
            String name = URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (value.isEmpty()) {
                throw new StoreUriException(name, "the parameter has no value", null);
            }
            if (params.put(name, value) != null) {
                throw new StoreUriException(name, "the parameter is given twice", null);
            }
        }
        return params;
    }
}
