package dev.felix.offload.log.format;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A segment file through one read-ahead window: a scan that steps header by header wants a small
 * one, a scan that reads whole records a large one. A record larger than the window is read into a
 * buffer of its own, whose size the scanner has bounded.
 */
final class FileSegmentSource implements SegmentSource {

    private final FileChannel channel;
    private final CorruptionSite site;
    private final long size;
    private final ByteBuffer window;
    private long windowStart;
    private int windowLength;

    /** {@code endPosition} negative: the whole file as it is now; else no more than its first bytes. */
    FileSegmentSource(FileChannel channel, CorruptionSite site, int windowSize, long endPosition) throws IOException {
        this.channel = channel;
        this.site = site;
        this.size = endPosition < 0 ? channel.size() : Math.min(endPosition, channel.size());
        // No larger than the bytes there are to read: a 64 KiB segment otherwise zeroed a 256 KiB window
        // it never filled, at every scan (half of what an offload of small segments allocated).
        this.window = ByteBuffer.allocate((int) Math.max(1, Math.min(windowSize, size)));
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public ByteBuffer read(long from, int length) throws IOException {
        if (from >= windowStart && from + length <= windowStart + windowLength) {
            int rel = (int) (from - windowStart);
            return window.slice(rel, length);
        }
        if (length > window.capacity()) {
            ByteBuffer big = ByteBuffer.allocate(length);
            readFully(from, big);
            return big.flip();
        }
        window.clear().limit((int) Math.min(window.capacity(), size - from));
        readFully(from, window);
        windowStart = from;
        windowLength = window.position();
        return window.slice(0, length);
    }

    private void readFully(long from, ByteBuffer dst) throws IOException {
        long at = from;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                throw new EOFException("segment shrank while being read at byte " + at + " (" + site + ")");
            }
            at += n;
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
