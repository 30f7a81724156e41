package dev.felix.offload.store;

/**
 * What a download wrote.
 *
 * @param size bytes written to the target file
 * @param etag the object's entity tag as the store sent it with the bytes, without quotes
 * @param crc32 the CRC32 of the bytes written, computed while they were received
 */
public record DownloadResult(long size, String etag, long crc32) {}
