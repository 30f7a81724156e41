package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScanner;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * Builds segment bytes by hand, independently of the main encoder, including bytes the writer
 * refuses to produce (several kind bits, over-long lengths, wrong offsets), and runs scans to the end.
 */
public final class SegmentBytes {

    public static final int SEGMENT_MAGIC = 0x464C5347;
    public static final int INDEX_MAGIC = 0x464C5349;
    public static final int BIT_OPEN = 1 << 31;
    public static final int BIT_CONTINUE = 1 << 30;
    public static final int BIT_GENERATION = 1 << 29;

    private SegmentBytes() {
    }

    public static int crc32(byte[] bytes, int from, int length) {
        CRC32 crc = new CRC32();
        crc.update(bytes, from, length);
        return (int) crc.getValue();
    }

    /** A 32-byte segment header with any field values; the CRC over bytes 0..24 is correct. */
    public static byte[] header(int magic, int version, int flags, long baseOffset, long createdAt) {
        ByteBuffer b = ByteBuffer.allocate(32);
        b.putInt(magic).putShort((short) version).putShort((short) flags).putLong(baseOffset).putLong(createdAt);
        b.putInt(24, crc32(b.array(), 0, 24));
        b.putInt(28, 0);
        return b.array();
    }

    public static byte[] header(int version, long baseOffset) {
        return header(SEGMENT_MAGIC, version, 0, baseOffset, 1_700_000_000_000_000L);
    }

    /**
     * A record with a free-form {@code payload_len} word; both CRCs are computed over what is
     * written, so the record is valid unless the word or offset break a rule.
     */
    public static byte[] rawRecord(int lenField, long offset, long timestamp, byte[] tag, byte[] payload) {
        int tagLength = tag == null ? 0 : tag.length;
        ByteBuffer b = ByteBuffer.allocate(28 + tagLength + payload.length);
        b.putInt(lenField).putLong(offset).putLong(timestamp);
        b.putInt(20, crc32(b.array(), 0, 20));
        b.position(28);
        if (tag != null) {
            b.put(tag);
        }
        b.put(payload);
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, 24);
        crc.update(b.array(), 28, tagLength + payload.length);
        b.putInt(24, (int) crc.getValue());
        return b.array();
    }

    /** A plain record built by hand. */
    public static byte[] plain(long offset, long timestamp, byte[] payload) {
        return rawRecord(payload.length, offset, timestamp, null, payload);
    }

    public static byte[] tag(long producerId, long sequence, int count) {
        return ByteBuffer.allocate(20).putLong(producerId).putLong(sequence).putInt(count).array();
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    public static byte[] flipBit(byte[] bytes, int bit) {
        byte[] copy = bytes.clone();
        copy[bit / 8] ^= (byte) (1 << (bit % 8));
        return copy;
    }

    /** Writes {@code bytes} as segment {@code id} of {@code shardDir} (created if needed), replacing any file. */
    public static Path writeSegment(Path shardDir, long id, byte[] bytes) throws IOException {
        Files.createDirectories(shardDir);
        Path file = shardDir.resolve(SegmentFile.logName(id));
        Files.write(file, bytes);
        return file;
    }

    /** Everything a scan to the end found: the records (or headers) and where it stopped. */
    public record Outcome<T>(List<T> items, List<Long> positions, CorruptionException failure, SegmentHeader header,
                             long endPosition) {
        public boolean clean() {
            return failure == null;
        }
    }

    /** Reads every record with {@link SegmentScanner#nextRecord()} until the end or the first damage. */
    public static Outcome<Record> readRecords(Path file, String shard, long segmentId) throws IOException {
        List<Record> records = new ArrayList<>();
        List<Long> positions = new ArrayList<>();
        SegmentScanner scanner;
        try {
            scanner = SegmentScanner.open(file, shard, segmentId, ScanDepth.RECORDS);
        } catch (CorruptionException e) {
            return new Outcome<>(records, positions, e, null, 0);
        }
        try (scanner) {
            while (true) {
                long at = scanner.position();
                Record r;
                try {
                    r = scanner.nextRecord();
                } catch (CorruptionException e) {
                    return new Outcome<>(records, positions, e, scanner.header(), scanner.position());
                }
                if (r == null) {
                    return new Outcome<>(records, positions, null, scanner.header(), scanner.position());
                }
                records.add(r);
                positions.add(at);
            }
        }
    }

    /**
     * Scans with {@link SegmentScanner#nextChecked()}: every record verified as in
     * {@link #readRecords}, only its header kept.
     */
    public static Outcome<RecordHeader> readChecked(Path file, String shard, long segmentId) throws IOException {
        List<RecordHeader> headers = new ArrayList<>();
        List<Long> positions = new ArrayList<>();
        SegmentScanner scanner;
        try {
            scanner = SegmentScanner.open(file, shard, segmentId, ScanDepth.RECORDS);
        } catch (CorruptionException e) {
            return new Outcome<>(headers, positions, e, null, 0);
        }
        try (scanner) {
            while (true) {
                long at = scanner.position();
                RecordHeader h;
                try {
                    h = scanner.nextChecked();
                } catch (CorruptionException e) {
                    return new Outcome<>(headers, positions, e, scanner.header(), scanner.position());
                }
                if (h == null) {
                    return new Outcome<>(headers, positions, null, scanner.header(), scanner.position());
                }
                headers.add(h);
                positions.add(at);
            }
        }
    }

    /** Steps over every record header with {@link SegmentScanner#nextHeader()} until the end or the first damage. */
    public static Outcome<RecordHeader> readHeaders(Path file, String shard, long segmentId) throws IOException {
        List<RecordHeader> headers = new ArrayList<>();
        List<Long> positions = new ArrayList<>();
        SegmentScanner scanner;
        try {
            scanner = SegmentScanner.open(file, shard, segmentId, ScanDepth.HEADERS);
        } catch (CorruptionException e) {
            return new Outcome<>(headers, positions, e, null, 0);
        }
        try (scanner) {
            while (true) {
                long at = scanner.position();
                RecordHeader h;
                try {
                    h = scanner.nextHeader();
                } catch (CorruptionException e) {
                    return new Outcome<>(headers, positions, e, scanner.header(), scanner.position());
                }
                if (h == null) {
                    return new Outcome<>(headers, positions, null, scanner.header(), scanner.position());
                }
                headers.add(h);
                positions.add(at);
            }
        }
    }

    /** Bytes of the encoded records, back to back, after the header. */
    public static byte[] segment(SegmentHeader header, List<Record> records) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(header.encode());
        for (Record r : records) {
            out.writeBytes(RecordCodec.encode(r));
        }
        return out.toByteArray();
    }
}
