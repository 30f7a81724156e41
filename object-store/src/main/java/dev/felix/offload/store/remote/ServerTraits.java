package dev.felix.offload.store.remote;

import dev.felix.offload.store.StoreCapability;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a probe found a server to do with checksums and conditional writes.
 *
 * @param crc32Accepted an upload carrying a correct {@code x-amz-checksum-crc32} header succeeds
 * @param crc32Verified an upload carrying a wrong one is refused
 * @param crc32Stored head (with checksum mode enabled) returns the CRC32 sent
 * @param createOnlyHonoured a put with {@code If-None-Match: *} over an existing key answers 412
 * @param contentMd5Verified an upload with a correct {@code Content-MD5} succeeds and one with a
 *     wrong one is refused ({@code 400 BadDigest})
 * @param md5Etags the ETag answered to a single-request upload is the hex MD5 of its bytes
 */
public record ServerTraits(boolean crc32Accepted, boolean crc32Verified, boolean crc32Stored, boolean createOnlyHonoured,
        boolean contentMd5Verified, boolean md5Etags) {
    public Set<StoreCapability> capabilities() {
        EnumSet<StoreCapability> caps = EnumSet.of(StoreCapability.USER_METADATA);
        if (crc32Verified) {
            caps.add(StoreCapability.CRC32_VERIFIED_ON_PUT);
        }
        if (crc32Stored) {
            caps.add(StoreCapability.CRC32_STORED);
        }
        if (crc32Stored && crc32Verified) {
            // kept unchecked, it would only be the header sent back: no word on the bytes
            caps.add(StoreCapability.CRC32_KEPT_BY_SERVER);
        }
        if (createOnlyHonoured) {
            caps.add(StoreCapability.CREATE_ONLY_PUT);
        }
        if (contentMd5Verified) {
            caps.add(StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT);
        }
        if (md5Etags) {
            caps.add(StoreCapability.MD5_ETAG);
        }
        return caps;
    }
}
