package dev.felix.offload.store.remote;

import static dev.felix.offload.store.remote.ResponseChecks.unquote;

import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The multipart uploads of a {@code RemoteStore}: a body's parts sent over the wire, several at once
 * on the store's part threads ({@link PartedUpload} decides the parts and their digests), every
 * upload tracked as open from its creation until its completion or abort, so that a stop can abort
 * those it cut short; and the uploads a killed process left behind, found by listing and aborted.
 * Which checksums travel is the caller's to say: this class knows nothing of the server's traits.
 */
final class MultipartUploads {
    /** The store's own logger name (by its text, so as not to refer back to the store): its lines read as before. */
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger("dev.felix.offload.store.remote.RemoteStore");
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final RemoteStoreSettings settings;
    private final S3Wire wire;
    private final WireCalls calls;
    private final UploadPlan uploads;
    private final Map<String, String> uploadHeaders;
    private final ExecutorService partUploads;
    /** Multipart uploads begun and neither completed nor aborted: upload id to full key. */
    private final Map<String, String> openUploads = new ConcurrentHashMap<>();

    /**
     * @param uploads       told of every part that failed (its rate estimate)
     * @param uploadHeaders the headers every upload carries (encryption, storage class)
     */
    MultipartUploads(RemoteStoreSettings settings, S3Wire wire, WireCalls calls, UploadPlan uploads,
            Map<String, String> uploadHeaders) {
        this.settings = settings;
        this.wire = wire;
        this.calls = calls;
        this.uploads = uploads;
        this.uploadHeaders = uploadHeaders;
        this.partUploads = Executors.newFixedThreadPool(settings.partConcurrency(), r -> {
            Thread t = new Thread(r, "part-upload-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Uploads {@code body} in parts (see {@link PartedUpload}); the upload is tracked as open from its
     * creation until its completion or abort.
     *
     * @param sendCrc      parts carry their CRC32s
     * @param crc32Checked the server refuses a part whose bytes do not match its CRC32
     * @param sendMd5      parts carry their MD5s as {@code Content-MD5}
     * @param md5Etags     the server's ETags are MD5s
     */
    PutResult put(String key, UploadBody body, PutOptions options, boolean sendCrc, boolean crc32Checked,
            boolean sendMd5, boolean md5Etags) throws StoreException {
        String fullKey = settings.fullKey(key);
        return PartedUpload.run(key, body, options, sendCrc, crc32Checked, sendMd5, md5Etags,
                settings, partUploads, new PartedUpload.Calls() {
            @Override
            public String create(Map<String, String> userMetadata) throws StoreException {
                S3Wire.Upload upload = new S3Wire.Upload(uploadHeaders, userMetadata, OptionalLong.empty(),
                        Optional.empty(), false);
                String uploadId = calls.once("create multipart upload", key,
                        () -> wire.createMultipartUpload(fullKey, upload, sendCrc));
                openUploads.put(uploadId, fullKey);
                return uploadId;
            }

            @Override
            public PartedUpload.PartReceipt uploadPart(String uploadId, int partNumber, long from, long count,
                    Optional<String> crc, Optional<String> md5) throws StoreException {
                String etag = calls.once("upload of part " + partNumber, key,
                        WireCalls.BodyDigest.of(crc.isPresent() || md5.isPresent()), () -> {
                    try {
                        return wire.uploadPart(fullKey, uploadId, partNumber, body, from, count, crc, md5);
                    } catch (Exception e) {
                        uploads.failed(body.length());
                        throw e;
                    }
                });
                return new PartedUpload.PartReceipt(partNumber, etag, crc);
            }

            @Override
            public String complete(String uploadId, List<PartedUpload.PartReceipt> parts) throws StoreException {
                String etag = unquote(calls.once("complete multipart upload", key,
                        () -> wire.completeMultipartUpload(fullKey, uploadId, parts, options.createOnly())));
                openUploads.remove(uploadId);
                if (etag.isEmpty()) {
                    // The MinIO client reads no ETag from RGW's completion answer: ask the server for it
                    etag = unquote(calls.once("head after multipart upload", key, () -> wire.headObject(fullKey, false).etag()));
                }
                return etag;
            }

            @Override
            public void abort(String uploadId) throws StoreException {
                // sent even when requests were stopped: the stop must not leave the upload open
                calls.sent("abort multipart upload", key, () -> {
                    wire.abortMultipartUpload(fullKey, uploadId);
                    return null;
                });
                openUploads.remove(uploadId);
            }
        });
    }

    /**
     * Aborts the uploads still open (see {@link dev.felix.offload.store.RequestGate#abortOpenUploads}),
     * sequentially, each abort bounded by the connect and read timeouts; a failure leaves the upload to
     * the orphan sweep.
     *
     * @return the keys of the uploads aborted
     */
    List<String> abortOpen() {
        List<String> aborted = new ArrayList<>();
        for (Map.Entry<String, String> open : List.copyOf(openUploads.entrySet())) {
            String uploadId = open.getKey();
            String fullKey = open.getValue();
            try {
                calls.sent("abort multipart upload", fullKey, () -> {
                    wire.abortMultipartUpload(fullKey, uploadId);
                    return null;
                });
                String base = settings.listPrefix();
                aborted.add(fullKey.startsWith(base) ? fullKey.substring(base.length()) : fullKey);
            } catch (ObjectNotFoundException gone) {
                // NoSuchUpload: its own pass aborted it meanwhile
            } catch (StoreException | RuntimeException e) {
                LOG.warn("could not abort the multipart upload of {}"
                        + " ({}); the orphan sweep aborts it later: {}", fullKey, uploadId, e.getMessage());
            }
            openUploads.remove(uploadId);
        }
        return aborted;
    }

    /**
     * Lists the multipart uploads under the prefix page by page (key and upload-id markers) and
     * aborts each begun before {@code startedBefore}. An upload outside the prefix is skipped even if
     * a server lists it (it may be another node's); one gone by the time it is aborted (completed or
     * aborted by its own process) is not an error and is not counted.
     */
    List<String> abortIncomplete(String prefix, Instant startedBefore) throws StoreException {
        String fullPrefix = settings.fullKey(prefix);
        String base = settings.fullKey("");
        List<String> aborted = new ArrayList<>();
        String keyMarker = null;
        String uploadMarker = null;
        for (int page = 0; page < 10_000; page++) {
            String km = keyMarker;
            String um = uploadMarker;
            S3Wire.UploadPage res = calls.call("list multipart uploads", prefix,
                    () -> wire.listMultipartUploads(fullPrefix, km, um));
            for (S3Wire.PendingUpload u : res.uploads()) {
                if (u.initiated() == null || !u.initiated().isBefore(startedBefore) || !u.fullKey().startsWith(fullPrefix)) {
                    continue;
                }
                String key = u.fullKey().substring(base.length());
                try {
                    calls.call("abort multipart upload", key, () -> {
                        wire.abortMultipartUpload(u.fullKey(), u.uploadId());
                        return null;
                    });
                    aborted.add(key);
                } catch (ObjectNotFoundException gone) {
                    // NoSuchUpload: it was completed or aborted meanwhile, so there is nothing left to abort
                }
            }
            if (!res.truncated() || res.nextKeyMarker() == null || res.nextKeyMarker().isEmpty()) {
                // done, or truncated without a marker to go on from: nothing more can be asked for
                return aborted;
            }
            keyMarker = res.nextKeyMarker();
            uploadMarker = res.nextUploadIdMarker();
        }
        return aborted;
    }

    /** Stops the part threads; parts still travelling fail. */
    void close() {
        partUploads.shutdownNow();
    }
}
