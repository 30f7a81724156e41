package dev.felix.offload.copy;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;

import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.zip.CRC32;

/**
 * The one read-back of an object: its first {@code size} bytes in ranged GETs of at most
 * {@code chunk} bytes, CRC32 over what came back. Upload verification, later proofs, the adoption
 * of a key found taken, and scrub all read back through here, so a read-back means one thing.
 */
public final class ReadBack {

    /** The ranged GET's size when the caller has no reason for another (8 MiB). */
    public static final int DEFAULT_CHUNK = 8 * 1024 * 1024;

    private ReadBack() {
    }

    /** The CRC32 of the object's first {@code size} bytes. */
    public static long crc32(ObjectFetcher store, String key, long size) throws StoreException {
        return crc32(store, key, size, DEFAULT_CHUNK, n -> { }, () -> false).orElseThrow();
    }

    /**
     * As {@link #crc32(ObjectFetcher, String, long)}, each GET of {@code n} bytes preceded by
     * {@code pace.accept(n)} (a bandwidth limit), ending early, empty, once {@code stop} says so.
     */
    public static OptionalLong crc32(ObjectFetcher store, String key, long size, int chunk, LongConsumer pace,
                                     BooleanSupplier stop) throws StoreException {
        if (chunk < 1) {
            throw new IllegalArgumentException("chunk must be positive, got " + chunk);
        }
        CRC32 crc = new CRC32();
        long at = 0;
        while (at < size) {
            if (stop.getAsBoolean()) {
                return OptionalLong.empty();
            }
            int n = (int) Math.min(chunk, size - at);
            pace.accept(n);
            crc.update(store.readRange(key, ByteRange.of(at, n)));
            at += n;
        }
        return OptionalLong.of(crc.getValue());
    }
}
