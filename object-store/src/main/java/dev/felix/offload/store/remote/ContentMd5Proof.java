package dev.felix.offload.store.remote;

import dev.felix.offload.store.BodyDigests;

/**
 * Whether an upload's answer proves what the server stored: the server checked the Content-MD5s
 * it was sent (the caller knows it does) and answered the ETag those MD5s predict. An ETag that
 * differs proves nothing, and is no error either: the copy is then proven another way.
 */
final class ContentMd5Proof {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ContentMd5Proof.class);

    private ContentMd5Proof() {}

    /** @param etag the ETag answered, unquoted */
    static boolean holds(String key, String etag, BodyDigests digests, boolean multipart) {
        String expected = digests.md5Etag(multipart);
        if (expected.equalsIgnoreCase(etag)) {
            return true;
        }
        LOG.info("put of key '{}': the server took its Content-MD5, but answered ETag '{}' where the MD5s predict '{}';"
                + " the copy is not proven by it", key, etag, expected);
        return false;
    }
}
