package dev.felix.offload.store.minio;

import com.google.common.collect.ArrayListMultimap;
import com.google.common.collect.Multimap;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.remote.Crc32Text;
import dev.felix.offload.store.remote.CredentialsUnavailableException;
import dev.felix.offload.store.remote.OnFirstUse;
import dev.felix.offload.store.remote.PartedUpload;
import dev.felix.offload.store.remote.RemoteStore;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.remote.S3ErrorTranslation;
import dev.felix.offload.store.remote.S3Wire;
import io.minio.CopyObjectArgs;
import io.minio.CopySource;
import io.minio.GetObjectArgs;
import io.minio.GetObjectResponse;
import io.minio.ListObjectsArgs;
import io.minio.MinioAsyncClient;
import io.minio.MinioClient;
import io.minio.PutObjectArgs;
import io.minio.RemoveObjectArgs;
import io.minio.RemoveObjectsArgs;
import io.minio.Result;
import io.minio.StatObjectArgs;
import io.minio.StatObjectResponse;
import io.minio.credentials.AwsConfigProvider;
import io.minio.credentials.AwsEnvironmentProvider;
import io.minio.credentials.ChainedProvider;
import io.minio.credentials.MinioEnvironmentProvider;
import io.minio.credentials.Provider;
import io.minio.credentials.StaticProvider;
import io.minio.errors.ErrorResponseException;
import io.minio.errors.InsufficientDataException;
import io.minio.errors.InternalException;
import io.minio.errors.InvalidResponseException;
import io.minio.errors.ServerException;
import io.minio.errors.XmlParserException;
import io.minio.messages.DeleteError;
import io.minio.messages.DeleteObject;
import io.minio.messages.Item;
import io.minio.messages.ListMultipartUploadsResult;
import io.minio.messages.Part;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.OkHttpClient;

/**
 * The S3 calls through the MinIO Java client (OkHttp). OkHttp's own connection retries are off,
 * so every retry is {@link RemoteStore}'s. Multipart calls go through the client's asynchronous
 * API, which is the only one exposing them one by one; the upload listing through
 * {@link UploadListing}.
 */
public final class MinioWire implements S3Wire {
    private static final String CRC32_HEADER = "x-amz-checksum-crc32";
    private static final String CONTENT_TYPE = "application/octet-stream";
    private static final String CONTENT_MD5_HEADER = "Content-MD5";

    private final RemoteStoreSettings settings;
    private final String endpoint;
    private final String bucket;
    private final String region;
    /** Built on first use, so a command that never reaches the store never pays for them. */
    private final OnFirstUse<Clients> clients = new OnFirstUse<>("the MinIO store", this::build);
    private final java.util.concurrent.atomic.AtomicReference<java.util.function.Consumer<String>> identity =
            new java.util.concurrent.atomic.AtomicReference<>(server -> { });

    /** The HTTP client and the MinIO clients over it. */
    private record Clients(OkHttpClient http, MinioClient client, FileBodyClient async, UploadListing uploadListing) {
    }

    MinioWire(RemoteStoreSettings settings, String endpoint) {
        this.settings = settings;
        this.endpoint = endpoint;
        this.bucket = settings.bucket();
        this.region = settings.region();
    }

    /** A store over this client, its findings about the server in memory only. */
    public static RemoteStore store(RemoteStoreSettings settings) {
        return store(settings, dev.felix.offload.store.remote.ProbeOptions.inMemory());
    }

    /**
     * A store over this client; the settings must name an endpoint (the MinIO client has no default
     * one). Nothing is built yet: the clients are built on the first request.
     */
    public static RemoteStore store(RemoteStoreSettings settings, dev.felix.offload.store.remote.ProbeOptions probe) {
        String endpoint = settings.endpoint().map(Object::toString).orElseThrow(() ->
                new IllegalArgumentException("setting 'endpoint' is required for a MinIO store"));
        return new RemoteStore(settings, new MinioWire(settings, endpoint), probe);
    }

    private Clients build() {
        long attemptMillis = settings.attemptTimeout().toMillis();
        long silenceMillis = settings.readTimeout().toMillis();
        OkHttpClient.Builder httpBuilder = new OkHttpClient.Builder().socketFactory(new NoDelaySockets());
        settings.caBundle().ifPresent(bundle -> httpBuilder.sslSocketFactory(bundle.sslContext().getSocketFactory(),
                bundle.x509TrustManager()));
        OkHttpClient http = httpBuilder
                .connectTimeout(settings.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)
                // silence either way (no answer yet, or a stalled body) ends the attempt after this
                .readTimeout(silenceMillis, TimeUnit.MILLISECONDS)
                .writeTimeout(silenceMillis, TimeUnit.MILLISECONDS)
                .callTimeout(attemptMillis, TimeUnit.MILLISECONDS)
                .retryOnConnectionFailure(false)
                // every answer, errors included: which server sent it
                .addNetworkInterceptor(chain -> {
                    okhttp3.Response response = chain.proceed(chain.request());
                    String server = response.header("Server");
                    identity.get().accept(server == null ? "" : server);
                    return response;
                })
                .build();
        Provider credentials = credentialsProvider(settings);
        MinioClient client = MinioClient.builder().endpoint(endpoint).region(settings.region())
                .credentialsProvider(credentials).httpClient(http).build();
        FileBodyClient async = new FileBodyClient(MinioAsyncClient.builder().endpoint(endpoint)
                .region(settings.region()).credentialsProvider(credentials).httpClient(http).build());
        return new Clients(http, client, async, new UploadListing(async));
    }

