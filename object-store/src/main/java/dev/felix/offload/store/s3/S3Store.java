package dev.felix.offload.store.s3;

import static dev.felix.offload.store.remote.ResponseChecks.unquote;

import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.RetryPolicy;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.remote.ChecksumMode;
import dev.felix.offload.store.remote.Crc32Text;
import dev.felix.offload.store.remote.DownloadTarget;
import dev.felix.offload.store.remote.Encryption;
import dev.felix.offload.store.remote.PartedUpload;
import dev.felix.offload.store.remote.ProbedServer;
import dev.felix.offload.store.remote.ResponseChecks;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import dev.felix.offload.store.remote.ServerProbe;
import dev.felix.offload.store.remote.ServerTraits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.exception.SdkServiceException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * A store in an S3 bucket (or an S3-compatible server) through the AWS SDK for Java v2.
 *
 * <p>The SDK's own retries are off: every operation runs under the settings' {@link RetryPolicy}
 * (backoff with full jitter, bounded in attempts and time), the same for every remote store. The
 * SDK never streams bodies with checksum trailers (many S3-compatible servers refuse them); CRC32s
 * travel as plain headers where {@link ChecksumMode} says so. Bodies above the multipart threshold
 * are uploaded in parts, several at once, and the upload is aborted if any part (or the
 * completion) fails.
 */
public final class S3Store implements ObjectStore, IncompleteUploads {
    private static final int DELETE_BATCH = 1000;
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final RemoteStoreSettings settings;
    private final S3Client s3;
    private final ExecutorService partUploads;
    private final ProbedServer server;

    private S3Store(RemoteStoreSettings settings, S3Client s3) {
        this.settings = settings;
        this.s3 = s3;
        this.partUploads = Executors.newFixedThreadPool(settings.partConcurrency(), r -> {
            Thread t = new Thread(r, "s3-part-upload-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.server = new ProbedServer(settings, new ProbeTarget());
    }

    public static S3Store open(RemoteStoreSettings settings) {
        S3Client client = S3Client.builder()
                .region(Region.of(settings.region()))
                .applyMutation(b -> settings.endpoint().ifPresent(b::endpointOverride))
                .forcePathStyle(settings.pathStyle())
                .credentialsProvider(credentialsProvider(settings))
                // Never aws-chunked bodies with trailers: S3Proxy, Ceph and older MinIO refuse them.
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
                .httpClientBuilder(ApacheHttpClient.builder()
                        .connectionTimeout(settings.connectTimeout())
                        .socketTimeout(settings.attemptTimeout())
                        .maxConnections(settings.partConcurrency() * 2 + 16))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .apiCallAttemptTimeout(settings.attemptTimeout())
                        .apiCallTimeout(settings.attemptTimeout()))
                .build();
        return new S3Store(settings, client);
    }

    private static AwsCredentialsProvider credentialsProvider(RemoteStoreSettings settings) {
        switch (settings.credentials().source()) {
            case ENVIRONMENT:
                return EnvironmentVariableCredentialsProvider.create();
            case STATIC:
                return StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        settings.credentials().accessKey().orElseThrow(), settings.credentials().secretKey().orElseThrow()));
            default:
                return DefaultCredentialsProvider.builder().build();
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
        return "S3 store, " + settings.describe();
    }

    @Override
    public void close() {
        partUploads.shutdownNow();
        s3.close();
    }

    // ---- calls

    @FunctionalInterface
    private interface SdkCall<T> {
        T run() throws StoreException, IOException;
    }

    private <T> T call(String operation, String key, SdkCall<T> call) throws StoreException {
        return settings.retryPolicy().run(() -> once(operation, key, call));
    }

    private static <T> T once(String operation, String key, SdkCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (SdkServiceException e) {
            AwsErrorDetails details = e instanceof software.amazon.awssdk.awscore.exception.AwsServiceException a
                    ? a.awsErrorDetails() : null;
            throw S3ErrorTranslation.fromAnswer(operation, key, e.statusCode(),
                    details == null ? null : details.errorCode(), details == null ? null : details.errorMessage(), e);
        } catch (SdkClientException | IOException | UncheckedIOException e) {
            throw S3ErrorTranslation.fromIo(operation, key, e);
        } catch (SdkException e) {
            throw S3ErrorTranslation.fromIo(operation, key, e);
        }
    }

    // ---- upload

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        KeyRules.check(key);
        server.checkCreateOnly(key, options, body.length() > settings.multipartThreshold(), this::exists);
        if (body.length() > settings.multipartThreshold()) {
            return multipartPut(key, body, options, server.sendsCrc32());
        }
        OptionalLong sent = server.crc32ToSend(key, body, options);
        PutObjectRequest request = putRequest(settings.fullKey(key), body.length(), sent, options);
        return call("put", key, () -> {
            PutObjectResponse response = s3.putObject(request, requestBody(body, 0, body.length()));
            return new PutResult(key, body.length(), unquote(response.eTag()), 1);
        });
    }

