package dev.felix.offload.store;

import java.nio.file.Path;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.OptionalLong;

/**
 * Reads objects.
 *
 * <p>Contract:
 * <ul>
 *   <li>A missing key gives {@link ObjectNotFoundException}, from every method.</li>
 *   <li>{@link #readRange} returns exactly {@code range.length()} bytes; a range that does not lie
 *       wholly within the object gives {@link InvalidRangeException} (so an empty object has no
 *       valid range). Only the caller's range sizes the array: no length read from the network
 *       sizes an allocation before it is checked.</li>
 *   <li>{@link #readAll} refuses, before reading, an object larger than the given limit, with
 *       {@link InvalidRangeException}.</li>
 *   <li>With an expected CRC32, bytes that do not match it are never handed over: a mismatch is
 *       retried like damage in transit, and {@link ChecksumMismatchException} reaches the caller when
 *       it persists. {@link #download} leaves the target untouched unless it succeeds (it writes a
 *       temporary file beside the target and moves it into place; it does not fsync).</li>
 *   <li>A connection that breaks mid-body, or a body shorter than announced, is a transient failure
 *       and is retried; a truncated body is never returned as the object.</li>
 * </ul>
 */
public interface ObjectFetcher {
    /** Size, ETag, user metadata and the stored CRC32 (when the store keeps one). */
    ObjectHead head(String key) throws StoreException;

    /** Exactly the bytes of {@code range}. */
    byte[] readRange(String key, ByteRange range) throws StoreException;

    /**
     * The bytes of {@code range} into {@code targets}, one after another, each filled whole: what
     * {@link #readRange} answers, for a caller that keeps the range in pieces (a cache of chunks), so
     * no array of the whole range is made and copied. The targets' lengths must add up to the range's
     * length. {@code filled} hears the index of each target as soon as it holds its bytes, in order,
     * so a reader can use the first pieces while the rest are still arriving; a target it has heard
     * of is never written again (a retry asks only for the rest). On failure the targets not heard
     * of hold no defined bytes. This default reads the range and copies it; a store that streams
     * bodies fills the targets from the response directly.
     */
    default void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
            throws StoreException {
        checkTargets(range, targets);
        byte[] all = readRange(key, range);
        int at = 0;
        for (int i = 0; i < targets.size(); i++) {
            byte[] t = targets.get(i);
            System.arraycopy(all, at, t, 0, t.length);
            at += t.length;
            filled.accept(i);
        }
    }

    /** Refuses targets whose lengths do not add up to the range's. */
    static void checkTargets(ByteRange range, List<byte[]> targets) {
        long total = 0;
        for (byte[] t : targets) {
            total += t.length;
        }
        if (total != range.length()) {
            throw new IllegalArgumentException("targets of " + total + " bytes for a range of " + range.length());
        }
    }

    /** The whole object into memory, refused when larger than {@code maxSize} bytes. */
    byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException;

    /** The whole object into {@code target}, replacing it atomically. */
    DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException;
}
