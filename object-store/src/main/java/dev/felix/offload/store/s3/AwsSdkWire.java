package dev.felix.offload.store.s3;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.remote.Crc32Text;
import dev.felix.offload.store.remote.CredentialsUnavailableException;
import dev.felix.offload.store.remote.OnFirstUse;
import dev.felix.offload.store.remote.PartedUpload;
import dev.felix.offload.store.remote.ProbeOptions;
import dev.felix.offload.store.remote.RemoteStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.remote.S3ErrorTranslation;
import dev.felix.offload.store.remote.S3Wire;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import org.apache.http.HttpHost;
import org.apache.http.conn.socket.LayeredConnectionSocketFactory;
import org.apache.http.conn.ssl.SSLConnectionSocketFactory;
import org.apache.http.protocol.HttpContext;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.exception.SdkServiceException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CopyObjectRequest;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The S3 calls through the AWS SDK for Java v2 (its Apache HTTP client). The SDK's own retries
 * are off, since {@link RemoteStore} retries under its policy; and it never streams bodies with
 * checksum trailers (aws-chunked), which S3Proxy, Ceph and older MinIO refuse: CRC32s travel as
 * plain headers, only where the store puts them.
 */
public final class AwsSdkWire implements S3Wire {
    private static final String CONTENT_TYPE = "application/octet-stream";

    private final RemoteStoreSettings settings;
    private final String bucket;
    /** Built on first use, so a command that never reaches the store never pays for them. */
    private final OnFirstUse<Clients> clients;
    /** The same client but for upload bodies, which it leaves out of the signature; over the same connections. */
    private final OnFirstUse<S3Client> unsignedBodies;
    private volatile java.util.function.Consumer<String> identityListener = identity -> { };
    private volatile boolean md5CheckedByServer;
    private volatile boolean crc32CheckedByServer;

    /** The HTTP client, the credentials and the signed client over them. */
    private record Clients(SdkHttpClient http, AwsCredentialsProvider credentials, S3Client s3) {
    }

    private AwsSdkWire(RemoteStoreSettings settings) {
        this.settings = settings;
        this.bucket = settings.bucket();
        this.clients = new OnFirstUse<>("the S3 store", this::build);
        this.unsignedBodies = new OnFirstUse<>("the S3 store", () -> {
            Clients c = clients.get();
            return client(settings, c.http(), c.credentials()).putAuthScheme(new UnsignedBodySigning()).build();
        });
    }

    /** A store over this client, its findings about the server in memory only. */
    public static RemoteStore store(RemoteStoreSettings settings) {
        return store(settings, ProbeOptions.inMemory());
    }

    /**
     * A store over this client. Where the settings name an endpoint nothing is built yet: the SDK's
     * clients (a second or so of class loading on a cold JVM; the launcher's class-data archive
     * holds their classes) are built on the first request.
     */
    public static RemoteStore store(RemoteStoreSettings settings, ProbeOptions probe) {
        AwsSdkWire wire = new AwsSdkWire(settings);
        // Without an endpoint in the store URI the SDK chooses one (AWS_ENDPOINT_URL, a profile's
        // endpoint_url, or AWS's own), and only the built client knows which: that store's clients are
        // built now, so descriptions and the kept findings name where requests really go. A URI that
        // names its endpoint leaves them to the first request.
        RemoteStoreSettings described = settings.endpoint().isPresent() ? settings : effective(settings, wire.s3());
        return new RemoteStore(described, wire, probe);
    }


    private Clients build() {
        ApacheHttpClient.Builder builder = ApacheHttpClient.builder()
                .connectionTimeout(settings.connectTimeout())
                // silence on a connection (no answer yet, or a stalled body) ends the attempt after this
                .socketTimeout(settings.readTimeout())
                .maxConnections(settings.partConcurrency() * 2 + 16);
        settings.caBundle().ifPresent(bundle -> builder.tlsTrustManagersProvider(bundle::trustManagers));
        if (settings.endpoint().map(e -> "http".equalsIgnoreCase(e.getScheme())).orElse(false)) {
            // Over plain HTTP no TLS context is needed: building one (the JDK's trust store read and
            // parsed) cost a cold start about 0.35 s of CPU for nothing.
            builder.socketFactory(new TlsOnFirstUse());
        }
        SdkHttpClient http = builder.build();
        AwsCredentialsProvider credentials = credentialsProvider(settings);
        return new Clients(http, credentials, client(settings, http, credentials).build());
    }

    /**
     * The TLS socket factory of a client whose endpoint is plain HTTP: the JDK's default one, built
     * only if a TLS connection is ever asked for (none is, since the client talks to that endpoint only).
     */
    private static final class TlsOnFirstUse implements LayeredConnectionSocketFactory {
        private volatile LayeredConnectionSocketFactory tls;

