package dev.felix.offload.copy;


import java.util.Locale;

/** How an upload is proven before it is recorded. */
public enum VerifyMode {
    /**
     * The server's stored CRC32 where the store returns one, else the upload's own answer where the
     * server checked its Content-MD5 and answered the ETag it predicts, else a read-back.
     */
    AUTO,
    /** Only the server's stored CRC32; refused for stores that do not keep one. */
    SERVER_CHECKSUM,
    /** Read the whole object back and compare its CRC32 and size. */
    READ_BACK,
    /**
     * Trust the put's answer to record the entry, but unlink nothing on its strength: the pass leaves
     * such segments local, and retention proves the copy ({@link CopyProver}) before it lets one go.
     */
    NONE;

    /** Parses {@code auto | server-checksum | read-back | none}. */
    public static VerifyMode parse(String text) {
        for (VerifyMode m : values()) {
            if (m.label().equals(text.toLowerCase(Locale.ROOT))) {
                return m;
            }
        }
        throw new IllegalArgumentException("verify mode must be auto, server-checksum, read-back or none, got '"
                + text + "'");
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