    private Clients clients() {
        return clients.get();
    }

    /** Where the HTTP client's sockets come from (built on first use, nothing is sent). */
    javax.net.SocketFactory socketFactory() {
        return clients().http().socketFactory();
    }

    private MinioClient client() {
        return clients().client();
    }

    private FileBodyClient async() {
        return clients().async();
    }

    private static Provider credentialsProvider(RemoteStoreSettings settings) {
        switch (settings.credentials().source()) {
            case STATIC:
                return new StaticProvider(settings.credentials().accessKey().orElseThrow(),
                        settings.credentials().secretKey().orElseThrow(), null);
            case ENVIRONMENT:
                return new TypedCredentialFailures(new ChainedProvider(new NextOnMissing(new AwsEnvironmentProvider()),
                        new NextOnMissing(new MinioEnvironmentProvider())));
            default:
                return new TypedCredentialFailures(new ChainedProvider(new NextOnMissing(new AwsEnvironmentProvider()),
                        new NextOnMissing(new MinioEnvironmentProvider()), new NextOnMissing(new AwsConfigProvider(null, null))));
        }
    }

    /**
     * One provider of the chain, whose missing value lets the chain go on to the next. The client's
     * environment providers meet an unset variable with a {@link NullPointerException} (or an
     * {@link IllegalArgumentException} for an empty one), which its chain does not catch: a missing
     * {@code AWS_ACCESS_KEY_ID} would end the search before the profile file was read. The chain moves
     * on only on {@link java.security.ProviderException}, so that is what such a failure becomes.
     */
    private record NextOnMissing(Provider delegate) implements Provider {
        @Override
        public io.minio.credentials.Credentials fetch() {
            try {
                return delegate.fetch();
            } catch (NullPointerException | IllegalArgumentException e) {
                java.security.ProviderException missing = new java.security.ProviderException(
                        delegate.getClass().getSimpleName() + " found no credentials");
                missing.initCause(e);
                throw missing;
            }
        }
    }

    /**
     * The chain, whose failure to find credentials anywhere is a {@link CredentialsUnavailableException}:
     * read as an I/O failure it would be retried; with the typed cause it is the same access denial,
     * naming where credentials are looked for, as the SDK's wire gives.
     */
    private record TypedCredentialFailures(Provider delegate) implements Provider {
        @Override
        public io.minio.credentials.Credentials fetch() {
            try {
                return delegate.fetch();
            } catch (java.security.ProviderException e) {
                throw CredentialsUnavailableException.causeless(e);
            }
        }
    }

    @Override
    public String name() {
        return "MinIO store";
    }

    @Override
    public void onServerIdentity(java.util.function.Consumer<String> listener) {
        identity.set(listener);
    }

    @Override
    public boolean buffersPacedBodies() {
        return true;
    }

    @Override
    public void close() {
        clients.close().ifPresent(c -> {
            try {
                c.client().close();
                c.async().close();
            } catch (Exception ignored) {
                // closing only releases pooled connections
            }
            c.http().dispatcher().cancelAll(); // calls under way end now rather than at their timeouts
            c.http().dispatcher().executorService().shutdown();
            c.http().connectionPool().evictAll();
        });
    }

    // ---- objects

