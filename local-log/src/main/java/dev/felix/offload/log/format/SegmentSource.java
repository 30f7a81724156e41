package dev.felix.offload.log.format;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The bytes of one segment, wherever they are held, as a {@link SegmentScanner} reads them: a local
 * file ({@link SegmentScanner#open}), or anything else that can serve a range (a copy in an object
 * store, read by a module that knows of one). The scanner checks every range against
 * {@link #size()} before it asks, and bounds every length by the format's limits first.
 */
public interface SegmentSource extends Closeable {

    /** How many bytes of the segment the scan may see, fixed for the life of the source. */
    long size();

    /**
     * {@code length} bytes from {@code position}; the caller has checked they lie within
     * {@link #size()}. The buffer is a view, valid until the next read.
     *
     * @throws IOException         when the bytes cannot be had
     * @throws CorruptionException when the holder has fewer bytes than {@link #size()} promised
     */
    ByteBuffer read(long position, int length) throws IOException, CorruptionException;

    /**
     * Whether every buffer {@link #read} answers keeps its bytes unchanged for as long as anyone holds
     * it (immutable chunks, say), rather than only until the next read. Then the scanner hands out
     * records as views of those bytes instead of copying each payload. False unless a source says so.
     */
    default boolean buffersStay() {
        return false;
    }

    /**
     * Forgets what was read from the record {@code failure} names on, so the next read fetches it
     * anew, for a holder whose bytes may have been damaged on their way (in transit, in a cache).
     * Answers false when a second read could not give other bytes, as for a local file.
     */
    default boolean refetch(CorruptionException failure) {
        return false;
    }

    @Override
    default void close() throws IOException {
    }
}
