package dev.felix.offload.store;

/**
 * What a successful put left in the store.
 *
 * @param key the key written
 * @param size bytes written
 * @param etag the new object's entity tag, without quotes
 * @param parts 1 for a single-request put, the part count of a multipart upload
 */
public record PutResult(String key, long size, String etag, int parts) {}
