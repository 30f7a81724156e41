package dev.felix.offload.store.remote;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The S3 protocol's calls as one HTTP client makes them, and nothing more: {@link RemoteStore}
 * holds every rule (key checks, retries, create-only puts, multipart, checksums, answer checks,
 * paging, batch deletes, the probe) once, and an implementation only turns each call into its
 * client's request and its answer back into these records.
 *
 * <p>Every call is a single attempt on a full key (the settings' prefix already applied) and may
 * throw whatever its client throws; {@link #translate} turns that into the store's exception tree.
 * The AWS SDK and the MinIO client each implement it in one class.
 */
public interface S3Wire extends AutoCloseable {
    /** What the store says it is in {@code describe()}, e.g. {@code "S3 store"}. */
    String name();

    /**
     * What goes with an upload's first request. {@code headers} are raw request headers every
     * upload carries (encryption, storage class); the user metadata is sent as {@code x-amz-meta-*};
     * a present CRC32 travels as {@code x-amz-checksum-crc32}, a present MD5 (base64) as
     * {@code Content-MD5} (a single request's only: parts carry their own); create-only sends
     * {@code If-None-Match: *}.
     */
    record Upload(Map<String, String> headers, Map<String, String> userMetadata, OptionalLong crc32,
            Optional<String> contentMd5, boolean createOnly) {
        /** True when the request carries a digest of its body (a CRC32 or an MD5) for the server to check. */
        public boolean carriesDigest() {
            return crc32.isPresent() || contentMd5.isPresent();
        }
    }

    /** What a HEAD answered; user metadata keys in lower case, without their prefix. */
    record Head(long length, String etag, Map<String, String> userMetadata, String crc32Base64) {}

    /**
     * An answered GET: the body stream and the headers the store checks ({@code contentLength} null
     * where the answer had none). {@code dropConnection} discards the connection instead of draining
     * a body that was not read to its end.
     */
    record Body(InputStream stream, Long contentLength, String contentRange, String etag, String crc32Base64,
            Runnable dropConnection) implements AutoCloseable {
        @Override
        public void close() {
            try {
                stream.close();
            } catch (IOException | RuntimeException ignored) {
                // the connection is discarded either way
            }
        }
    }

    record Listed(String fullKey, long size, String etag) {}

    /** One page of a listing; {@code next} is opaque to the caller and handed back for the next page. */
    record KeyPage(List<Listed> objects, Optional<String> next) {}

    record DeleteFailure(String fullKey, String code, String message) {}

    record PendingUpload(String fullKey, String uploadId, Instant initiated) {}

    record UploadPage(List<PendingUpload> uploads, boolean truncated, String nextKeyMarker,
            String nextUploadIdMarker) {}

    /** Returns the ETag as the server sent it. */
    String putObject(String fullKey, UploadBody body, Upload upload) throws Exception;

    /**
     * Copies {@code fullSource} to {@code fullTarget} inside the bucket (CopyObject: the source's
     * metadata kept, {@code headers} such as server-side encryption applied to the target); answers
     * the target's ETag as the server sent it.
     */
    String copyObject(String fullSource, String fullTarget, Map<String, String> headers) throws Exception;

    /** {@code withChecksum} asks the server for the CRC32 it keeps ({@code x-amz-checksum-mode}). */
    Head headObject(String fullKey, boolean withChecksum) throws Exception;

    /** The whole object where {@code range} is null. */
    Body getObject(String fullKey, ByteRange range, boolean withChecksum) throws Exception;

    /** At most {@code maxKeys} objects under the prefix, after {@code continuation} if not null. */
    KeyPage listObjects(String fullPrefix, String continuation, int maxKeys) throws Exception;

    void deleteObject(String fullKey) throws Exception;

    /** One batch of at most 1000 keys; returns the keys the server could not delete. */
    List<DeleteFailure> deleteObjects(List<String> fullKeys) throws Exception;

    /** Starts a multipart upload; {@code partCrc32s} announces that every part carries its CRC32. */
    String createMultipartUpload(String fullKey, Upload upload, boolean partCrc32s) throws Exception;

    /** Returns the part's ETag; a present {@code contentMd5} (base64) travels as {@code Content-MD5}. */
    String uploadPart(String fullKey, String uploadId, int partNumber, UploadBody body, long from, long count,
            Optional<String> crc32Base64, Optional<String> contentMd5) throws Exception;

    /** Returns the new object's ETag as the server sent it. */
    String completeMultipartUpload(String fullKey, String uploadId, List<PartedUpload.PartReceipt> parts,
            boolean createOnly) throws Exception;

    void abortMultipartUpload(String fullKey, String uploadId) throws Exception;

    /** One page of the multipart uploads under the prefix; markers null for the first page. */
    UploadPage listMultipartUploads(String fullPrefix, String keyMarker, String uploadIdMarker) throws Exception;

    /** A header a server may check an upload request's body against. */
    enum BodyChecksum {
        /** {@code Content-MD5} */
        CONTENT_MD5,
        /** {@code x-amz-checksum-crc32} */
        CRC32
    }

    /**
     * Told, after the probe, that the server was seen to refuse a body that does not match this
     * checksum header: from then on an upload request that carries that header may leave its body
     * out of the signature, since the signed header already binds the body. Requests carrying only a
     * header the server was not seen to check stay signed in full, and so do the probe's own puts,
     * which run before anyone is told. Nothing changes for a client that cannot sign so.
     */
    default void bodyChecksumCheckedByServer(BodyChecksum checksum) {
    }

    /**
     * Told whom to tell the {@code Server} header of every answer this client receives, errors
     * included (an empty string where an answer has none), so the store can see which server answers
     * ({@link ServerProbe#answered}). A client that cannot tell says nothing.
     */
    default void onServerIdentity(java.util.function.Consumer<String> listener) {
    }

    /** Whether this client reads a paced single-request body into memory before sending it (MinIO's does). */
    default boolean buffersPacedBodies() {
        return false;
    }

    /** The store's exception for a failure of this client's, naming the operation and the (short) key. */
    StoreException translate(String operation, String key, Throwable failure);

    @Override
    void close();
}
