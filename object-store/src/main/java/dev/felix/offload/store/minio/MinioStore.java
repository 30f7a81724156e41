package dev.felix.offload.store.minio;

import static dev.felix.offload.store.remote.ResponseChecks.unquote;

import com.google.common.collect.ArrayListMultimap;
import com.google.common.collect.Multimap;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.remote.Crc32Text;
import dev.felix.offload.store.remote.DownloadTarget;
import dev.felix.offload.store.remote.Encryption;
import dev.felix.offload.store.remote.PartedUpload;
import dev.felix.offload.store.remote.ProbedServer;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.remote.ResponseChecks;
import dev.felix.offload.store.remote.ServerProbe;
import dev.felix.offload.store.remote.ServerTraits;
import dev.felix.offload.store.s3.S3ErrorTranslation;
import io.minio.GetObjectArgs;
import io.minio.GetObjectResponse;
import io.minio.ListObjectsArgs;
import io.minio.MinioAsyncClient;
import io.minio.MinioClient;
import io.minio.ObjectWriteResponse;
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
import io.minio.messages.Upload;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import okhttp3.Headers;
import okhttp3.OkHttpClient;

/**
 * A store in an S3-compatible bucket through the MinIO Java client. Same contract, settings,
 * probe, retry policy and multipart behaviour as the SDK store: bodies above the threshold go up
 * in parts, several at once, aborted on failure; CRC32s travel as {@code x-amz-checksum-crc32}
 * headers where the checksum mode says so. Like the SDK store it aborts the multipart uploads a
 * killed process left ({@link IncompleteUploads}). OkHttp's own connection retries are off, so
 * every retry is the policy's.
 */
public final class MinioStore implements ObjectStore, IncompleteUploads {
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final String CRC32_HEADER = "x-amz-checksum-crc32";

    private final RemoteStoreSettings settings;
    private final OkHttpClient http;
    private final MinioClient client;
    private final MinioAsyncClient async;
    private final UploadListing uploadListing;
    private final ExecutorService partUploads;
    private final ProbedServer server;

