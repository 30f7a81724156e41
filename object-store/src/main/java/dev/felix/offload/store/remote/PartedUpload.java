package dev.felix.offload.store.remote;

import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.util.ArrayList;
import java.io.InputStream;
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
 * against and what the server was asked to verify part by part.
 */
public final class PartedUpload {
    /** What one part upload returned. */
    public record PartReceipt(int partNumber, String etag, Optional<String> crc32Base64) {}

    /** The server calls of one store; each runs once per call (the retries are here). */
    public interface Calls {
        /** Creates the upload with this user metadata (the caller's, plus the part record where there is one). */
        String create(Map<String, String> userMetadata) throws StoreException;

        PartReceipt uploadPart(String uploadId, int partNumber, long from, long count, Optional<String> crc32Base64)
                throws StoreException;

        /** Returns the new object's ETag. */
        String complete(String uploadId, List<PartReceipt> parts) throws StoreException;

        void abort(String uploadId) throws StoreException;
    }

    private PartedUpload() {}

    public static PutResult run(String key, UploadBody body, PutOptions options, boolean sendCrc,
            RemoteStoreSettings settings, ExecutorService pool, Calls calls) throws StoreException {
        long partSize = settings.partSize();
        int partCount = (int) ((body.length() + partSize - 1) / partSize);
        long[] partCrcs = null;
        Map<String, String> metadata = new LinkedHashMap<>(options.userMetadata());
        if (sendCrc || options.crc32().isPresent()) {
            partCrcs = partCrc32s(key, body, partSize, partCount);
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
                futures.add(pool.submit(() -> retry.run(() -> calls.uploadPart(uploadId, partNumber, from, count, crc))));
            }
            List<PartReceipt> parts = new ArrayList<>(partCount);
            for (Future<PartReceipt> f : futures) {
                parts.add(await(key, f));
            }
            String etag = retry.run(() -> calls.complete(uploadId, parts));
            return new PutResult(key, body.length(), etag, partCount);
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

    /** The CRC32 of each part, in one sequential read of the body. */
    static long[] partCrc32s(String key, UploadBody body, long partSize, int partCount) throws StoreException {
        try {
            long[] crcs = body.crc32s(partSize);
            if (crcs.length != partCount) {
                throw new IllegalStateException(crcs.length + " part CRC32s for " + partCount + " parts");
            }
            return crcs;
        } catch (IOException e) {
            throw new TransientStoreException("reading the body of key '" + key + "' failed: " + e, key, null, e);
        }
    }
}