    private PutObjectRequest putRequest(String fullKey, long length, OptionalLong crc, PutOptions options) {
        PutObjectRequest.Builder b = PutObjectRequest.builder()
                .bucket(settings.bucket())
                .key(fullKey)
                .contentLength(length)
                .contentType("application/octet-stream")
                .metadata(options.userMetadata());
        crc.ifPresent(c -> b.checksumCRC32(Crc32Text.toBase64(c)));
        if (options.createOnly()) {
            b.ifNoneMatch("*");
        }
        Encryption sse = settings.encryption();
        if (sse.kind() == Encryption.Kind.S3) {
            b.serverSideEncryption(ServerSideEncryption.AES256);
        } else if (sse.kind() == Encryption.Kind.KMS) {
            b.serverSideEncryption(ServerSideEncryption.AWS_KMS);
            sse.kmsKeyId().ifPresent(b::ssekmsKeyId);
        }
        settings.storageClass().ifPresent(b::storageClass);
        return b.build();
    }

    private static RequestBody requestBody(UploadBody body, long from, long count) {
        return RequestBody.fromContentProvider(() -> {
            try {
                return body.open(from, count);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, count, "application/octet-stream");
    }

    private PutResult multipartPut(String key, UploadBody body, PutOptions options, boolean sendCrc) throws StoreException {
        String fullKey = settings.fullKey(key);
        return PartedUpload.run(key, body, options, sendCrc, settings, partUploads, new PartedUpload.Calls() {
            @Override
            public String create(java.util.Map<String, String> userMetadata) throws StoreException {
                CreateMultipartUploadRequest.Builder create = CreateMultipartUploadRequest.builder()
                        .bucket(settings.bucket()).key(fullKey).contentType("application/octet-stream")
                        .metadata(userMetadata);
                if (sendCrc) {
                    create.checksumAlgorithm(ChecksumAlgorithm.CRC32);
                }
                Encryption sse = settings.encryption();
                if (sse.kind() == Encryption.Kind.S3) {
                    create.serverSideEncryption(ServerSideEncryption.AES256);
                } else if (sse.kind() == Encryption.Kind.KMS) {
                    create.serverSideEncryption(ServerSideEncryption.AWS_KMS);
                    sse.kmsKeyId().ifPresent(create::ssekmsKeyId);
                }
                settings.storageClass().ifPresent(create::storageClass);
                return once("create multipart upload", key, () -> s3.createMultipartUpload(create.build()).uploadId());
            }

            @Override
            public PartedUpload.PartReceipt uploadPart(String uploadId, int partNumber, long from, long count,
                    Optional<String> crc) throws StoreException {
                UploadPartRequest.Builder b = UploadPartRequest.builder().bucket(settings.bucket()).key(fullKey)
                        .uploadId(uploadId).partNumber(partNumber).contentLength(count);
                crc.ifPresent(b::checksumCRC32);
                UploadPartResponse r = once("upload of part " + partNumber, key,
                        () -> s3.uploadPart(b.build(), requestBody(body, from, count)));
                return new PartedUpload.PartReceipt(partNumber, r.eTag(), crc);
            }

            @Override
            public String complete(String uploadId, List<PartedUpload.PartReceipt> parts) throws StoreException {
                List<CompletedPart> completed = new ArrayList<>(parts.size());
                for (PartedUpload.PartReceipt p : parts) {
                    completed.add(CompletedPart.builder().partNumber(p.partNumber()).eTag(p.etag())
                            .checksumCRC32(p.crc32Base64().orElse(null)).build());
                }
                CompleteMultipartUploadRequest.Builder complete = CompleteMultipartUploadRequest.builder()
                        .bucket(settings.bucket()).key(fullKey).uploadId(uploadId)
                        .multipartUpload(CompletedMultipartUpload.builder().parts(completed).build());
                if (options.createOnly()) {
                    complete.ifNoneMatch("*");
                }
                CompleteMultipartUploadResponse done = once("complete multipart upload", key,
                        () -> s3.completeMultipartUpload(complete.build()));
                return unquote(done.eTag());
            }

            @Override
            public void abort(String uploadId) throws StoreException {
                once("abort multipart upload", key, () -> s3.abortMultipartUpload(AbortMultipartUploadRequest.builder()
                        .bucket(settings.bucket()).key(fullKey).uploadId(uploadId).build()));
            }
        });
    }

    // ---- incomplete uploads

    @Override
    public java.util.List<String> abortIncompleteUploads(String prefix, java.time.Instant startedBefore)
            throws StoreException {
        String fullPrefix = settings.fullKey(prefix);
        java.util.List<String> aborted = new java.util.ArrayList<>();
        String keyMarker = null;
        String uploadMarker = null;
        for (int page = 0; page < 10_000; page++) {
            ListMultipartUploadsRequest.Builder req = ListMultipartUploadsRequest.builder().bucket(settings.bucket())
                    .prefix(fullPrefix);
            if (keyMarker != null) {
                req.keyMarker(keyMarker).uploadIdMarker(uploadMarker);
            }
            ListMultipartUploadsResponse res = call("list multipart uploads", prefix,
                    () -> s3.listMultipartUploads(req.build()));
            for (MultipartUpload u : res.uploads()) {
                // the prefix is checked again: a server that ignored it must not lead to aborting another node's uploads
                if (u.initiated() != null && u.initiated().isBefore(startedBefore) && u.key().startsWith(fullPrefix)) {
                    String key = u.key().substring(settings.fullKey("").length());
                    try {
                        call("abort multipart upload", key, () -> s3.abortMultipartUpload(AbortMultipartUploadRequest.builder()
                                .bucket(settings.bucket()).key(u.key()).uploadId(u.uploadId()).build()));
                        aborted.add(key);
                    } catch (ObjectNotFoundException gone) {
                        // NoSuchUpload: it was completed or aborted meanwhile, so there is nothing left to abort
                    }
                }
            }
            if (!Boolean.TRUE.equals(res.isTruncated())) {
                return aborted;
            }
            keyMarker = res.nextKeyMarker();
            uploadMarker = res.nextUploadIdMarker();
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
        HeadObjectRequest.Builder b = HeadObjectRequest.builder().bucket(settings.bucket()).key(settings.fullKey(key));
        if (server.asksStoredCrc32()) {
            b.checksumMode(software.amazon.awssdk.services.s3.model.ChecksumMode.ENABLED);
        }
        HeadObjectRequest request = b.build();
        HeadObjectResponse r = call("head", key, () -> s3.headObject(request));
        return server.head(key, r.contentLength(), unquote(r.eTag()), r.metadata(), r.checksumCRC32());
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        KeyRules.check(key);
        GetObjectRequest request = GetObjectRequest.builder().bucket(settings.bucket()).key(settings.fullKey(key))
                .range("bytes=" + range.offset() + "-" + range.lastInclusive()).build();
        return call("ranged get", key, () -> {
            ResponseInputStream<GetObjectResponse> in = s3.getObject(request);
            boolean complete = false;
            try {
                GetObjectResponse r = in.response();
                ResponseChecks.rangeAnswer(key, range, r.contentRange(), r.contentLength());
                byte[] out = new byte[range.length()];
                ResponseChecks.readFully(key, in, out);
                complete = in.read() < 0;
                if (!complete) {
                    throw new TransientStoreException("ranged get of key '" + key + "' returned more than the "
                            + range.length() + " bytes asked for", key, null, null);
                }
                return out;
            } finally {
                closeStream(in, complete);
            }
        });
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        GetObjectRequest request = getWhole(key);
        return call("get", key, () -> {
            ResponseInputStream<GetObjectResponse> in = s3.getObject(request);
            boolean complete = false;
            try {
                GetObjectResponse r = in.response();
                long length = r.contentLength() == null ? -1 : r.contentLength();
                if (length < 0) {
                    throw new StoreRejectedException("get of key '" + key + "' answered without Content-Length", key, null, null);
                }
                if (length > maxSize) {
                    throw new InvalidRangeException("key '" + key + "' holds " + length + " bytes, more than the limit of "
                            + maxSize, key, null, null);
                }
                byte[] out = new byte[(int) length];
                ResponseChecks.readFully(key, in, out);
                complete = in.read() < 0;
                if (!complete) {
                    throw new TransientStoreException("get of key '" + key + "' sent more than its announced "
                            + length + " bytes", key, null, null);
                }
                CRC32 crc = new CRC32();
                crc.update(out);
                ResponseChecks.crc(key, crc.getValue(), expectedCrc32, Crc32Text.fromBase64(r.checksumCRC32()));
                return out;
            } finally {
                closeStream(in, complete);
            }
        });
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        GetObjectRequest request = getWhole(key);
        return call("download", key, () -> {
            ResponseInputStream<GetObjectResponse> in = s3.getObject(request);
            boolean complete = false;
            try (DownloadTarget out = DownloadTarget.beside(target)) {
                GetObjectResponse r = in.response();
                long length = out.copy(in);
                complete = true;
                if (r.contentLength() != null && r.contentLength() != length) {
                    throw new TransientStoreException("download of key '" + key + "' received " + length + " of "
                            + r.contentLength() + " bytes", key, null, null);
                }
                ResponseChecks.crc(key, out.crc32(), expectedCrc32, Crc32Text.fromBase64(r.checksumCRC32()));
                out.commit();
                return new DownloadResult(length, unquote(r.eTag()), out.crc32());
            } finally {
                closeStream(in, complete);
            }
        });
    }

    private GetObjectRequest getWhole(String key) throws StoreException {
        GetObjectRequest.Builder b = GetObjectRequest.builder().bucket(settings.bucket()).key(settings.fullKey(key));
        if (server.asksStoredCrc32()) {
            b.checksumMode(software.amazon.awssdk.services.s3.model.ChecksumMode.ENABLED);
        }
        return b.build();
    }

    /** Aborts instead of draining a body that was not read to its end. */
    private static void closeStream(ResponseInputStream<?> in, boolean complete) {
        if (!complete) {
            in.abort();
        }
        try {
            in.close();
        } catch (IOException | RuntimeException ignored) {
            // the connection is discarded either way
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
        ListObjectsV2Request request = ListObjectsV2Request.builder().bucket(settings.bucket()).prefix(base + p)
                .maxKeys(maxKeys).continuationToken(continuation).build();
        ListObjectsV2Response r = call("list", null, () -> s3.listObjectsV2(request));
        List<ObjectSummary> entries = new ArrayList<>();
        for (S3Object o : r.contents()) {
            String key = o.key().substring(base.length());
            if (!key.startsWith(KeyRules.RESERVED_PREFIX)) {
                entries.add(new ObjectSummary(key, o.size(), unquote(o.eTag())));
            }
        }
        boolean more = Boolean.TRUE.equals(r.isTruncated()) && r.nextContinuationToken() != null;
        return new ListPage(entries, more ? Optional.of(r.nextContinuationToken()) : Optional.empty());
    }

    // ---- delete

    @Override
    public void delete(String key) throws StoreException {
        KeyRules.check(key);
        deleteFull(key, settings.fullKey(key));
    }

    private void deleteFull(String key, String fullKey) throws StoreException {
        try {
            call("delete", key, () -> s3.deleteObject(b -> b.bucket(settings.bucket()).key(fullKey)));
        } catch (ObjectNotFoundException e) {
            // S3 answers 204 for a missing key; some servers answer 404 NoSuchKey: both mean "gone"
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
        List<String> failed = new ArrayList<>();
        StoreException first = null;
        for (int from = 0; from < all.size(); from += DELETE_BATCH) {
            List<String> batch = all.subList(from, Math.min(all.size(), from + DELETE_BATCH));
            List<ObjectIdentifier> ids = new ArrayList<>(batch.size());
            for (String key : batch) {
                ids.add(ObjectIdentifier.builder().key(settings.fullKey(key)).build());
            }
            DeleteObjectsResponse r;
            try {
                r = call("batch delete", null, () -> s3.deleteObjects(b -> b.bucket(settings.bucket())
                        .delete(Delete.builder().objects(ids).quiet(true).build())));
            } catch (StoreException e) {
                failed.addAll(batch);
                first = first == null ? e : first;
                continue;
            }
            for (S3Error error : r.errors()) {
                if ("NoSuchKey".equals(error.code())) {
                    continue;
                }
                String key = error.key() != null && error.key().startsWith(settings.listPrefix())
                        ? error.key().substring(settings.listPrefix().length()) : error.key();
                failed.add(key);
                if (first == null) {
                    first = S3ErrorTranslation.fromAnswer("batch delete", key, 0, error.code(), error.message(), null);
                }
            }
        }
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
            PutObjectRequest request = putRequest(fullKey, body.length, crc32, PutOptions.defaults().withCreateOnly(createOnly));
            call("probe put", fullKey, () -> s3.putObject(request, RequestBody.fromBytes(body)));
        }

        @Override
        public OptionalLong storedCrc32(String fullKey) throws StoreException {
            HeadObjectResponse r = call("probe head", fullKey, () -> s3.headObject(b -> b.bucket(settings.bucket())
                    .key(fullKey).checksumMode(software.amazon.awssdk.services.s3.model.ChecksumMode.ENABLED)));
            return Crc32Text.fromBase64(r.checksumCRC32());
        }

        @Override
        public void delete(String fullKey) throws StoreException {
            deleteFull(fullKey, fullKey);
        }

        @Override
        public List<String> listFullKeys(String fullPrefix) throws StoreException {
            return call("probe list", fullPrefix, () -> s3.listObjectsV2(b -> b.bucket(settings.bucket())
                    .prefix(fullPrefix).maxKeys(1000)).contents().stream().map(o -> o.key()).toList());
        }
    }
}
