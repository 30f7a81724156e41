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
 * @param crc32 the CRC32 of the whole object as the store's server vouches for it: kept by the
 *     server, or (for a multipart object) proven from the server's composite of part CRC32s;
 *     empty when the server keeps none or the proof does not hold, never a value only the
 *     uploader claimed
 */
public record ObjectHead(String key, long size, String etag, Map<String, String> userMetadata, OptionalLong crc32) {
    public ObjectHead {
        userMetadata = Map.copyOf(userMetadata);
    }
}
