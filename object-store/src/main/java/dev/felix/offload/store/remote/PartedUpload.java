package dev.felix.offload.store.remote;

import dev.felix.offload.store.BodyDigests;
import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * A multipart upload, the same for every remote store: the body is cut into parts of the
 * configured size, up to {@code part-concurrency} parts travel at once (each retried on its own
 * under the retry policy), and the upload is completed in part order. If any part, or the
 * completion, fails for good, the parts still in flight are cancelled and waited for, and the
 * upload is aborted, so no orphaned parts are left in the bucket.
 *
 * <p>Where CRC32s are sent, every part's CRC32 is computed in one pass over the body before the
 * upload is created: the parts' combined CRC32 is checked against the caller's whole-body value
 * there, the same values travel in the part headers, and they are recorded on the object
 * ({@link PartCrc32s}) so that a later head can prove the whole object's CRC32 from the server's
 * composite checksum. What is recorded is therefore exactly what the caller's CRC32 was checked
 * against and what the server was asked to verify part by part; where the server was seen to check
 * them, its accepting every part proves the object. Otherwise, where the server checks
 * {@code Content-MD5}, the part MD5s come from the same read, each part carries its MD5, and the
 * completion's ETag (the MD5 of the part MD5s with the part count, where ETags are MD5s) proves it.
 */
public final class PartedUpload {
    /** What one part upload returned. */
    public record PartReceipt(int partNumber, String etag, Optional<String> crc32Base64) {}

    /** The server calls of one store; each runs once per call (the retries are here). */
    public interface Calls {
        /** Creates the upload with this user metadata (the caller's, plus the part record where there is one). */
        String create(Map<String, String> userMetadata) throws StoreException;

        PartReceipt uploadPart(String uploadId, int partNumber, long from, long count, Optional<String> crc32Base64,
                Optional<String> contentMd5) throws StoreException;

        /** Returns the new object's ETag. */
        String complete(String uploadId, List<PartReceipt> parts) throws StoreException;

        void abort(String uploadId) throws StoreException;
    }

    private PartedUpload() {}

    /**
     * @param sendCrc  parts carry their CRC32s
     * @param crc32Checked the server refuses a part whose bytes do not match its CRC32, so the
     *     completion proves the object ({@link PutResult#crc32Proven()}); only with {@code sendCrc}
     * @param sendMd5  parts carry their MD5s as {@code Content-MD5}
     * @param md5Etags the server's ETags are MD5s, so the completion's can prove the object
     */
    public static PutResult run(String key, UploadBody body, PutOptions options, boolean sendCrc, boolean crc32Checked,
            boolean sendMd5,
            boolean md5Etags, RemoteStoreSettings settings, ExecutorService pool, Calls calls) throws StoreException {
        long partSize = settings.partSize();
        int partCount = (int) ((body.length() + partSize - 1) / partSize);
        long[] partCrcs = null;
        BodyDigests digests = null;
        Map<String, String> metadata = new LinkedHashMap<>(options.userMetadata());
        if (sendCrc || sendMd5 || options.crc32().isPresent()) {
            digests = digests(key, body, partSize, sendMd5);
            if (digests.partCount() != partCount) {
                throw new IllegalStateException(digests.partCount() + " part digests for " + partCount + " parts");
            }
            partCrcs = digests.partCrc32s();
            if (options.crc32().isPresent()) {
                // Parts carry their own CRC32s, so the caller's whole-body value is checked here, before any upload.
                long actual = PartCrc32s.wholeCrc32(partCrcs, partSize, body.length());
                if (actual != options.crc32().getAsLong()) {
                    throw new IntegrityRejectedException(String.format("put of key '%s' refused: its bytes have CRC32 %08x, "
                            + "the caller gave %08x", key, actual, options.crc32().getAsLong()), key, null, null);
                }
            }
            if (sendCrc) {
                PartCrc32s.record(partSize, partCrcs).ifPresent(r -> metadata.put(PartCrc32s.METADATA_NAME, r));
            }
        }
        long[] sentCrcs = sendCrc ? partCrcs : null;
        var retry = settings.retryPolicy();
        String uploadId = retry.run(() -> calls.create(metadata));
        List<Future<PartReceipt>> futures = new ArrayList<>(partCount);
        try {
            for (int i = 0; i < partCount; i++) {
                int partNumber = i + 1;
                long from = i * partSize;
                long count = Math.min(partSize, body.length() - from);
                Optional<String> crc = sentCrcs != null ? Optional.of(Crc32Text.toBase64(sentCrcs[i])) : Optional.empty();
                Optional<String> md5 = sendMd5 ? Optional.of(digests.contentMd5(i)) : Optional.empty();
                futures.add(pool.submit(() -> retry.run(() -> calls.uploadPart(uploadId, partNumber, from, count, crc,
                        md5))));
            }
            List<PartReceipt> parts = new ArrayList<>(partCount);
            for (Future<PartReceipt> f : futures) {
                parts.add(await(key, f));
            }
            String etag = retry.run(() -> calls.complete(uploadId, parts));
            boolean proven = sendMd5 && md5Etags && ContentMd5Proof.holds(key, etag, digests, true);
            // every part's CRC32 came from the read whose combined CRC32 was checked against the caller's
            return new PutResult(key, body.length(), etag, partCount, proven, sendCrc && crc32Checked);
        } catch (StoreException | RuntimeException | Error e) {
            for (Future<PartReceipt> f : futures) {
                f.cancel(true);
            }
            for (Future<PartReceipt> f : futures) {
                try {
                    f.get();
                } catch (Exception ignored) {
                    // waiting only so that no part lands after the abort
                }
            }
            try {
                retry.run(() -> {
                    calls.abort(uploadId);
                    return null;
                });
            } catch (ObjectNotFoundException gone) {
                // NoSuchUpload: nothing left to abort
            } catch (StoreException abortFailure) {
                e.addSuppressed(abortFailure);
            }
            throw e;
        }
    }

    private static PartReceipt await(String key, Future<PartReceipt> f) throws StoreException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientStoreException("multipart upload of key '" + key + "' interrupted", key, null, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof StoreException se) {
                throw se;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new TransientStoreException("part upload of key '" + key + "' failed: " + cause, key, null, cause);
        }
    }

    public static long crc32(String key, UploadBody body, long from, long count) throws StoreException {
        try {
            return body.crc32(from, count);
        } catch (IOException e) {
            throw new TransientStoreException("reading the body of key '" + key + "' failed: " + e, key, null, e);
        }
    }

    /**
     * The body's digests in parts of {@code partSize}, MD5s only if {@code md5s}: the caller's where
     * they fit, else one sequential read.
     */
    static BodyDigests digests(String key, UploadBody body, long partSize, boolean md5s) throws StoreException {
        try {
            return body.digests(partSize, md5s);
        } catch (IOException e) {
            throw new TransientStoreException("reading the body of key '" + key + "' failed: " + e, key, null, e);
        }
    }
}