    private MinioStore(RemoteStoreSettings settings, OkHttpClient http, MinioClient client, MinioAsyncClient async) {
        this.settings = settings;
        this.http = http;
        this.client = client;
        this.async = async;
        this.uploadListing = new UploadListing(async);
        this.partUploads = Executors.newFixedThreadPool(settings.partConcurrency(), r -> {
            Thread t = new Thread(r, "minio-part-upload-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.server = new ProbedServer(settings, new ProbeTarget());
    }

    /** Opens the store; the settings must name an endpoint (the MinIO client has no default one). */
    public static MinioStore open(RemoteStoreSettings settings) {
        String endpoint = settings.endpoint().map(Object::toString).orElseThrow(() ->
                new IllegalArgumentException("setting 'endpoint' is required for a MinIO store"));
        long attemptMillis = settings.attemptTimeout().toMillis();
        OkHttpClient http = new OkHttpClient.Builder()
                .connectTimeout(settings.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .readTimeout(attemptMillis, TimeUnit.MILLISECONDS)
                .writeTimeout(attemptMillis, TimeUnit.MILLISECONDS)
                .callTimeout(attemptMillis, TimeUnit.MILLISECONDS)
                .retryOnConnectionFailure(false)
                .build();
        Provider credentials = credentialsProvider(settings);
        MinioClient client = MinioClient.builder().endpoint(endpoint).region(settings.region())
                .credentialsProvider(credentials).httpClient(http).build();
        MinioAsyncClient async = MinioAsyncClient.builder().endpoint(endpoint).region(settings.region())
                .credentialsProvider(credentials).httpClient(http).build();
        return new MinioStore(settings, http, client, async);
    }

    private static Provider credentialsProvider(RemoteStoreSettings settings) {
        switch (settings.credentials().source()) {
            case STATIC:
                return new StaticProvider(settings.credentials().accessKey().orElseThrow(),
                        settings.credentials().secretKey().orElseThrow(), null);
            case ENVIRONMENT:
                return new ChainedProvider(new AwsEnvironmentProvider(), new MinioEnvironmentProvider());
            default:
                return new ChainedProvider(new AwsEnvironmentProvider(), new MinioEnvironmentProvider(),
                        new AwsConfigProvider(null, null));
        }
    }

    public RemoteStoreSettings settings() {
        return settings;
    }

    /** What the server was found to do (probing it on first use). */
    public ServerTraits traits() throws StoreException {
        return server.traits();
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return server.capabilities();
    }

    @Override
    public String describe() {
        return "MinIO store, " + settings.describe();
    }

    @Override
    public void close() {
        partUploads.shutdownNow();
        try {
            client.close();
            async.close();
        } catch (Exception ignored) {
            // closing only releases pooled connections
        }
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    // ---- calls

    @FunctionalInterface
    private interface MinioCall<T> {
        T run() throws Exception;
    }

    private <T> T call(String operation, String key, MinioCall<T> call) throws StoreException {
        return settings.retryPolicy().run(() -> once(operation, key, call));
    }

    private static <T> T once(String operation, String key, MinioCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (Exception e) {
            throw translate(operation, key, e);
        }
    }

    static StoreException translate(String operation, String key, Throwable e) {
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

    // ---- upload

    /** The request headers every upload carries (encryption, storage class, content type). */
    private Map<String, String> uploadHeaders() {
        Map<String, String> headers = new HashMap<>();
        Encryption sse = settings.encryption();
        if (sse.kind() == Encryption.Kind.S3) {
            headers.put("x-amz-server-side-encryption", "AES256");
        } else if (sse.kind() == Encryption.Kind.KMS) {
            headers.put("x-amz-server-side-encryption", "aws:kms");
            sse.kmsKeyId().ifPresent(id -> headers.put("x-amz-server-side-encryption-aws-kms-key-id", id));
        }
        settings.storageClass().ifPresent(c -> headers.put("x-amz-storage-class", c));
        return headers;
    }

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        KeyRules.check(key);
        server.checkCreateOnly(key, options, body.length() > settings.multipartThreshold(), this::exists);
        if (body.length() > settings.multipartThreshold()) {
            return multipartPut(key, body, options, server.sendsCrc32());
        }
        OptionalLong sent = server.crc32ToSend(key, body, options);
        String fullKey = settings.fullKey(key);
        return call("put", key, () -> {
            try (InputStream in = body.open()) {
                ObjectWriteResponse r = client.putObject(putArgs(fullKey, in, body.length(), sent, options));
                return new PutResult(key, body.length(), unquote(r.etag()), 1);
            }
        });
    }

    private PutObjectArgs putArgs(String fullKey, InputStream in, long length, OptionalLong crc, PutOptions options) {
        Map<String, String> headers = uploadHeaders();
        crc.ifPresent(c -> headers.put(CRC32_HEADER, Crc32Text.toBase64(c)));
        if (options.createOnly()) {
            headers.put("If-None-Match", "*");
        }
        // One request up to the multipart threshold: a part size of at least the body's length.
        long partSize = Math.max(RemoteStoreSettings.MIN_PART_SIZE, length);
        return PutObjectArgs.builder().bucket(settings.bucket()).object(fullKey)
                .stream(in, length, partSize)
                .contentType("application/octet-stream")
                .headers(headers)
                .userMetadata(options.userMetadata())
                .build();
    }

    private PutResult multipartPut(String key, UploadBody body, PutOptions options, boolean sendCrc) throws StoreException {
        String fullKey = settings.fullKey(key);
        return PartedUpload.run(key, body, options, sendCrc, settings, partUploads, new PartedUpload.Calls() {
            @Override
            public String create(Map<String, String> userMetadata) throws StoreException {
                Multimap<String, String> headers = ArrayListMultimap.create();
                uploadHeaders().forEach(headers::put);
                headers.put("Content-Type", "application/octet-stream");
                userMetadata.forEach((k, v) -> headers.put("x-amz-meta-" + k, v));
                if (sendCrc) {
                    headers.put("x-amz-checksum-algorithm", "CRC32");
                }
                return once("create multipart upload", key, () -> async.createMultipartUploadAsync(settings.bucket(),
                        settings.region(), fullKey, headers, null).get().result().uploadId());
            }

            @Override
            public PartedUpload.PartReceipt uploadPart(String uploadId, int partNumber, long from, long count,
                    Optional<String> crc) throws StoreException {
                Multimap<String, String> headers = ArrayListMultimap.create();
                crc.ifPresent(c -> headers.put(CRC32_HEADER, c));
                String etag = once("upload of part " + partNumber, key, () -> {
                    Object data = partData(body, from, count);
                    try {
                        return async.uploadPartAsync(settings.bucket(), settings.region(), fullKey, data, count, uploadId,
                                partNumber, headers, null).get().etag();
                    } finally {
                        if (data instanceof RandomAccessFile raf) {
                            raf.close();
                        }
                    }
                });
                return new PartedUpload.PartReceipt(partNumber, etag, crc);
            }

            @Override
            public String complete(String uploadId, List<PartedUpload.PartReceipt> parts) throws StoreException {
                Part[] completed = new Part[parts.size()];
                for (int i = 0; i < completed.length; i++) {
                    PartedUpload.PartReceipt p = parts.get(i);
                    completed[i] = new Part(p.partNumber(), p.etag(), p.crc32Base64().orElse(null), null, null, null, null);
                }
                Multimap<String, String> headers = ArrayListMultimap.create();
                if (options.createOnly()) {
                    headers.put("If-None-Match", "*");
                }
                return once("complete multipart upload", key, () -> unquote(async.completeMultipartUploadAsync(
                        settings.bucket(), settings.region(), fullKey, uploadId, completed, headers, null).get().etag()));
            }

            @Override
            public void abort(String uploadId) throws StoreException {
                once("abort multipart upload", key, () -> async.abortMultipartUploadAsync(settings.bucket(),
                        settings.region(), fullKey, uploadId, null, null).get());
            }
        });
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

    // ---- incomplete uploads

    /**
     * Lists the multipart uploads under the prefix page by page (key and upload-id markers, as S3
     * pages them; see {@link UploadListing} for why not through the client's own listing call) and
     * aborts each begun before {@code startedBefore}, as the SDK store does. Uploads
     * outside the prefix are skipped even if a server lists them; one gone by the time it is aborted
     * (completed or aborted by its own process) is not an error and is not counted.
     */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        String fullPrefix = settings.fullKey(prefix);
        String base = settings.fullKey("");
        List<String> aborted = new ArrayList<>();
        String keyMarker = null;
        String uploadMarker = null;
        for (int page = 0; page < 10_000; page++) {
            String km = keyMarker;
            String um = uploadMarker;
            ListMultipartUploadsResult res = call("list multipart uploads", prefix,
                    () -> uploadListing.page(settings.bucket(), settings.region(), fullPrefix, km, um));
            for (Upload u : res.uploads()) {
                if (u.initiated() == null || !u.initiated().toInstant().isBefore(startedBefore)
                        || !u.objectName().startsWith(fullPrefix)) {
                    continue;
                }
                String key = u.objectName().substring(base.length());
                try {
                    call("abort multipart upload", key, () -> async.abortMultipartUploadAsync(settings.bucket(),
                            settings.region(), u.objectName(), u.uploadId(), null, null).get());
                    aborted.add(key);
                } catch (ObjectNotFoundException gone) {
                    // NoSuchUpload: it was completed or aborted meanwhile, so there is nothing left to abort
                }
            }
            if (!res.isTruncated()) {
                return aborted;
            }
            keyMarker = res.nextKeyMarker();
            uploadMarker = res.nextUploadIdMarker();
            if (keyMarker == null || keyMarker.isEmpty()) {
                return aborted; // truncated without a marker to go on from: nothing more can be asked for
            }
        }
        return aborted;
    }

    // ---- fetch

    /** The head before a put on a server that ignores If-None-Match (see {@link ProbedServer#checkCreateOnly}). */
    private boolean exists(String key) throws StoreException {
        try {
            head(key);
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        }
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        KeyRules.check(key);
        StatObjectArgs.Builder b = StatObjectArgs.builder().bucket(settings.bucket()).object(settings.fullKey(key));
        if (server.asksStoredCrc32()) {
            b.extraHeaders(Map.of("x-amz-checksum-mode", "ENABLED"));
        }
        StatObjectArgs args = b.build();
        StatObjectResponse r = call("head", key, () -> client.statObject(args));
        Map<String, String> metadata = new HashMap<>();
        r.userMetadata().forEach((k, v) -> metadata.put(k.toLowerCase(Locale.ROOT), v));
        return server.head(key, r.size(), unquote(r.etag()), metadata, r.headers().get(CRC32_HEADER));
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        KeyRules.check(key);
        GetObjectArgs args = GetObjectArgs.builder().bucket(settings.bucket()).object(settings.fullKey(key))
                .offset(range.offset()).length((long) range.length()).build();
        return call("ranged get", key, () -> {
            GetObjectResponse in = client.getObject(args);
            boolean complete = false;
            try {
                Headers h = in.headers();
                ResponseChecks.rangeAnswer(key, range, h.get("Content-Range"), contentLength(h));
                byte[] out = new byte[range.length()];
                ResponseChecks.readFully(key, in, out);
                complete = in.read() < 0;
                if (!complete) {
                    throw new TransientStoreException("ranged get of key '" + key + "' returned more than the "
                            + range.length() + " bytes asked for", key, null, null);
                }
                return out;
            } finally {
                in.close();
            }
        });
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        GetObjectArgs args = getWhole(key);
        return call("get", key, () -> {
            try (GetObjectResponse in = client.getObject(args)) {
                Long length = contentLength(in.headers());
                if (length == null) {
                    throw new StoreRejectedException("get of key '" + key + "' answered without Content-Length", key, null, null);
                }
                if (length > maxSize) {
                    throw new InvalidRangeException("key '" + key + "' holds " + length + " bytes, more than the limit of "
                            + maxSize, key, null, null);
                }
                byte[] out = new byte[length.intValue()];
                ResponseChecks.readFully(key, in, out);
                if (in.read() >= 0) {
                    throw new TransientStoreException("get of key '" + key + "' sent more than its announced "
                            + length + " bytes", key, null, null);
                }
                CRC32 crc = new CRC32();
                crc.update(out);
                ResponseChecks.crc(key, crc.getValue(), expectedCrc32, Crc32Text.fromBase64(in.headers().get(CRC32_HEADER)));
                return out;
            }
        });
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        GetObjectArgs args = getWhole(key);
        return call("download", key, () -> {
            try (GetObjectResponse in = client.getObject(args); DownloadTarget out = DownloadTarget.beside(target)) {
                long length = out.copy(in);
                Long announced = contentLength(in.headers());
                if (announced != null && announced != length) {
                    throw new TransientStoreException("download of key '" + key + "' received " + length + " of "
                            + announced + " bytes", key, null, null);
                }
                ResponseChecks.crc(key, out.crc32(), expectedCrc32, Crc32Text.fromBase64(in.headers().get(CRC32_HEADER)));
                out.commit();
                return new DownloadResult(length, unquote(in.headers().get("ETag")), out.crc32());
            }
        });
    }

    private GetObjectArgs getWhole(String key) throws StoreException {
        GetObjectArgs.Builder b = GetObjectArgs.builder().bucket(settings.bucket()).object(settings.fullKey(key));
        if (server.asksStoredCrc32()) {
            b.extraHeaders(Map.of("x-amz-checksum-mode", "ENABLED"));
        }
        return b.build();
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

    // ---- list

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        String p = KeyRules.checkPrefix(prefix);
        if (maxKeys < 1 || maxKeys > 1000) {
            throw new IllegalArgumentException("list max-keys must be in [1, 1000]: " + maxKeys);
        }
        String base = settings.listPrefix();
        ListObjectsArgs.Builder b = ListObjectsArgs.builder().bucket(settings.bucket()).prefix(base + p)
                .recursive(true).maxKeys(maxKeys);
        if (continuation != null) {
            // The continuation token is the last key of the previous page; MinIO's iterator pages by start-after.
            b.startAfter(base + continuation);
        }
        ListObjectsArgs args = b.build();
        return call("list", null, () -> {
            List<ObjectSummary> entries = new ArrayList<>();
            Iterator<Result<Item>> it = client.listObjects(args).iterator();
            String last = null;
            int seen = 0;
            while (seen < maxKeys && it.hasNext()) {
                Item item = it.next().get();
                seen++;
                String key = item.objectName().substring(base.length());
                last = key;
                if (!key.startsWith(KeyRules.RESERVED_PREFIX)) {
                    entries.add(new ObjectSummary(key, item.size(), unquote(item.etag())));
                }
            }
            // A full page may have more behind it; the next call then finds out (possibly an empty last page).
            return new ListPage(entries, seen == maxKeys ? Optional.of(last) : Optional.empty());
        });
    }

    // ---- delete

    @Override
    public void delete(String key) throws StoreException {
        KeyRules.check(key);
        deleteFull(key, settings.fullKey(key));
    }

    private void deleteFull(String key, String fullKey) throws StoreException {
        try {
            call("delete", key, () -> {
                client.removeObject(RemoveObjectArgs.builder().bucket(settings.bucket()).object(fullKey).build());
                return null;
            });
        } catch (ObjectNotFoundException e) {
            if (!"NoSuchKey".equals(e.answer().errorCode()) && !e.answer().errorCode().isEmpty()) {
                throw e;
            }
        }
    }

    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        List<String> all = new ArrayList<>(keys);
        for (String key : all) {
            KeyRules.check(key);
        }
        if (all.isEmpty()) {
            return;
        }
        List<DeleteObject> objects = new ArrayList<>(all.size());
        for (String key : all) {
            objects.add(new DeleteObject(settings.fullKey(key)));
        }
        RemoveObjectsArgs args = RemoveObjectsArgs.builder().bucket(settings.bucket()).objects(objects).build();
        List<String> failed = new ArrayList<>();
        StoreException first = call("batch delete", null, () -> {
            failed.clear();
            StoreException firstFailure = null;
            // The iterable sends the batches (1000 keys each) only as it is consumed.
            for (Result<DeleteError> result : client.removeObjects(args)) {
                DeleteError error = result.get();
                if ("NoSuchKey".equals(error.code())) {
                    continue;
                }
                String key = error.objectName() != null && error.objectName().startsWith(settings.listPrefix())
                        ? error.objectName().substring(settings.listPrefix().length()) : error.objectName();
                failed.add(key);
                if (firstFailure == null) {
                    firstFailure = S3ErrorTranslation.fromAnswer("batch delete", key, 0, error.code(), error.message(), null);
                }
            }
            return firstFailure;
        });
        if (first != null) {
            first.addSuppressed(new StoreRejectedException(failed.size() + " of " + all.size()
                    + " keys could not be deleted, first: " + failed.subList(0, Math.min(5, failed.size())), null, null, null));
            throw first;
        }
    }

    /** Raw operations for the capability probe. */
    private final class ProbeTarget implements ServerProbe.Target {
        @Override
        public void put(String fullKey, byte[] body, OptionalLong crc32, boolean createOnly) throws StoreException {
            call("probe put", fullKey, () -> client.putObject(putArgs(fullKey, new java.io.ByteArrayInputStream(body),
                    body.length, crc32, PutOptions.defaults().withCreateOnly(createOnly))));
        }

        @Override
        public OptionalLong storedCrc32(String fullKey) throws StoreException {
            StatObjectResponse r = call("probe head", fullKey, () -> client.statObject(StatObjectArgs.builder()
                    .bucket(settings.bucket()).object(fullKey).extraHeaders(Map.of("x-amz-checksum-mode", "ENABLED")).build()));
            return Crc32Text.fromBase64(r.headers().get(CRC32_HEADER));
        }

        @Override
        public void delete(String fullKey) throws StoreException {
            deleteFull(fullKey, fullKey);
        }

        @Override
        public List<String> listFullKeys(String fullPrefix) throws StoreException {
            ListObjectsArgs args = ListObjectsArgs.builder().bucket(settings.bucket()).prefix(fullPrefix)
                    .recursive(true).maxKeys(1000).build();
            return call("probe list", fullPrefix, () -> {
                List<String> keys = new ArrayList<>();
                Iterator<Result<Item>> it = client.listObjects(args).iterator();
                while (keys.size() < 1000 && it.hasNext()) {
                    keys.add(it.next().get().objectName());
                }
                return keys;
            });
        }
    }
}
