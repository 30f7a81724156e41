package dev.felix.offload.log.format;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/** CRC-32 (IEEE), the checksum every Felix file uses, over buffer ranges without copying. */
final class Crc32s {

    private Crc32s() {
    }

    /** CRC-32 of {@code length} bytes of {@code buf} from absolute index {@code from}; the buffer's position is untouched. */
    static int of(ByteBuffer buf, int from, int length) {
        CRC32 crc = new CRC32();
        update(crc, buf, from, length);
        return (int) crc.getValue();
    }

    /**
     * Adds {@code length} bytes of {@code buf} from absolute index {@code from} to {@code crc}; the buffer's
     * position is untouched. A heap buffer's array is read in place: a scan checks every record this way,
     * and a view of the buffer for each range was a quarter of the scan's allocations.
     */
    static void update(CRC32 crc, ByteBuffer buf, int from, int length) {
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + from, length);
        } else {
            crc.update(buf.duplicate().position(from).limit(from + length));
        }
    }
}
