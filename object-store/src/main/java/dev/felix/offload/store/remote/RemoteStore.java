package dev.felix.offload.store.remote;

import static dev.felix.offload.store.remote.ResponseChecks.unquote;

import dev.felix.offload.store.BodyDigests;
import dev.felix.offload.store.Bucket;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.CapabilityMissingException;
import dev.felix.offload.store.DigestPlan;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.IncompleteUploads;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.KeyRules;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectCopier;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.RequestGate;
import dev.felix.offload.store.RetryPolicy;
import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * A store in an S3-compatible bucket: the store's logic written once, over the wire calls of
 * whichever HTTP client the settings chose ({@link S3Wire}; the AWS SDK's and the MinIO client's).
 *
 * <p>Every operation runs under the settings' {@link RetryPolicy} (backoff with full jitter,
 * bounded in attempts and time); the clients' own retries are off. What the server does with
 * CRC32 headers, {@code Content-MD5} and {@code If-None-Match} is probed on first use
 * ({@link ServerProbe}), and the store sends and asks for checksums only where that makes sense;
 * where the server checks the CRC32s it is sent, a put's acceptance proves its copy
 * ({@link PutResult#crc32Proven()}), and no MD5 is taken; else where it checks Content-MD5 and
 * answers MD5 ETags, the answer's ETag does ({@link PutResult#contentMd5Proven()}). Bodies above the multipart
 * threshold go up in parts, several at once ({@link PartedUpload}), aborted if any part or the
 * completion fails. Every answer is checked before it is believed: a range answer's range and
 * length, a whole body's length and CRC32, a listing's prefix. Multipart uploads a killed process
 * left behind are found and aborted ({@link IncompleteUploads}).
 */
public final class RemoteStore implements ObjectStore, IncompleteUploads, ObjectCopier, RequestGate, Bucket {
    private static final int DELETE_BATCH = 1000;

    private final RemoteStoreSettings settings;
    private final S3Wire wire;
    private final MultipartUploads multipart;
    private final ServerProbe server;
    private final UploadPlan uploads;
    private final Map<String, String> uploadHeaders;
    private final WireCalls calls;

    public RemoteStore(RemoteStoreSettings settings, S3Wire wire) {
        this(settings, wire, ProbeOptions.inMemory());
    }

    /** @param probe how the server's traits are learnt and kept ({@link ServerProbe}) */
    public RemoteStore(RemoteStoreSettings settings, S3Wire wire, ProbeOptions probe) {
        this.settings = settings;
        this.wire = wire;
        this.calls = new WireCalls(settings, wire);
        this.uploadHeaders = uploadHeaders(settings);
        this.server = new ServerProbe(settings,
                new WireProbeTarget(calls, wire, uploadHeaders, fullKey -> deleteFull(fullKey, fullKey)), probe,
                java.time.Clock.systemUTC());
        this.uploads = new UploadPlan(settings, wire.buffersPacedBodies(), rate -> server.keepUploadRate(rate));
        this.multipart = new MultipartUploads(settings, wire, calls, uploads, uploadHeaders);
        wire.onServerIdentity(server::answered);
    }

    /** The request headers every upload carries: encryption and storage class. */
    private static Map<String, String> uploadHeaders(RemoteStoreSettings settings) {
        Map<String, String> headers = new HashMap<>();
        Encryption sse = settings.encryption();
        if (sse.kind() == Encryption.Kind.S3) {
            headers.put("x-amz-server-side-encryption", "AES256");
        } else if (sse.kind() == Encryption.Kind.KMS) {
            headers.put("x-amz-server-side-encryption", "aws:kms");
            sse.kmsKeyId().ifPresent(id -> headers.put("x-amz-server-side-encryption-aws-kms-key-id", id));
        }
        settings.storageClass().ifPresent(c -> headers.put("x-amz-storage-class", c));
        return Map.copyOf(headers);
    }

    public RemoteStoreSettings settings() {
        return settings;
    }

    /** The client this store talks through. */
    public S3Wire wire() {
        return wire;
    }

    /** What the server was found to do (probing it on first use, where nothing is kept). */
    public ServerTraits traits() throws StoreException {
        return server.traits();
    }

    /** Where the traits in use came from: probed now, kept, the store's copy, or assumed. */
    public ServerProbe.Source traitsSource() {
        return server.source();
    }

    /** What is known of the server now, with the time it was learnt and the server it was learnt from. */
    public Optional<ServerFindings> findings() {
        return server.findings();
    }

    @Override
    public void uploadsPacedAt(long bytesPerSecond) {
        uploads.pacedAt(bytesPerSecond);
    }

    @Override
    public Optional<String> describeUploads() {
        return uploads.explain().map(e -> "bodies over the " + UploadPlan.mib(settings.partSize()) + " part size: " + e);
    }

    @Override
    public Set<StoreCapability> capabilities() throws StoreException {
        return server.capabilities();
    }

    @Override
    public Optional<IncompleteUploads> incompleteUploads() {
        return Optional.of(this);
    }

    @Override
    public Optional<ObjectCopier> copier() {
        return Optional.of(this);
    }

    @Override
    public Optional<RequestGate> requestGate() {
        return Optional.of(this);
    }

    @Override
    public Optional<Bucket> bucket() {
        return Optional.of(this);
    }

    @Override
    public void requireExists(String prefix) throws StoreException {
        listPage(prefix, null, 1);
    }

    @Override
    public String describe() {
        return wire.name() + ", " + settings.describe();
    }

    @Override
    public void close() {
        multipart.close();
        wire.close();
        server.close();
    }

    // ---- upload

    @Override
    public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
        KeyRules.check(key);
        server.traits(); // learnt first: the upload rate kept with them decides how the body goes
        uploads.seed(server.keptUploadRate());
        boolean multipart = uploads.inParts(body.length(), body.givenDigests().map(BodyDigests::partSize));
        server.checkCreateOnly(key, options, multipart, this::exists);
        uploads.sent(body.length(), multipart);
        if (multipart) {
            // a body's whole upload is measured, its parts together: what one PUT of it is set against
            long started = System.nanoTime();
            PutResult parted = multipartPut(key, body, options, server.sendsCrc32());
            uploads.measured(body.length(), System.nanoTime() - started);
            return parted;
        }
        String fullKey = settings.fullKey(key);
        if (server.provesByCrc32()) {
            // The server computes the CRC32 of what arrives and refuses the put unless it is the one sent,
            // the caller's (or, without one, the body's as read now): its acceptance is the proof, no MD5 needed.
            wire.bodyChecksumCheckedByServer(S3Wire.BodyChecksum.CRC32);
            OptionalLong sent = options.crc32().isPresent() ? options.crc32()
                    : OptionalLong.of(PartedUpload.digests(key, body, Math.max(1, body.length()), false).crc32());
            S3Wire.Upload upload = new S3Wire.Upload(uploadHeaders, options.userMetadata(), sent, Optional.empty(),
                    options.createOnly());
            return new PutResult(key, body.length(), singlePut(key, fullKey, body, upload), 1, false, true);
        }
        if (!server.sendsContentMd5()) {
            OptionalLong sent = server.crc32ToSend(key, body, options);
            S3Wire.Upload upload = new S3Wire.Upload(uploadHeaders, options.userMetadata(), sent, Optional.empty(),
                    options.createOnly());
            return new PutResult(key, body.length(), singlePut(key, fullKey, body, upload), 1);
        }
        // The MD5 the server checks is taken in the same read as a CRC32 compared with the caller's, so
        // the answer proves the caller's bytes only where the two agree; a body changing after that read
        // is refused by the server. A caller's CRC32 that disagrees still travels as before (a server that
        // checks it refuses the put; one that does not stores the bytes), but proves nothing.
        wire.bodyChecksumCheckedByServer(S3Wire.BodyChecksum.CONTENT_MD5);
        BodyDigests digests = PartedUpload.digests(key, body, Math.max(1, body.length()), true);
        boolean callersBytes = options.crc32().isEmpty() || options.crc32().getAsLong() == digests.crc32();
        OptionalLong sent = server.sendsCrc32() ? OptionalLong.of(options.crc32().orElse(digests.crc32()))
                : OptionalLong.empty();
        S3Wire.Upload upload = new S3Wire.Upload(uploadHeaders, options.userMetadata(), sent,
                Optional.of(digests.contentMd5(0)), options.createOnly());
        boolean md5Etags = callersBytes && server.provesByContentMd5();
        String etag = singlePut(key, fullKey, body, upload);
        boolean proven = md5Etags && ContentMd5Proof.holds(key, etag, digests, false);
        if (md5Etags && !proven) {
            // the server checked the MD5 of these very bytes, so an ETag that is not it says its ETags are no MD5s
            server.contradicted("the ETag answered for key '" + key + "' is not the MD5 of its bytes, though the server "
                    + "was found to answer MD5 ETags");
        }
        return new PutResult(key, body.length(), etag, 1, proven, false);
    }

    /**
     * One PUT of the whole body under the retry policy: its ETag, unquoted. Each attempt's rate goes to
     * the upload plan; a create-only put refused with 412 where the server was found to ignore
     * {@code If-None-Match} contradicts that finding.
     */
    private String singlePut(String key, String fullKey, UploadBody body, S3Wire.Upload upload) throws StoreException {
        try {
            return calls.call("put", key, WireCalls.BodyDigest.of(upload.carriesDigest()), () -> {
                long started = System.nanoTime();
                try {
                    String etag = unquote(wire.putObject(fullKey, body, upload));
                    uploads.measured(body.length(), System.nanoTime() - started);
                    return etag;
                } catch (Exception e) {
                    uploads.failed(body.length());
                    throw e;
                }
            });
        } catch (dev.felix.offload.store.PreconditionFailedException e) {
            if (upload.createOnly() && !server.traits().createOnlyHonoured()) {
                server.contradicted("a create-only put of key '" + key + "' was refused with " + e.answer()
                        + ", though the server was found to ignore If-None-Match");
            }
            throw e;
        }
    }

    /**
     * Multipart bodies in the configured part size (their part CRC32s check the caller's), a single
     * request's as one slice where it carries a Content-MD5 or CRC32; none where it carries neither.
     * MD5s only where the requests carry them. Kept findings answer before the server was asked
     * anything, so a caller can read segments while the store starts up.
     */
    @Override
    public Optional<DigestPlan> digestPlan(long length) throws StoreException {
        boolean md5s = server.plansContentMd5();
        uploads.seed(server.keptUploadRate());
        if (uploads.inParts(length, Optional.empty())) {
            return Optional.of(new DigestPlan(settings.partSize(), md5s));
        }
        return md5s || server.plansCrc32() ? Optional.of(new DigestPlan(Math.max(1, length), md5s)) : Optional.empty();
    }

    private PutResult multipartPut(String key, UploadBody body, PutOptions options, boolean sendCrc) throws StoreException {
        boolean sendMd5 = server.sendsContentMd5();
        if (sendMd5) {
            wire.bodyChecksumCheckedByServer(S3Wire.BodyChecksum.CONTENT_MD5);
        }
        boolean crc32Checked = sendCrc && server.provesByCrc32();
        if (crc32Checked) {
            wire.bodyChecksumCheckedByServer(S3Wire.BodyChecksum.CRC32);
        }
        return multipart.put(key, body, options, sendCrc, crc32Checked, sendMd5, server.provesByContentMd5());
    }

    // ---- server-side copy

    /**
     * CopyObject within the bucket (see {@link ObjectCopier}): the target headed first, so an
     * existing one is never replaced whatever the server does with conditions on a copy; the
     * upload's server-side encryption applies to the target.
     */
    @Override
    public PutResult copy(String sourceKey, String targetKey) throws StoreException {
        KeyRules.check(sourceKey);
        KeyRules.check(targetKey);
        ObjectHead source = head(sourceKey);
        if (source.size() > MAX_COPY_BYTES) {
            throw new CapabilityMissingException("object '" + sourceKey + "' of " + source.size() + " bytes is larger than "
                    + "one copy request takes (" + MAX_COPY_BYTES + ")", sourceKey, StoreAnswer.NONE, null);
        }
        if (exists(targetKey)) {
            throw new PreconditionFailedException("copy to '" + targetKey + "' refused: an object exists there",
                    targetKey, StoreAnswer.NONE, null);
        }
        String fullSource = settings.fullKey(sourceKey);
        String fullTarget = settings.fullKey(targetKey);
        String etag = calls.call("copy", targetKey, () -> unquote(wire.copyObject(fullSource, fullTarget, uploadHeaders)));
        return new PutResult(targetKey, source.size(), etag, 1);
    }

    // ---- stopping

    @Override
    public void stopRequests() {
        calls.stopRequests();
    }

    /** Sequentially, each abort bounded by the connect and read timeouts; a failure leaves the upload to the orphan sweep. */
    @Override
    public List<String> abortOpenUploads() {
        return multipart.abortOpen();
    }

    // ---- incomplete uploads

    /**
     * Lists the multipart uploads under the prefix page by page (key and upload-id markers) and
     * aborts each begun before {@code startedBefore} (see {@link MultipartUploads#abortIncomplete}).
     */
    @Override
    public List<String> abortIncompleteUploads(String prefix, Instant startedBefore) throws StoreException {
        return multipart.abortIncomplete(prefix, startedBefore);
    }

    // ---- fetch

    /** The head before a put on a server that ignores If-None-Match (see {@link ServerProbe#checkCreateOnly}). */
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
        String fullKey = settings.fullKey(key);
        boolean withChecksum = server.asksStoredCrc32();
        S3Wire.Head r = calls.call("head", key, () -> wire.headObject(fullKey, withChecksum));
        return server.head(key, r.length(), unquote(r.etag()), r.userMetadata(), r.crc32Base64());
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        byte[] out = new byte[range.length()];
        readRangeInto(key, range, List.of(out), filled -> { });
        return out;
    }

    @Override
    public void readRangeInto(String key, ByteRange range, List<byte[]> targets, java.util.function.IntConsumer filled)
            throws StoreException {
        ObjectFetcher.checkTargets(range, targets);
        KeyRules.check(key);
        String fullKey = settings.fullKey(key);
        int[] done = {0}; // targets filled by earlier attempts: a retry asks for the rest only
        calls.call("ranged get", key, () -> {
            long skipped = 0;
            for (int i = 0; i < done[0]; i++) {
                skipped += targets.get(i).length;
            }
            ByteRange rest = ByteRange.of(range.offset() + skipped, (int) (range.length() - skipped));
            S3Wire.Body in = wire.getObject(fullKey, rest, false);
            boolean complete = false;
            try {
                ResponseChecks.rangeAnswer(key, rest, in.contentRange(), in.contentLength());
                while (done[0] < targets.size()) {
                    ResponseChecks.readFully(key, in.stream(), targets.get(done[0]));
                    filled.accept(done[0]++);
                }
                complete = in.stream().read() < 0;
                if (!complete) {
                    throw new TransientStoreException("ranged get of key '" + key + "' returned more than the "
                            + rest.length() + " bytes asked for", key, null, null);
                }
                return null;
            } finally {
                ResponseChecks.release(in, complete);
            }
        });
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        String fullKey = settings.fullKey(key);
        boolean withChecksum = server.asksStoredCrc32();
        return calls.call("get", key, () -> {
            S3Wire.Body in = wire.getObject(fullKey, null, withChecksum);
            boolean complete = false;
            try {
                Long length = in.contentLength();
                if (length == null || length < 0) {
                    throw new StoreRejectedException("get of key '" + key + "' answered without Content-Length", key, null, null);
                }
                // checked before the length sizes anything
                if (length > maxSize) {
                    throw new InvalidRangeException("key '" + key + "' holds " + length + " bytes, more than the limit of "
                            + maxSize, key, null, null);
                }
                byte[] out = new byte[length.intValue()];
                ResponseChecks.readFully(key, in.stream(), out);
                complete = in.stream().read() < 0;
                if (!complete) {
                    throw new TransientStoreException("get of key '" + key + "' sent more than its announced "
                            + length + " bytes", key, null, null);
                }
                CRC32 crc = new CRC32();
                crc.update(out);
                ResponseChecks.crc(key, crc.getValue(), expectedCrc32, Crc32Text.fromBase64(in.crc32Base64()));
                return out;
            } finally {
                ResponseChecks.release(in, complete);
            }
        });
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        KeyRules.check(key);
        String fullKey = settings.fullKey(key);
        boolean withChecksum = server.asksStoredCrc32();
        return calls.call("download", key, () -> {
            S3Wire.Body in = wire.getObject(fullKey, null, withChecksum);
            boolean complete = false;
            try (DownloadTarget out = DownloadTarget.beside(target)) {
                long length = out.copy(in.stream());
                complete = true;
                Long announced = in.contentLength();
                if (announced != null && announced != length) {
                    throw new TransientStoreException("download of key '" + key + "' received " + length + " of "
                            + announced + " bytes", key, null, null);
                }
                ResponseChecks.crc(key, out.crc32(), expectedCrc32, Crc32Text.fromBase64(in.crc32Base64()));
                out.commit();
                return new DownloadResult(length, unquote(in.etag()), out.crc32());
            } finally {
                ResponseChecks.release(in, complete);
            }
        });
    }

    // ---- list

    @Override
    public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
        String p = KeyRules.checkPrefix(prefix);
        if (maxKeys < 1 || maxKeys > 1000) {
            throw new IllegalArgumentException("list max-keys must be in [1, 1000]: " + maxKeys);
        }
        String base = settings.listPrefix();
        S3Wire.KeyPage r = calls.call(base.isEmpty() && p.isEmpty() ? "list" : "list of prefix '" + base + p + "'", null,
                () -> wire.listObjects(base + p, continuation, maxKeys));
        List<ObjectSummary> entries = new ArrayList<>();
        for (S3Wire.Listed o : r.objects()) {
            if (!o.fullKey().startsWith(base + p)) {
                throw new StoreRejectedException("list of prefix '" + p + "' answered key '" + o.fullKey()
                        + "', which lies outside it", null, null, null);
            }
            String key = o.fullKey().substring(base.length());
            if (!key.startsWith(KeyRules.RESERVED_PREFIX)) {
                entries.add(new ObjectSummary(key, o.size(), unquote(o.etag())));
            }
        }
        return new ListPage(entries, r.next());
    }

    // ---- delete

    @Override
    public void delete(String key) throws StoreException {
        KeyRules.check(key);
        deleteFull(key, settings.fullKey(key));
    }

    private void deleteFull(String key, String fullKey) throws StoreException {
        try {
            calls.call("delete", key, () -> {
                wire.deleteObject(fullKey);
                return null;
            });
        } catch (ObjectNotFoundException e) {
            // S3 answers 204 for a missing key; some servers answer 404 NoSuchKey: both mean "gone"
            if (!"NoSuchKey".equals(e.answer().errorCode()) && !e.answer().errorCode().isEmpty()) {
                throw e;
            }
        }
    }

    /**
     * Deletes in batches of 1000, each under the retry policy; a batch that fails as a whole counts
     * all its keys as failed and the next batch still goes. A key the server reports missing is gone,
     * not failed. The first failure is thrown at the end, carrying how many keys failed.
     */
    @Override
    public void deleteAll(Collection<String> keys) throws StoreException {
        List<String> all = new ArrayList<>(keys);
        for (String key : all) {
            KeyRules.check(key);
        }
        String base = settings.listPrefix();
        List<String> failed = new ArrayList<>();
        StoreException first = null;
        for (int from = 0; from < all.size(); from += DELETE_BATCH) {
            List<String> batch = all.subList(from, Math.min(all.size(), from + DELETE_BATCH));
            List<String> fullKeys = batch.stream().map(settings::fullKey).toList();
            List<S3Wire.DeleteFailure> errors;
            try {
                errors = calls.call("batch delete", null, () -> wire.deleteObjects(fullKeys));
            } catch (StoreException e) {
                failed.addAll(batch);
                first = first == null ? e : first;
                continue;
            }
            for (S3Wire.DeleteFailure error : errors) {
                if ("NoSuchKey".equals(error.code())) {
                    continue;
                }
                String key = error.fullKey() != null && error.fullKey().startsWith(base)
                        ? error.fullKey().substring(base.length()) : error.fullKey();
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
}
