package dev.felix.offload.store.remote;

import dev.felix.offload.store.InvalidKeyException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.RetryPolicy;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Everything a remote (S3 or MinIO) store is configured with. Built with {@link #builder(String)};
 * every check names the setting it is about.
 */
public final class RemoteStoreSettings {
    public static final long MIN_PART_SIZE = 5L * 1024 * 1024;
    public static final long MAX_PART_SIZE = 5L * 1024 * 1024 * 1024;
    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
    private static final Pattern REGION = Pattern.compile("[a-z0-9-]{1,64}");
    private static final Pattern STORAGE_CLASS = Pattern.compile("[A-Z][A-Z0-9_]{0,63}");
    /** A connection not made in 5 s will not be made: loopback and LAN connect in milliseconds, distant regions in hundreds. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /**
     * 30 s of silence: S3 answers in milliseconds to seconds, even a large listing or batch delete;
     * a server that says nothing for this long is hung or unreachable.
     */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);

    private final String bucket;
    private final String prefix;
    private final Optional<URI> endpoint;
    /** Where the endpoint came from when not from the store URI (AWS_ENDPOINT_URL, say); empty otherwise. */
    private final Optional<String> endpointSource;
    private final String region;
    private final boolean pathStyle;
    private final Credentials credentials;
    private final ChecksumPolicy checksumMode;
    private final long multipartThreshold;
    private final long partSize;
    private final int partConcurrency;
    private final Encryption encryption;
    private final Optional<String> storageClass;
    private final RetryPolicy retryPolicy;
    private final Duration connectTimeout;
    private final Duration readTimeout;
    private final Duration attemptTimeout;
    private final Optional<CaBundle> caBundle;

    private RemoteStoreSettings(Builder b) {
        this.bucket = b.bucket;
        this.prefix = b.prefix;
        this.endpoint = b.endpoint;
        this.endpointSource = b.endpointSource;
        this.region = b.region;
        this.pathStyle = b.pathStyle;
        this.credentials = b.credentials;
        this.checksumMode = b.checksumMode;
        this.multipartThreshold = b.multipartThreshold;
        this.partSize = b.partSize;
        this.partConcurrency = b.partConcurrency;
        this.encryption = b.encryption;
        this.storageClass = b.storageClass;
        this.retryPolicy = b.retryPolicy;
        this.connectTimeout = b.connectTimeout;
        this.readTimeout = b.readTimeout;
        this.attemptTimeout = b.attemptTimeout;
        this.caBundle = b.caBundle;
    }

    public static Builder builder(String bucket) {
        return new Builder(bucket);
    }

    public Builder toBuilder() {
        Builder b = new Builder(bucket);
        b.prefix = prefix;
        b.endpoint = endpoint;
        b.endpointSource = endpointSource;
        b.region = region;
        b.pathStyle = pathStyle;
        b.credentials = credentials;
        b.checksumMode = checksumMode;
        b.multipartThreshold = multipartThreshold;
        b.partSize = partSize;
        b.partConcurrency = partConcurrency;
        b.encryption = encryption;
        b.storageClass = storageClass;
        b.retryPolicy = retryPolicy;
        b.connectTimeout = connectTimeout;
        b.readTimeout = readTimeout;
        b.attemptTimeout = attemptTimeout;
        b.caBundle = caBundle;
        return b;
    }

    public String bucket() {
        return bucket;
    }

    /** Prepended (with a {@code /}) to every key; empty for none. */
    public String prefix() {
        return prefix;
    }

    public Optional<URI> endpoint() {
        return endpoint;
    }

    public String region() {
        return region;
    }

    public boolean pathStyle() {
        return pathStyle;
    }

    public Credentials credentials() {
        return credentials;
    }

    public ChecksumPolicy checksumMode() {
        return checksumMode;
    }

    /**
     * Bodies longer than this travel as multipart uploads.
     *
     * <p>The default, 64 MiB, sends a broker's 128 MiB segments in parts (8 of 16 MiB, 4 at a time),
     * and stays so on purpose. Over a real network one PUT is one TCP stream, whose rate the
     * round trip bounds; parts in flight together multiply it, a failed part costs 16 MiB again
     * rather than 128, and the attempt timeout bounds 16 MiB. What parts used to cost here was
     * verification: the server kept no whole-object CRC32, so {@code verify=auto} read every segment
     * back. Where the server keeps part CRC32s (AWS S3, S3Mock) head now proves the whole CRC32 from
     * them ({@link PartCrc32s}); where it keeps none (S3Proxy) a single PUT is read back as well, so
     * the threshold no longer decides how a segment is verified. On loopback test servers one PUT is
     * faster (the benchmark's single-PUT pass ran 2.5x the multipart pass on S3Mock, which stores
     * every part and then copies them into the object, 1.3x on S3Proxy), but that measures how those
     * servers assemble parts, not a network; raise {@code multipart-threshold} above the segment size
     * for such a server. The cost of parts elsewhere is nine more requests per segment.
     */
    public long multipartThreshold() {
        return multipartThreshold;
    }

    public long partSize() {
        return partSize;
    }

    /** Parts of one upload in flight at once. */
    public int partConcurrency() {
        return partConcurrency;
    }

    public Encryption encryption() {
        return encryption;
    }

    public Optional<String> storageClass() {
        return storageClass;
    }

    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** The most a new connection may take to be established. */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /**
     * The longest the server may stay silent on a connection: before its answer to a request
     * begins, or between two reads of an answer's body (and, where the client has one, two writes of
     * a request's body). A server that accepts connections and never answers is given up on after
     * this, not after the whole attempt timeout. Never longer than the attempt timeout.
     */
    public Duration readTimeout() {
        return readTimeout.compareTo(attemptTimeout) < 0 ? readTimeout : attemptTimeout;
    }

    /** The most one HTTP attempt may take, including reading its answer. */
    public Duration attemptTimeout() {
        return attemptTimeout;
    }

    /** The CA certificates TLS connections trust instead of the JVM's trust store, when the URI names a bundle. */
    public Optional<CaBundle> caBundle() {
        return caBundle;
    }

    /** The full key of {@code key} in the bucket. */
    public String fullKey(String key) {
        return prefix.isEmpty() ? key : prefix + "/" + key;
    }

    /** The bucket's key prefix listings are made under, with its trailing slash. */
    public String listPrefix() {
        return prefix.isEmpty() ? "" : prefix + "/";
    }

    /**
     * Location without credentials, for logs. It names the endpoint requests really go to: the URI's,
     * one the client took from elsewhere (AWS_ENDPOINT_URL) saying so, or AWS's own for the region.
     */
    public String describe() {
        String at = endpoint.map(e -> " at " + e + endpointSource.map(from -> " (from " + from + ", not the store URI)")
                .orElse("")).orElse(" at https://s3." + region + ".amazonaws.com (AWS; the store URI names no endpoint)");
        return "bucket " + bucket + (prefix.isEmpty() ? "" : " prefix " + prefix)
                + at + " region " + region + ", " + credentials
                + caBundle.map(b -> ", trusting the CA bundle " + b.file()).orElse("")
                + ", checksum " + checksumMode.settingValue() + ", " + retryPolicy.maxAttempts() + " attempts of at most "
                + attemptTimeout.toSeconds() + " s, none begun after " + retryPolicy.maxTotal().toSeconds() + " s"
                + ", connect timeout " + seconds(connectTimeout) + ", read timeout " + seconds(readTimeout());
    }

    /** Whole seconds as "5 s", shorter ones as "500 ms". */
    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    @Override
    public String toString() {
        return describe();
    }

    public static final class Builder {
        private final String bucket;
        private String prefix = "";
        private Optional<URI> endpoint = Optional.empty();
        private Optional<String> endpointSource = Optional.empty();
        private String region = "us-east-1";
        private boolean pathStyle;
        private Credentials credentials = Credentials.defaultChain();
        private ChecksumPolicy checksumMode = ChecksumPolicy.AUTO;
        private long multipartThreshold = 64L * 1024 * 1024;
        private long partSize = 16L * 1024 * 1024;
        private int partConcurrency = 4;
        private Encryption encryption = Encryption.NONE;
        private Optional<String> storageClass = Optional.empty();
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration readTimeout = DEFAULT_READ_TIMEOUT;
        private Duration attemptTimeout = Duration.ofMinutes(2);
        private Optional<CaBundle> caBundle = Optional.empty();

        private Builder(String bucket) {
            if (bucket == null || !BUCKET.matcher(bucket).matches() || bucket.contains("..")) {
                throw new IllegalArgumentException("setting 'bucket' must be 3-63 lower-case letters, digits, '.' or '-', "
                        + "starting and ending with a letter or digit: '" + bucket + "'");
            }
            this.bucket = bucket;
        }

        public Builder prefix(String value) {
            String p = value == null ? "" : value;
            while (p.endsWith("/")) {
                p = p.substring(0, p.length() - 1);
            }
            if (!p.isEmpty()) {
                try {
                    KeyRules.check(p);
                } catch (InvalidKeyException e) {
                    throw new IllegalArgumentException("setting 'prefix': " + e.getMessage(), e);
                }
            }
            this.prefix = p;
            return this;
        }

        public Builder endpoint(URI value) {
            if (value != null) {
                String scheme = value.getScheme();
                if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || value.getHost() == null) {
                    throw new IllegalArgumentException("setting 'endpoint' must be an http or https URL with a host: '" + value + "'");
                }
                if (value.getUserInfo() != null) {
                    throw new IllegalArgumentException("setting 'endpoint' must not carry credentials; use the environment");
                }
            }
            this.endpoint = Optional.ofNullable(value);
            this.endpointSource = Optional.empty();
            return this;
        }

        /**
         * The endpoint a client found configured outside the store URI (the environment's
         * AWS_ENDPOINT_URL, a profile's endpoint_url): requests go there, so descriptions name it and where
         * it came from.
         */
        public Builder endpointFrom(URI value, String source) {
            endpoint(value);
            this.endpointSource = Optional.of(Objects.requireNonNull(source, "source"));
            return this;
        }

        public Builder region(String value) {
            if (value == null || !REGION.matcher(value).matches()) {
                throw new IllegalArgumentException("setting 'region' must be lower-case letters, digits and '-': '" + value + "'");
            }
            this.region = value;
            return this;
        }

        /** Trust only the certificates of this PEM file for TLS (see {@link CaBundle}). */
        public Builder caBundle(CaBundle value) {
            this.caBundle = Optional.ofNullable(value);
            return this;
        }

        public Builder pathStyle(boolean value) {
            this.pathStyle = value;
            return this;
        }

        public Builder credentials(Credentials value) {
            this.credentials = Objects.requireNonNull(value, "credentials");
            return this;
        }

        public Builder checksumMode(ChecksumPolicy value) {
            this.checksumMode = Objects.requireNonNull(value, "checksum mode");
            return this;
        }

        public Builder multipart(long threshold, long size, int concurrency) {
            if (size < MIN_PART_SIZE || size > MAX_PART_SIZE) {
                throw new IllegalArgumentException("setting 'part-size' must be between 5 MiB and 5 GiB: " + size);
            }
            if (threshold < size) {
                throw new IllegalArgumentException("setting 'multipart-threshold' (" + threshold
                        + ") must be at least setting 'part-size' (" + size + ")");
            }
            if (concurrency < 1 || concurrency > 64) {
                throw new IllegalArgumentException("setting 'part-concurrency' must be in [1, 64]: " + concurrency);
            }
            this.multipartThreshold = threshold;
            this.partSize = size;
            this.partConcurrency = concurrency;
            return this;
        }

        public Builder encryption(Encryption value) {
            this.encryption = Objects.requireNonNull(value, "encryption");
            return this;
        }

        public Builder storageClass(String value) {
            if (value != null && !STORAGE_CLASS.matcher(value).matches()) {
                throw new IllegalArgumentException("setting 'storage-class' must be an upper-case S3 storage class name such as "
                        + "STANDARD or STANDARD_IA: '" + value + "'");
            }
            this.storageClass = Optional.ofNullable(value);
            return this;
        }

        public Builder retryPolicy(RetryPolicy value) {
            this.retryPolicy = Objects.requireNonNull(value, "retry policy");
            return this;
        }

        public Builder timeouts(Duration connect, Duration attempt) {
            if (connect.isNegative() || connect.isZero()) {
                throw new IllegalArgumentException("setting 'connect-timeout' must be positive: " + connect);
            }
            if (attempt.isNegative() || attempt.isZero()) {
                throw new IllegalArgumentException("setting 'attempt-timeout' must be positive: " + attempt);
            }
            this.connectTimeout = connect;
            this.attemptTimeout = attempt;
            return this;
        }

        /** See {@link RemoteStoreSettings#connectTimeout()}. */
        public Builder connectTimeout(Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("setting 'connect-timeout' must be positive: " + value);
            }
            this.connectTimeout = value;
            return this;
        }

        /** See {@link RemoteStoreSettings#readTimeout()}. */
        public Builder readTimeout(Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("setting 'read-timeout' must be positive: " + value);
            }
            this.readTimeout = value;
            return this;
        }

        /**
         * Bounds one operation, all its attempts and backoff waits included: no retry starts once it
         * has passed (the attempt running then may take up to the attempt timeout to end).
         */
        public Builder apiCallTimeout(Duration value) {
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("setting 'api-call-timeout' must be positive: " + value);
            }
            RetryPolicy r = retryPolicy;
            this.retryPolicy = new RetryPolicy(r.maxAttempts(), r.baseDelay(), r.maxDelay(), value);
            return this;
        }

        /** Attempts per operation, the first included. */
        public Builder maxAttempts(int value) {
            if (value < 1 || value > 100) {
                throw new IllegalArgumentException("setting 'max-attempts' must be in [1, 100]: " + value);
            }
            RetryPolicy r = retryPolicy;
            this.retryPolicy = new RetryPolicy(value, r.baseDelay(), r.maxDelay(), r.maxTotal());
            return this;
        }

        public RemoteStoreSettings build() {
            return new RemoteStoreSettings(this);
        }
    }
}