    @Override
    public String putObject(String fullKey, UploadBody body, Upload upload) throws Exception {
        Map<String, String> headers = new HashMap<>(upload.headers());
        upload.crc32().ifPresent(c -> headers.put(CRC32_HEADER, Crc32Text.toBase64(c)));
        upload.contentMd5().ifPresent(m -> headers.put(CONTENT_MD5_HEADER, m));
        if (upload.createOnly()) {
            headers.put("If-None-Match", "*");
        }
        Optional<Path> file = body.file();
        if (file.isPresent()) {
            // Sent from the file: the stream form below holds the whole body in memory first.
            Multimap<String, String> h = ArrayListMultimap.create();
            headers.forEach(h::put);
            h.put("Content-Type", CONTENT_TYPE);
            upload.userMetadata().forEach((k, v) -> h.put("x-amz-meta-" + k, v));
            try (RandomAccessFile raf = new RandomAccessFile(file.get().toFile(), "r")) {
                raf.seek(body.fileOffset());
                return async().putFromFile(bucket, region, fullKey, raf, body.length(), h).get().etag();
            }
        }
        // An array or paced body: one request up to the multipart threshold, a part size of at
        // least the body's length (the client buffers it).
        long partSize = Math.max(RemoteStoreSettings.MIN_PART_SIZE, body.length());
        try (InputStream in = body.open()) {
            return client().putObject(PutObjectArgs.builder().bucket(bucket).object(fullKey)
                    .stream(in, body.length(), partSize)
                    .contentType(CONTENT_TYPE)
                    .headers(headers)
                    .userMetadata(upload.userMetadata())
                    .build()).etag();
        }
    }

    @Override
    public String copyObject(String fullSource, String fullTarget, Map<String, String> headers) throws Exception {
        // The client heads the source first and copies in one request below 5 GiB (the caller's bound).
        return client().copyObject(CopyObjectArgs.builder().bucket(bucket).object(fullTarget)
                .source(CopySource.builder().bucket(bucket).object(fullSource).build())
                .extraHeaders(headers).build()).etag();
    }

    @Override
    public Head headObject(String fullKey, boolean withChecksum) throws Exception {
        StatObjectArgs.Builder b = StatObjectArgs.builder().bucket(bucket).object(fullKey);
        if (withChecksum) {
            b.extraHeaders(Map.of("x-amz-checksum-mode", "ENABLED"));
        }
        StatObjectResponse r = client().statObject(b.build());
        Map<String, String> metadata = new HashMap<>();
        r.userMetadata().forEach((k, v) -> metadata.put(k.toLowerCase(Locale.ROOT), v));
        return new Head(r.size(), r.etag(), metadata, r.headers().get(CRC32_HEADER));
    }

    @Override
    public Body getObject(String fullKey, ByteRange range, boolean withChecksum) throws Exception {
        GetObjectArgs.Builder b = GetObjectArgs.builder().bucket(bucket).object(fullKey);
        if (range != null) {
            b.offset(range.offset()).length((long) range.length());
        }
        if (withChecksum) {
            b.extraHeaders(Map.of("x-amz-checksum-mode", "ENABLED"));
        }
        GetObjectResponse in = client().getObject(b.build());
        Headers h = in.headers();
        // OkHttp drops a connection whose body is closed before its end
        return new Body(in, contentLength(h), h.get("Content-Range"), h.get("ETag"), h.get(CRC32_HEADER), () -> { });
    }