        private LayeredConnectionSocketFactory tls() {
            LayeredConnectionSocketFactory t = tls;
            if (t == null) {
                t = SSLConnectionSocketFactory.getSocketFactory();
                tls = t;
            }
            return t;
        }

        @Override
        public Socket createSocket(HttpContext context) throws IOException {
            return tls().createSocket(context);
        }

        @Override
        public Socket connectSocket(int timeout, Socket socket, HttpHost host, InetSocketAddress remote,
                InetSocketAddress local, HttpContext context) throws IOException {
            return tls().connectSocket(timeout, socket, host, remote, local, context);
        }

        @Override
        public Socket createLayeredSocket(Socket socket, String target, int port, HttpContext context)
                throws IOException {
            return tls().createLayeredSocket(socket, target, port, context);
        }
    }

    private S3Client s3() {
        return clients.get().s3();
    }

    @Override
    public void onServerIdentity(java.util.function.Consumer<String> listener) {
        this.identityListener = listener;
    }

    /**
     * The settings with the endpoint the SDK really uses: without one in the store URI it takes
     * AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the matching system properties or a profile's endpoint_url,
     * and traffic goes there while a description would say AWS. Asked of the built client, so the SDK's
     * own precedence decides.
     */
    static RemoteStoreSettings effective(RemoteStoreSettings settings, S3Client client) {
        if (settings.endpoint().isPresent()) {
            return settings;
        }
        Optional<java.net.URI> configured = client.serviceClientConfiguration().endpointOverride();
        if (configured.isEmpty()) {
            return settings;
        }
        String source = "the AWS configuration's endpoint_url";
        for (String[] where : new String[][] {{"env", "AWS_ENDPOINT_URL_S3"}, {"env", "AWS_ENDPOINT_URL"},
                {"property", "aws.endpointUrlS3"}, {"property", "aws.endpointUrl"}}) {
            String value = where[0].equals("env") ? System.getenv(where[1]) : System.getProperty(where[1]);
            if (value != null && !value.isBlank()) {
                source = where[0].equals("env") ? where[1] : "-D" + where[1];
                break;
            }
        }
        try {
            return settings.toBuilder().endpointFrom(configured.get(), source).build();
        } catch (IllegalArgumentException e) {
            return settings; // an endpoint the settings would refuse: the SDK's to report when used
        }
    }

