package dev.felix.offload.retention;

/** An unnamed key under a shard's prefix, as listed or read from the store. */
record Unnamed(String key, long size, String etag) {
}