    private static Long contentLength(Headers headers) {
        String value = headers.get("Content-Length");
        if (value == null) {
            return null;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * MinIO's iterator pages by start-after, so the continuation handed out is the last full key
     * of the page. A full page may have more behind it; the next call finds out (an empty last page
     * at worst).
     */
    @Override
    public KeyPage listObjects(String fullPrefix, String continuation, int maxKeys) throws Exception {
        ListObjectsArgs.Builder b = ListObjectsArgs.builder().bucket(bucket).prefix(fullPrefix)
                .recursive(true).maxKeys(maxKeys);
        if (continuation != null) {
            b.startAfter(continuation);
        }
        List<Listed> objects = new ArrayList<>();
        Iterator<Result<Item>> it = client().listObjects(b.build()).iterator();
        while (objects.size() < maxKeys && it.hasNext()) {
            Item item = it.next().get();
            objects.add(new Listed(item.objectName(), item.size(), item.etag()));
        }
        return new KeyPage(objects, objects.size() == maxKeys
                ? Optional.of(objects.get(objects.size() - 1).fullKey()) : Optional.empty());
    }

    @Override
    public void deleteObject(String fullKey) throws Exception {
        client().removeObject(RemoveObjectArgs.builder().bucket(bucket).object(fullKey).build());
    }

    @Override
    public List<DeleteFailure> deleteObjects(List<String> fullKeys) throws Exception {
        if (fullKeys.isEmpty()) {
            return List.of();
        }
        List<DeleteObject> objects = fullKeys.stream().map(DeleteObject::new).toList();
        List<DeleteFailure> failures = new ArrayList<>();
        // The iterable sends the request only as it is consumed.
        for (Result<DeleteError> result : client().removeObjects(RemoveObjectsArgs.builder().bucket(bucket)
                .objects(objects).build())) {
            DeleteError error = result.get();
            failures.add(new DeleteFailure(error.objectName(), error.code(), error.message()));
        }
        return failures;
    }

    // ---- multipart

    @Override
    public String createMultipartUpload(String fullKey, Upload upload, boolean partCrc32s) throws Exception {
        Multimap<String, String> headers = ArrayListMultimap.create();
        upload.headers().forEach(headers::put);
        headers.put("Content-Type", CONTENT_TYPE);
        upload.userMetadata().forEach((k, v) -> headers.put("x-amz-meta-" + k, v));
        if (partCrc32s) {
            headers.put("x-amz-checksum-algorithm", "CRC32");
        }
        return async().createMultipartUploadAsync(bucket, region, fullKey, headers, null).get().result().uploadId();
    }

    @Override
    public String uploadPart(String fullKey, String uploadId, int partNumber, UploadBody body, long from, long count,
            Optional<String> crc32Base64, Optional<String> contentMd5) throws Exception {
        Multimap<String, String> headers = ArrayListMultimap.create();
        crc32Base64.ifPresent(c -> headers.put(CRC32_HEADER, c));
        contentMd5.ifPresent(m -> headers.put(CONTENT_MD5_HEADER, m));
        Object data = partData(body, from, count);
        try {
            return async().uploadPartAsync(bucket, region, fullKey, data, count, uploadId, partNumber, headers, null)
                    .get().etag();
        } finally {
            if (data instanceof RandomAccessFile raf) {
                raf.close();
            }
        }
    }

    /** The part's bytes as the MinIO client takes them: a file positioned at the part, or an array slice. */
    private static Object partData(UploadBody body, long from, long count) throws IOException {
        Optional<Path> file = body.file();
        if (file.isPresent()) {
            RandomAccessFile raf = new RandomAccessFile(file.get().toFile(), "r");
            raf.seek(body.fileOffset() + from);
            return raf;
        }
        try (InputStream in = body.open(from, count)) {
            return in.readNBytes((int) count);
        }
    }

    @Override
    public String completeMultipartUpload(String fullKey, String uploadId, List<PartedUpload.PartReceipt> parts,
            boolean createOnly) throws Exception {
        Part[] completed = new Part[parts.size()];
        for (int i = 0; i < completed.length; i++) {
            PartedUpload.PartReceipt p = parts.get(i);
            completed[i] = new Part(p.partNumber(), p.etag(), p.crc32Base64().orElse(null), null, null, null, null);
        }
        Multimap<String, String> headers = ArrayListMultimap.create();
        if (createOnly) {
            headers.put("If-None-Match", "*");
        }
        return async().completeMultipartUploadAsync(bucket, region, fullKey, uploadId, completed, headers, null)
                .get().etag();
    }

    @Override
    public void abortMultipartUpload(String fullKey, String uploadId) throws Exception {
        async().abortMultipartUploadAsync(bucket, region, fullKey, uploadId, null, null).get();
    }

    @Override
    public UploadPage listMultipartUploads(String fullPrefix, String keyMarker, String uploadIdMarker) throws Exception {
        ListMultipartUploadsResult r = clients().uploadListing().page(bucket, region, fullPrefix, keyMarker, uploadIdMarker);
        List<PendingUpload> uploads = new ArrayList<>();
        for (io.minio.messages.Upload u : r.uploads()) {
            uploads.add(new PendingUpload(u.objectName(), u.uploadId(),
                    u.initiated() == null ? null : u.initiated().toInstant()));
        }
        return new UploadPage(uploads, r.isTruncated(), r.nextKeyMarker(), r.nextUploadIdMarker());
    }

    // ---- failures

    @Override
    public StoreException translate(String operation, String key, Throwable e) {
        Throwable t = e;
        while ((t instanceof ExecutionException || t instanceof CompletionException || t instanceof UncheckedIOException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof StoreException se) {
            return se;
        }
        if (t instanceof ErrorResponseException ere) {
            int status = ere.response() == null ? 0 : ere.response().code();
            return S3ErrorTranslation.fromAnswer(operation, key, status, ere.errorResponse().code(),
                    ere.errorResponse().message(), e);
        }
        if (t instanceof ServerException se) {
            return S3ErrorTranslation.fromAnswer(operation, key, se.statusCode(), null, se.getMessage(), e);
        }
        if (t instanceof InvalidResponseException) {
            // a non-XML answer, e.g. an HTML error page from something in between
            return S3ErrorTranslation.fromIo(operation, key, e);
        }
        if (t instanceof IOException || t instanceof InsufficientDataException || t instanceof XmlParserException
                || t instanceof InternalException) {
            return S3ErrorTranslation.fromIo(operation, key, e);
        }
        if (t instanceof GeneralSecurityException) {
            throw new IllegalStateException("the JVM lacks a signing algorithm the MinIO client needs", t);
        }
        if (t instanceof RuntimeException re && !(t instanceof IllegalArgumentException)) {
            return S3ErrorTranslation.fromIo(operation, key, re);
        }
        return new StoreRejectedException(operation + (key == null ? "" : " of key '" + key + "'") + " failed: " + t,
                key, null, e);
    }
}
