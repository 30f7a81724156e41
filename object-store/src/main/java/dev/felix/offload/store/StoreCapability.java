package dev.felix.offload.store;

/** Things a store may or may not do, as reported by {@link ObjectStore#capabilities()}. */
public enum StoreCapability {
    /** A create-only put fails with {@link PreconditionFailedException} when the key exists. */
    CREATE_ONLY_PUT,
    /**
     * A put whose given CRC32 does not match its bytes fails with {@link IntegrityRejectedException}.
     * Where a server does this check (not the filesystem store), a put's acceptance proves its copy
     * ({@link PutResult#crc32Proven()}) and the remote stores send no {@code Content-MD5}.
     */
    CRC32_VERIFIED_ON_PUT,
    /**
     * {@link ObjectFetcher#head(String)} reports the CRC32 of a single-part object, as the server keeps
     * it. Where the server also keeps part CRC32s and checks them (S3 and S3Mock do), head reports
     * the whole CRC32 of a multipart object the store uploaded as well, proven from the server's
     * composite checksum; a head without a CRC32 means the object has to be read to be verified.
     */
    CRC32_STORED,
    /**
     * The CRC32 that head reports was computed and is kept by a server apart from this process, one
     * that looks after the bytes it holds; its answer speaks for what a read would return. A
     * filesystem store's CRC32 is an attribute this process wrote beside the file at upload, and
     * says nothing of rot since, so scrub reads such objects in full.
     */
    CRC32_KEPT_BY_SERVER,
    /**
     * The server checks the {@code Content-MD5} an upload's requests carry and refuses a body that
     * does not match it ({@link IntegrityRejectedException}); the remote stores send one with every
     * upload request where the probe saw a wrong one refused, unless the server checks the CRC32s
     * they carry as well ({@link #CRC32_VERIFIED_ON_PUT}), which proves as much for less.
     */
    CONTENT_MD5_VERIFIED_ON_PUT,
    /**
     * The server's ETag is the MD5 of what it stored: for an object put in one request, the hex MD5
     * of its bytes; for a multipart one, the MD5 of its part MD5s with the part count. Not declared
     * under encryption that makes ETags something else (SSE-KMS). With
     * {@link #CONTENT_MD5_VERIFIED_ON_PUT}, a put's answer can prove the copy
     * ({@link PutResult#contentMd5Proven()}), and a later head can prove a single-request object
     * against the MD5 of the bytes it should hold.
     */
    MD5_ETAG,
    /** User metadata given at put time comes back from head. */
    USER_METADATA
}
