package dev.felix.offload.copy;

/**
 * How a copy in the store was proven to hold its segment's bytes. Its {@link #label()} is what the
 * reports, logs, JSON and {@code offload.proofs} say.
 */
public enum CopyProofKind {
    /**
     * A CRC32 the server computed over the bytes it received and compared with the local one, on a
     * server seen to refuse a wrong one: at the put (it accepted the CRC32 the upload carried, or
     * each part's, taken in the same read as the local CRC32), or later, by a head answering the
     * CRC32 it keeps.
     */
    SERVER_CHECKSUM("server-checksum"),
    /**
     * The server refused nothing of the {@code Content-MD5} the upload carried (it was seen to refuse a
     * wrong one) and answered the ETag those MD5s predict; the MD5s were taken in the same read as
     * the CRC32 the entry records. Or, proven later: the ETag of an object put in one request equals
     * the MD5 of the local bytes whose CRC32 the entry records.
     */
    CONTENT_MD5("content-md5"),
    /** The filesystem store's CRC32, computed over the bytes as it wrote and fsynced the file. */
    STORE_CHECKSUM("store-checksum"),
    /** Every byte read back. */
    READ_BACK("read-back"),
    /** Not proven: recorded under {@code --verify none}, so nothing is unlinked on its strength. */
    NONE("none");

    private final String label;

    CopyProofKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** Whether a local segment may go on the strength of this proof. */
    public boolean proven() {
        return this != NONE;
    }

    @Override
    public String toString() {
        return label;
    }
}
