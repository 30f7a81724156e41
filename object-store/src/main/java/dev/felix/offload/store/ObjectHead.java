package dev.felix.offload.store;

import java.util.Map;
import java.util.OptionalLong;

/**
 * What a store says about an object without sending its bytes.
 *
 * @param key the key, relative to the store (never including the store's prefix)
 * @param size the object's length in bytes
 * @param etag the store's entity tag without quotes; changes when the object is overwritten
 * @param userMetadata user metadata given at put time, names lower-cased
 * @param crc32 the CRC32 of the whole object as the store keeps it, empty when the store keeps
 *     none (or only a per-part composite one)
 */
public record ObjectHead(String key, long size, String etag, Map<String, String> userMetadata, OptionalLong crc32) {
    public ObjectHead {
        userMetadata = Map.copyOf(userMetadata);
    }
}
