package dev.felix.offload.store;

/**
 * What a successful put left in the store.
 *
 * @param key the key written
 * @param size bytes written
 * @param etag the new object's entity tag, without quotes
 * @param parts 1 for a single-request put, the part count of a multipart upload
 * @param contentMd5Proven the server proved, in its answer, that it holds the bytes the store
 *     digested: every request carried the {@code Content-MD5} of its bytes to a server seen by the
 *     probe to refuse a wrong one, and the ETag it answered is the one those MD5s predict (see
 *     {@link StoreCapability#CONTENT_MD5_VERIFIED_ON_PUT}). The MD5s were taken in the same read
 *     as the CRC32 checked against the caller's ({@link PutOptions#crc32()}), so with one given the
 *     object holds the bytes of that CRC32. False wherever any of that does not hold, and on stores
 *     that prove nothing this way
 * @param crc32Proven the server checked, and accepted, the CRC32 of every request's bytes: each
 *     request carried an {@code x-amz-checksum-crc32} to a server seen by the probe to refuse a
 *     wrong one ({@link StoreCapability#CRC32_VERIFIED_ON_PUT}). A single request carried the
 *     caller's CRC32 ({@link PutOptions#crc32()}), or without one the body's as the store read it;
 *     each part of a multipart upload carried its CRC32, taken in the same read as the whole body's
 *     CRC32 that was checked against the caller's. So the object holds bytes of the caller's CRC32,
 *     with nothing to ask the server again. False wherever any of that does not hold
 */
public record PutResult(String key, long size, String etag, int parts, boolean contentMd5Proven,
        boolean crc32Proven) {
    /** A put whose answer proves nothing of the stored bytes. */
    public PutResult(String key, long size, String etag, int parts) {
        this(key, size, etag, parts, false, false);
    }
}
