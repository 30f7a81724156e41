package dev.felix.offload.store.remote;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ChecksumMismatchException;
import dev.felix.offload.store.InvalidRangeException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.StoreRejectedException;
import dev.felix.offload.store.TransientStoreException;
import java.io.IOException;
import java.io.InputStream;
import java.util.OptionalLong;

/** Checks and readings of a server's answers, shared by the remote stores. */
public final class ResponseChecks {
    private ResponseChecks() {}

    /**
     * Checks the answer's {@code Content-Range} against the request before anything is allocated
     * from it: a range clamped at the object's end means the request reached past it.
     */
    public static void rangeAnswer(String key, ByteRange range, String contentRange, Long contentLength) throws StoreException {
        if (contentRange == null) {
            throw new StoreRejectedException("ranged get of key '" + key + "' answered without Content-Range: the server "
                    + "ignored the Range header", key, null, null);
        }
        // "bytes first-last/total"
        String spec = contentRange.trim();
        int space = spec.indexOf(' ');
        int dash = spec.indexOf('-', space + 1);
        int slash = spec.indexOf('/', dash + 1);
        long first;
        long last;
        String total;
        try {
            first = Long.parseLong(spec.substring(space + 1, dash));
            last = Long.parseLong(spec.substring(dash + 1, slash));
            total = spec.substring(slash + 1);
        } catch (RuntimeException e) {
            throw new StoreRejectedException("ranged get of key '" + key + "' answered a malformed Content-Range '"
                    + contentRange + "'", key, null, e);
        }
        if (first != range.offset()) {
            throw new StoreRejectedException("ranged get of key '" + key + "' answered " + contentRange + " for " + range,
                    key, null, null);
        }
        if (last != range.lastInclusive()) {
            throw new InvalidRangeException(range + " of key '" + key + "' is outside the object (" + total + " bytes)",
                    key, null, null);
        }
        if (contentLength != null && contentLength != range.length()) {
            throw new StoreRejectedException("ranged get of key '" + key + "' announced " + contentLength + " bytes for "
                    + range, key, null, null);
        }
    }

    /** Fails when the bytes' CRC32 differs from the one the caller expects or the one the store declared. */
    public static void crc(String key, long actual, OptionalLong expected, OptionalLong declared) throws ChecksumMismatchException {
        if (expected.isPresent() && expected.getAsLong() != actual) {
            throw new ChecksumMismatchException(String.format("key '%s' received with CRC32 %08x, expected %08x",
                    key, actual, expected.getAsLong()), key, null, null);
        }
        if (declared.isPresent() && declared.getAsLong() != actual) {
            throw new ChecksumMismatchException(String.format("key '%s' received with CRC32 %08x, the store declared %08x",
                    key, actual, declared.getAsLong()), key, null, null);
        }
    }

    /** Fills {@code out} from {@code in}; a body that ends early is a transient failure. */
    public static void readFully(String key, InputStream in, byte[] out) throws IOException, StoreException {
        int at = 0;
        while (at < out.length) {
            int n = in.read(out, at, out.length - at);
            if (n < 0) {
                throw new TransientStoreException("body of key '" + key + "' ended after " + at + " of " + out.length
                        + " bytes", key, null, null);
            }
            at += n;
        }
    }

    /**
     * An ETag as the stores report it: servers answer it quoted, as HTTP wants, while callers compare
     * bare values; a missing one is empty.
     */
    public static String unquote(String etag) {
        if (etag == null) {
            return "";
        }
        return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"") ? etag.substring(1, etag.length() - 1) : etag;
    }

    /** Ends a body's answer; one not read to its end drops its connection rather than returning it to the pool. */
    static void release(S3Wire.Body in, boolean complete) {
        if (!complete) {
            in.dropConnection().run();
        }
        in.close();
    }
}
