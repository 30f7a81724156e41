package dev.felix.offload.reliability.fuzz;

import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.side.BallotFile;
import dev.felix.offload.log.side.EpochsFile;
import dev.felix.offload.log.side.ProducersFile;
import dev.felix.offload.log.side.RegistrationFile;
import dev.felix.offload.log.side.ReplicaFile;
import dev.felix.offload.log.side.RunStateFile;
import dev.felix.offload.log.side.StorageIdFile;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * Rewrites the checksums of fuzzed bytes so they hold, as the formats define them. Every format
 * here checks a CRC before it looks at its content, so random bytes almost never get past it; the
 * "with valid checksums" fuzz targets feed bytes through these first, so the fuzzer explores what
 * the decoders do with well-checksummed but otherwise arbitrary content: the part a bug in a writer,
 * or rot the checksum happens to miss, would reach.
 */
final class Checksums {

    private Checksums() {
    }

    private static int crc32(byte[] b, int from, int to) {
        CRC32 crc = new CRC32();
        crc.update(b, from, to - from);
        return (int) crc.getValue();
    }

    private static int crc32c(byte[] b, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(b, from, to - from);
        return (int) crc.getValue();
    }

    private static void put(byte[] b, int at, int value) {
        ByteBuffer.wrap(b).putInt(at, value);
    }

    /** A trailing CRC-32 over every byte before it (the manifest). */
    static byte[] trailingCrc32(byte[] data) {
        byte[] b = data.clone();
        if (b.length >= 4) {
            put(b, b.length - 4, crc32(b, 0, b.length - 4));
        }
        return b;
    }

    /** A trailing CRC-32C over every byte before it (keys.idx). */
    static byte[] trailingCrc32c(byte[] data) {
        byte[] b = data.clone();
        if (b.length >= 4) {
            put(b, b.length - 4, crc32c(b, 0, b.length - 4));
        }
        return b;
    }

    /** A CRC-32 at {@code crcAt} over bytes 0..crcAt (registration, replica, run-state, storage-id). */
    static byte[] fixedCrc32(byte[] data, int crcAt) {
        byte[] b = data.clone();
        if (b.length >= crcAt + 4) {
            put(b, crcAt, crc32(b, 0, crcAt));
        }
        return b;
    }

    static byte[] registration(byte[] data) {
        return fixedCrc32(data, RegistrationFile.CRC_OFFSET);
    }

    static byte[] replica(byte[] data) {
        return fixedCrc32(data, ReplicaFile.CRC_OFFSET);
    }

    static byte[] runState(byte[] data) {
        return fixedCrc32(data, RunStateFile.CRC_OFFSET);
    }

    static byte[] storageId(byte[] data) {
        return fixedCrc32(data, StorageIdFile.CRC_OFFSET);
    }

    /** The ballot's CRC sits after the leader, whose length is at bytes 6..8. */
    static byte[] ballot(byte[] data) {
        byte[] b = data.clone();
        if (b.length >= BallotFile.MIN_LENGTH) {
            int leaderLength = Short.toUnsignedInt(ByteBuffer.wrap(b).getShort(BallotFile.LEADER_LEN_OFFSET));
            int crcAt = BallotFile.LEADER_OFFSET + leaderLength;
            if (b.length >= crcAt + 4) {
                put(b, crcAt, crc32(b, 0, crcAt));
            }
        }
        return b;
    }

    /** A body CRC-32 at {@code crcAt} over every byte from {@code bodyAt} to the end (epochs, producers). */
    static byte[] bodyCrc32(byte[] data, int crcAt, int bodyAt) {
        byte[] b = data.clone();
        if (b.length >= bodyAt) {
            put(b, crcAt, crc32(b, bodyAt, b.length));
        }
        return b;
    }

    static byte[] epochs(byte[] data) {
        return bodyCrc32(data, EpochsFile.BODY_CRC_OFFSET, EpochsFile.HEADER_LENGTH);
    }

    static byte[] producers(byte[] data) {
        return bodyCrc32(data, ProducersFile.BODY_CRC_OFFSET, ProducersFile.OPEN_FLAG_OFFSET);
    }

    /** A stream marker's last line is {@code crc32=<8 hex digits>} over every byte before it: appended. */
    static byte[] streamMarker(byte[] body) {
        String line = "crc32=" + String.format("%08x", crc32(body, 0, body.length)) + "\n";
        byte[] tail = line.getBytes(StandardCharsets.US_ASCII);
        byte[] b = new byte[body.length + tail.length];
        System.arraycopy(body, 0, b, 0, body.length);
        System.arraycopy(tail, 0, b, body.length, tail.length);
        return b;
    }

    /**
     * A segment whose header CRC and every record's header CRC and checksum hold, as far as the
     * records' own lengths lead through the bytes.
     */
    static byte[] segment(byte[] data) {
        byte[] b = data.clone();
        if (b.length < SegmentHeader.LENGTH) {
            return b;
        }
        put(b, SegmentHeader.HEADER_CRC_OFFSET, crc32(b, 0, SegmentHeader.HEADER_CRC_OFFSET));
        ByteBuffer buf = ByteBuffer.wrap(b);
        long p = SegmentHeader.LENGTH;
        while (p + RecordCodec.HEADER_LENGTH <= b.length) {
            int at = (int) p;
            int lengthField = buf.getInt(at + RecordCodec.PAYLOAD_LEN_OFFSET);
            long payload = lengthField & RecordCodec.LENGTH_MASK;
            long tag = (lengthField & 0x8000_0000) != 0 ? 20 : 0;
            put(b, at + RecordCodec.HEADER_CRC_OFFSET, crc32(b, at, at + RecordCodec.HEADER_CRC_OFFSET));
            long end = p + RecordCodec.HEADER_LENGTH + tag + payload;
            if (end > b.length) {
                break;
            }
            CRC32 crc = new CRC32();
            crc.update(b, at, RecordCodec.CHECKSUM_OFFSET);
            crc.update(b, at + RecordCodec.HEADER_LENGTH, (int) (end - p - RecordCodec.HEADER_LENGTH));
            put(b, at + RecordCodec.CHECKSUM_OFFSET, (int) crc.getValue());
            p = end;
        }
        return b;
    }
}
