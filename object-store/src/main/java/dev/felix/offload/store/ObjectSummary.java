package dev.felix.offload.store;

/**
 * One entry of a listing.
 *
 * @param key the key relative to the store (without the store's prefix)
 * @param size the object's length in bytes
 * @param etag the entity tag without quotes
 */
public record ObjectSummary(String key, long size, String etag) {}