    /** A client over the shared connections; the SDK's own retries are off, as RemoteStore retries. */
    private S3ClientBuilder client(RemoteStoreSettings settings, SdkHttpClient http,
            AwsCredentialsProvider credentials) {
        return S3Client.builder()
                .region(Region.of(settings.region()))
                .applyMutation(b -> settings.endpoint().ifPresent(b::endpointOverride))
                .forcePathStyle(settings.pathStyle())
                .credentialsProvider(credentials)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .httpClient(http)
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .apiCallAttemptTimeout(settings.attemptTimeout())
                        .apiCallTimeout(settings.attemptTimeout())
                        .addExecutionInterceptor(new ExecutionInterceptor() {
                            @Override
                            public void afterTransmission(Context.AfterTransmission context,
                                    ExecutionAttributes attributes) {
                                // every answer, errors included: which server sent it
                                identityListener.accept(context.httpResponse().firstMatchingHeader("Server").orElse(""));
                            }
                        }));
    }

    /**
     * Over plain HTTP the SDK hashes every upload body with SHA-256 for its signature, a second read
     * of the bytes and, on a small machine, a fifth of the pass's CPU. Once the server was seen to
     * refuse a body that does not match its {@code Content-MD5}, or its {@code x-amz-checksum-crc32},
     * a request that carries such a header needs no such hash: the header is signed, and the server
     * refuses any body other than the one it names. Requests without one stay signed in full. The
     * CRC32 still goes as the plain, precomputed header the probe tried: the SDK neither computes nor
     * trails one (checksum calculation when required, chunked encoding off), and the signer adds
     * no trailer where the header is there already.
     */
    @Override
    public void bodyChecksumCheckedByServer(BodyChecksum checksum) {
        switch (checksum) {
            case CONTENT_MD5 -> md5CheckedByServer = true;
            case CRC32 -> crc32CheckedByServer = true;
        }
    }

    private S3Client forBody(Optional<String> contentMd5, boolean carriesCrc32) {
        boolean bound = (md5CheckedByServer && contentMd5.isPresent()) || (crc32CheckedByServer && carriesCrc32);
        return bound ? unsignedBodies.get() : s3();
    }

    private static AwsCredentialsProvider credentialsProvider(RemoteStoreSettings settings) {
        switch (settings.credentials().source()) {
            case ENVIRONMENT:
                return new TypedCredentialFailures(EnvironmentVariableCredentialsProvider.create());
            case STATIC:
                return StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        settings.credentials().accessKey().orElseThrow(), settings.credentials().secretKey().orElseThrow()));
            default:
                return new TypedCredentialFailures(DefaultCredentialsProvider.builder().build());
        }
    }

    /**
     * A provider whose failure to give credentials carries {@link CredentialsUnavailableException}:
     * still an {@link SdkClientException} on the outside, as the SDK expects of a provider and hands on
     * unchanged, with our type as its cause for the translation to find.
     */
    private record TypedCredentialFailures(AwsCredentialsProvider delegate) implements AwsCredentialsProvider {
        @Override
        public AwsCredentials resolveCredentials() {
            try {
                return delegate.resolveCredentials();
            } catch (SdkClientException e) {
                throw SdkClientException.builder().message(e.getMessage())
                        .cause(new CredentialsUnavailableException(e)).build();
            }
        }
    }

    @Override
    public String name() {
        return "S3 store";
    }

    @Override
    public void close() {
        unsignedBodies.close().ifPresent(S3Client::close);
        clients.close().ifPresent(c -> {
            c.s3().close();
            c.http().close(); // shared, so neither client closes it
        });
    }

    @Override
    public StoreException translate(String operation, String key, Throwable failure) {
        if (failure instanceof SdkServiceException e) {
            AwsErrorDetails details = e instanceof AwsServiceException a ? a.awsErrorDetails() : null;
            return S3ErrorTranslation.fromAnswer(operation, key, e.statusCode(),
                    details == null ? null : details.errorCode(), details == null ? null : details.errorMessage(), e);
        }
        if (failure instanceof SdkException || failure instanceof IOException || failure instanceof UncheckedIOException) {
            // client-side failures: I/O, timeouts, an unreadable answer
            return S3ErrorTranslation.fromIo(operation, key, failure);
        }
        if (failure instanceof RuntimeException bug) {
            throw bug; // not the server's or the network's doing: no retry, no translation
        }
        return S3ErrorTranslation.fromIo(operation, key, failure);
    }

    /** The upload's raw headers, sent as they are (the SDK signs every x-amz- header it sends). */
    private static AwsRequestOverrideConfiguration headers(java.util.Map<String, String> headers) {
        AwsRequestOverrideConfiguration.Builder o = AwsRequestOverrideConfiguration.builder();
        headers.forEach(o::putHeader);
        return o.build();
    }

    @Override
    public String putObject(String fullKey, UploadBody body, Upload upload) {
        PutObjectRequest.Builder b = PutObjectRequest.builder().bucket(bucket).key(fullKey)
                .contentLength(body.length()).contentType(CONTENT_TYPE)
                .metadata(upload.userMetadata())
                .overrideConfiguration(headers(upload.headers()));
        upload.crc32().ifPresent(c -> b.checksumCRC32(Crc32Text.toBase64(c)));
        upload.contentMd5().ifPresent(b::contentMD5);
        if (upload.createOnly()) {
            b.ifNoneMatch("*");
        }
        return forBody(upload.contentMd5(), upload.crc32().isPresent()).putObject(b.build(), requestBody(body, 0, body.length())).eTag();
    }

    private static RequestBody requestBody(UploadBody body, long from, long count) {
        return RequestBody.fromContentProvider(() -> {
            try {
                return body.open(from, count);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, count, CONTENT_TYPE);
    }

    @Override
    public String copyObject(String fullSource, String fullTarget, java.util.Map<String, String> headers) {
        CopyObjectRequest request = CopyObjectRequest.builder().sourceBucket(bucket).sourceKey(fullSource)
                .destinationBucket(bucket).destinationKey(fullTarget).metadataDirective(MetadataDirective.COPY)
                .overrideConfiguration(headers(headers)).build();
        return s3().copyObject(request).copyObjectResult().eTag();
    }

    @Override
    public Head headObject(String fullKey, boolean withChecksum) {
        HeadObjectRequest.Builder b = HeadObjectRequest.builder().bucket(bucket).key(fullKey);
        if (withChecksum) {
            b.checksumMode(ChecksumMode.ENABLED);
        }
        HeadObjectResponse r = s3().headObject(b.build());
        return new Head(r.contentLength(), r.eTag(), r.metadata(), r.checksumCRC32());
    }

    @Override
    public Body getObject(String fullKey, ByteRange range, boolean withChecksum) {
        GetObjectRequest.Builder b = GetObjectRequest.builder().bucket(bucket).key(fullKey);
        if (range != null) {
            b.range("bytes=" + range.offset() + "-" + range.lastInclusive());
        }
        if (withChecksum) {
            b.checksumMode(ChecksumMode.ENABLED);
        }
        ResponseInputStream<GetObjectResponse> in = s3().getObject(b.build());
        GetObjectResponse r = in.response();
        return new Body(in, r.contentLength(), r.contentRange(), r.eTag(), r.checksumCRC32(), in::abort);
    }

    @Override
    public KeyPage listObjects(String fullPrefix, String continuation, int maxKeys) {
        ListObjectsV2Response r = s3().listObjectsV2(ListObjectsV2Request.builder().bucket(bucket).prefix(fullPrefix)
                .maxKeys(maxKeys).continuationToken(continuation).build());
        List<Listed> objects = r.contents().stream().map(o -> new Listed(o.key(), o.size(), o.eTag())).toList();
        boolean more = Boolean.TRUE.equals(r.isTruncated()) && r.nextContinuationToken() != null;
        return new KeyPage(objects, more ? Optional.of(r.nextContinuationToken()) : Optional.empty());
    }

    @Override
    public void deleteObject(String fullKey) {
        s3().deleteObject(b -> b.bucket(bucket).key(fullKey));
    }

    @Override
    public List<DeleteFailure> deleteObjects(List<String> fullKeys) {
        List<ObjectIdentifier> ids = fullKeys.stream().map(k -> ObjectIdentifier.builder().key(k).build()).toList();
        return s3().deleteObjects(b -> b.bucket(bucket).delete(Delete.builder().objects(ids).quiet(true).build()))
                .errors().stream().map(e -> new DeleteFailure(e.key(), e.code(), e.message())).toList();
    }

    @Override
    public String createMultipartUpload(String fullKey, Upload upload, boolean partCrc32s) {
        CreateMultipartUploadRequest.Builder b = CreateMultipartUploadRequest.builder().bucket(bucket).key(fullKey)
                .contentType(CONTENT_TYPE).metadata(upload.userMetadata())
                .overrideConfiguration(headers(upload.headers()));
        if (partCrc32s) {
            b.checksumAlgorithm(ChecksumAlgorithm.CRC32);
        }
        return s3().createMultipartUpload(b.build()).uploadId();
    }

    @Override
    public String uploadPart(String fullKey, String uploadId, int partNumber, UploadBody body, long from, long count,
            Optional<String> crc32Base64, Optional<String> contentMd5) {
        UploadPartRequest.Builder b = UploadPartRequest.builder().bucket(bucket).key(fullKey)
                .uploadId(uploadId).partNumber(partNumber).contentLength(count);
        crc32Base64.ifPresent(b::checksumCRC32);
        contentMd5.ifPresent(b::contentMD5);
        return forBody(contentMd5, crc32Base64.isPresent()).uploadPart(b.build(), requestBody(body, from, count)).eTag();
    }

    @Override
    public String completeMultipartUpload(String fullKey, String uploadId, List<PartedUpload.PartReceipt> parts,
            boolean createOnly) {
        List<CompletedPart> completed = new ArrayList<>(parts.size());
        for (PartedUpload.PartReceipt p : parts) {
            completed.add(CompletedPart.builder().partNumber(p.partNumber()).eTag(p.etag())
                    .checksumCRC32(p.crc32Base64().orElse(null)).build());
        }
        CompleteMultipartUploadRequest.Builder b = CompleteMultipartUploadRequest.builder()
                .bucket(bucket).key(fullKey).uploadId(uploadId)
                .multipartUpload(CompletedMultipartUpload.builder().parts(completed).build());
        if (createOnly) {
            b.ifNoneMatch("*");
        }
        return s3().completeMultipartUpload(b.build()).eTag();
    }

    @Override
    public void abortMultipartUpload(String fullKey, String uploadId) {
        s3().abortMultipartUpload(b -> b.bucket(bucket).key(fullKey).uploadId(uploadId));
    }

    @Override
    public UploadPage listMultipartUploads(String fullPrefix, String keyMarker, String uploadIdMarker) {
        ListMultipartUploadsRequest.Builder b = ListMultipartUploadsRequest.builder().bucket(bucket).prefix(fullPrefix);
        if (keyMarker != null) {
            b.keyMarker(keyMarker).uploadIdMarker(uploadIdMarker);
        }
        ListMultipartUploadsResponse r = s3().listMultipartUploads(b.build());
        List<PendingUpload> uploads = r.uploads().stream()
                .map(u -> new PendingUpload(u.key(), u.uploadId(), u.initiated())).toList();
        return new UploadPage(uploads, Boolean.TRUE.equals(r.isTruncated()), r.nextKeyMarker(), r.nextUploadIdMarker());
    }
}
