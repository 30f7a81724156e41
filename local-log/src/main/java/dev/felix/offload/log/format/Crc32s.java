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
        crc.update(buf.duplicate().position(from).limit(from + length));
        return (int) crc.getValue();
    }
}
