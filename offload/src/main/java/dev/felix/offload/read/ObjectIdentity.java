package dev.felix.offload.read;

import dev.felix.offload.manifest.ManifestEntry;

/**
 * What identifies the bytes of one stored object for a cache: its key, its size and the CRC32 its
 * manifest entry records. The key alone is not enough: after the broker resets a shard, a new
 * history is offloaded under the same keys (the spec fixes their shape), often with the same sizes
 * (fixed-size records roll at the same byte counts), and bytes cached for the old history would
 * still pass every record check.
 */
public record ObjectIdentity(String key, long size, long crc32) {
    public ObjectIdentity {
        if (size < 0) {
            throw new IllegalArgumentException("negative object size " + size + " for " + key);
        }
    }

    /** The object a manifest entry names, as the entry describes it. */
    public static ObjectIdentity of(ManifestEntry entry) {
        return new ObjectIdentity(entry.objectKey(), entry.sizeBytes(), Integer.toUnsignedLong(entry.objectCrc32()));
    }
}
