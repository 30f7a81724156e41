package dev.felix.offload.store;

/** The store (or the client before sending) refused an upload whose bytes do not match the CRC32 or Content-MD5 given with it, e.g. HTTP 400 `BadDigest`/`InvalidDigest` or a checksum-mismatch answer. */
public class IntegrityRejectedException extends StoreException {
    private static final long serialVersionUID = 1L;

    public IntegrityRejectedException(String message, String key, StoreAnswer answer, Throwable cause) {
        super(message, key, answer, cause);
    }

}
