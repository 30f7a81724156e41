package dev.felix.offload.store;

/**
 * Which digests a store takes of an upload body ({@link ObjectUploader#digestPlan(long)}).
 *
 * @param partSize the slices the CRC32s (and MD5s) are taken in; positive
 * @param md5s     whether part MD5s are wanted too: only where the upload requests carry
 *                 {@code Content-MD5}
 */
public record DigestPlan(long partSize, boolean md5s) {
    public DigestPlan {
        if (partSize <= 0) {
            throw new IllegalArgumentException("part size must be positive: " + partSize);
        }
    }
}
