package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A shard's {@code producers} file: its {@link ProducerSnapshot}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic      0x464C5053 "FLPS"
 *   4      2     version    1, the only version written or read
 *   6      2     reserved   0; anything else is rejected
 *   8      8     as_of      u64, the state covers every record below this offset
 *  16      4     producers  u32, the producer entries in the body
 *  20      4     body_crc   CRC-32 (IEEE) over every byte after it (24..end)
 *  24      1     open       1 when a batch is waiting for records, else 0; when 1, 32 bytes follow:
 *                  +0   8  producer_id  u64
 *                  +8   8  sequence     u64
 *                 +16   4  len          u32
 *                 +20   8  first        u64
 *                 +28   4  held         u32
 *   then the producers, back to back:
 *                  +0   8  id             u64
 *                  +8   8  last_sequence  u64
 *                 +16   2  batches        u16, at most 64
 *                 +18      batches times:
 *                            +0  8  first  u64
 *                            +8  4  len    u32
 * </pre>
 *
 * <p>Checks run in this order: at least 25 bytes ({@code Truncated}), magic ({@code SideFileMagic}),
 * version ({@code SideFileVersion}), the body CRC ({@code SideFileChecksum}), reserved 0, the open flag
 * 0 or 1, at most 4096 producers and 64 batches each, each id once, batches ascending, an open batch
 * holding 1 to len-1 records, and no bytes after the last producer ({@code SideFileContent}); a count
 * that needs more bytes than remain is {@code Truncated}. Every count is checked against the bytes
 * left before anything is allocated. The file records no length of its own, so one cut short after
 * its first 25 bytes fails the body CRC ({@code SideFileChecksum}) before its counts are looked at.
 * {@code as_of} and the producer count lie outside the body CRC,
 * as the spec lays the file out: a damaged count fails the length checks, a damaged {@code as_of} is
 * caught only when it lands outside the log ({@link #checkAgainstLog}).
 *
 * <p><b>Load rule: derived.</b> Missing or damaged, the file loads as no snapshot (with the reason),
 * and the state is rebuilt from the oldest record; so does a snapshot below the oldest record or
 * past the tail ({@link #load(Path, long, long)}).
 *
 * <p><b>Writes</b> go through a temporary and an atomic rename without a flush
 * ({@link DurableFiles.Sync#NONE}): one lost to a crash costs a longer open. {@link #FILE} deletes
 * the file durably, which a truncation does before writing past the cut.
 */
public final class ProducersFile {

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "producers";
    /** "FLPS". */
    public static final int MAGIC = 0x464C5053;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int AS_OF_OFFSET = SideFileFrame.BODY_OFFSET;
    public static final int AS_OF_LENGTH = 8;
    public static final int PRODUCER_COUNT_OFFSET = AS_OF_OFFSET + AS_OF_LENGTH;
    public static final int PRODUCER_COUNT_LENGTH = 4;
    public static final int BODY_CRC_OFFSET = PRODUCER_COUNT_OFFSET + PRODUCER_COUNT_LENGTH;
    public static final int BODY_CRC_LENGTH = 4;
    /** Where the body (which the body CRC covers) starts: the open flag. */
    public static final int OPEN_FLAG_OFFSET = BODY_CRC_OFFSET + BODY_CRC_LENGTH;
    public static final int OPEN_FLAG_LENGTH = 1;
    /** Where an open batch's fields start, when the flag is 1. */
    public static final int OPEN_BATCH_OFFSET = OPEN_FLAG_OFFSET + OPEN_FLAG_LENGTH;
    /** The shortest file: no open batch, no producers. */
    public static final int MIN_LENGTH = OPEN_BATCH_OFFSET;

    // Within the open batch, from its first byte.
    public static final int OPEN_PRODUCER_ID_OFFSET = 0;
    public static final int OPEN_PRODUCER_ID_LENGTH = 8;
    public static final int OPEN_SEQUENCE_OFFSET = OPEN_PRODUCER_ID_OFFSET + OPEN_PRODUCER_ID_LENGTH;
    public static final int OPEN_SEQUENCE_LENGTH = 8;
    public static final int OPEN_LEN_OFFSET = OPEN_SEQUENCE_OFFSET + OPEN_SEQUENCE_LENGTH;
    public static final int OPEN_LEN_LENGTH = 4;
    public static final int OPEN_FIRST_OFFSET = OPEN_LEN_OFFSET + OPEN_LEN_LENGTH;
    public static final int OPEN_FIRST_LENGTH = 8;
    public static final int OPEN_HELD_OFFSET = OPEN_FIRST_OFFSET + OPEN_FIRST_LENGTH;
    public static final int OPEN_HELD_LENGTH = 4;
    public static final int OPEN_BATCH_LENGTH = OPEN_HELD_OFFSET + OPEN_HELD_LENGTH;

    // Within a producer, from its first byte.
    public static final int PRODUCER_ID_OFFSET = 0;
    public static final int PRODUCER_ID_LENGTH = 8;
    public static final int LAST_SEQUENCE_OFFSET = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH;
    public static final int LAST_SEQUENCE_LENGTH = 8;
    public static final int BATCH_COUNT_OFFSET = LAST_SEQUENCE_OFFSET + LAST_SEQUENCE_LENGTH;
    public static final int BATCH_COUNT_LENGTH = 2;
    /** Where a producer's batches start; its length without them. */
    public static final int PRODUCER_FIXED_LENGTH = BATCH_COUNT_OFFSET + BATCH_COUNT_LENGTH;

    // Within a batch, from its first byte.
    public static final int BATCH_FIRST_OFFSET = 0;
    public static final int BATCH_FIRST_LENGTH = 8;
    public static final int BATCH_LEN_OFFSET = BATCH_FIRST_OFFSET + BATCH_FIRST_LENGTH;
    public static final int BATCH_LEN_LENGTH = 4;
    public static final int BATCH_LENGTH = BATCH_LEN_OFFSET + BATCH_LEN_LENGTH;

    /** The longest file: an open batch and every producer with every batch. */
    public static final int MAX_LENGTH = MIN_LENGTH + OPEN_BATCH_LENGTH
            + ProducerSnapshot.MAX_PRODUCERS * (PRODUCER_FIXED_LENGTH + ProducerEntry.MAX_BATCHES * BATCH_LENGTH);

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<ProducerSnapshot> FILE = new SideFileKind<>(FILE_NAME, MAX_LENGTH,
            DurableFiles.Sync.NONE, ProducersFile::decode, ProducersFile::encode);

    private ProducersFile() {
    }

    /** The snapshot's bytes, exactly as stored. */
    public static byte[] encode(ProducerSnapshot snapshot) {
        OpenBatch open = snapshot.open();
        int length = MIN_LENGTH + (open == null ? 0 : OPEN_BATCH_LENGTH);
        for (ProducerEntry p : snapshot.producers()) {
            length += PRODUCER_FIXED_LENGTH + p.batches().size() * BATCH_LENGTH;
        }
        ByteBuffer buf = ByteBuffer.allocate(length);
        SideFileFrame.writeHead(buf, MAGIC, VERSION);
        buf.putLong(AS_OF_OFFSET, snapshot.asOf());
        buf.putInt(PRODUCER_COUNT_OFFSET, snapshot.producers().size());
        int p = OPEN_BATCH_OFFSET;
        if (open == null) {
            buf.put(OPEN_FLAG_OFFSET, (byte) 0);
        } else {
            buf.put(OPEN_FLAG_OFFSET, (byte) 1);
            buf.putLong(p + OPEN_PRODUCER_ID_OFFSET, open.producerId());
            buf.putLong(p + OPEN_SEQUENCE_OFFSET, open.sequence());
            buf.putInt(p + OPEN_LEN_OFFSET, (int) open.len());
            buf.putLong(p + OPEN_FIRST_OFFSET, open.first());
            buf.putInt(p + OPEN_HELD_OFFSET, (int) open.held());
            p += OPEN_BATCH_LENGTH;
        }
        for (ProducerEntry producer : snapshot.producers()) {
            buf.putLong(p + PRODUCER_ID_OFFSET, producer.id());
            buf.putLong(p + LAST_SEQUENCE_OFFSET, producer.lastSequence());
            buf.putShort(p + BATCH_COUNT_OFFSET, (short) producer.batches().size());
            p += PRODUCER_FIXED_LENGTH;
            for (BatchLocation batch : producer.batches()) {
                buf.putLong(p + BATCH_FIRST_OFFSET, batch.first());
                buf.putInt(p + BATCH_LEN_OFFSET, (int) batch.len());
                p += BATCH_LENGTH;
            }
        }
        SideFileFrame.writeCrc(buf, SideFileFrame.Crc.CRC32, BODY_CRC_OFFSET, OPEN_FLAG_OFFSET, length - OPEN_FLAG_OFFSET);
        return buf.array();
    }

    /**
     * Decodes a whole {@code producers} file: the bytes from {@code bytes}' position to its limit (not
     * consumed). {@code site} names the shard and file; its position is ignored.
     */
    public static ProducerSnapshot decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = SideFileFrame.openHead(bytes, site, MIN_LENGTH, "producers header and open flag", MAGIC,
                "producers", VERSION);
        int length = buf.limit();
        SideFileFrame.checkCrc(buf, site, SideFileFrame.Crc.CRC32, BODY_CRC_OFFSET, OPEN_FLAG_OFFSET,
                length - OPEN_FLAG_OFFSET, "producers body of " + (length - OPEN_FLAG_OFFSET) + " bytes");
        int reserved = Short.toUnsignedInt(buf.getShort(SideFileFrame.RESERVED_OFFSET));
        if (reserved != 0) {
            throw SideFiles.content(site, SideFileFrame.RESERVED_OFFSET,
                    String.format("reserved 0x%04x, expected 0", reserved));
        }
        int flag = Byte.toUnsignedInt(buf.get(OPEN_FLAG_OFFSET));
        int p = OPEN_BATCH_OFFSET;
        OpenBatch open = null;
        if (flag == 1) {
            if (length - p < OPEN_BATCH_LENGTH) {
                throw CorruptionException.truncated(site.at(p), "open batch", OPEN_BATCH_LENGTH, length - p);
            }
            long len = Integer.toUnsignedLong(buf.getInt(p + OPEN_LEN_OFFSET));
            long held = Integer.toUnsignedLong(buf.getInt(p + OPEN_HELD_OFFSET));
            String problem = OpenBatch.heldProblem(len, held);
            if (problem != null) {
                throw SideFiles.content(site, p + OPEN_HELD_OFFSET, problem);
            }
            open = new OpenBatch(buf.getLong(p + OPEN_PRODUCER_ID_OFFSET), buf.getLong(p + OPEN_SEQUENCE_OFFSET),
                    len, buf.getLong(p + OPEN_FIRST_OFFSET), held);
            p += OPEN_BATCH_LENGTH;
        } else if (flag != 0) {
            throw SideFiles.content(site, OPEN_FLAG_OFFSET, "open flag " + flag + ", expected 0 or 1");
        }
        long count = Integer.toUnsignedLong(buf.getInt(PRODUCER_COUNT_OFFSET));
        if (count > ProducerSnapshot.MAX_PRODUCERS) {
            throw SideFiles.content(site, PRODUCER_COUNT_OFFSET, count + " producers, more than the "
                    + ProducerSnapshot.MAX_PRODUCERS + " a snapshot holds");
        }
        if (count * PRODUCER_FIXED_LENGTH > length - p) {
            throw CorruptionException.truncated(site.at(p), count + " producers", count * PRODUCER_FIXED_LENGTH,
                    length - p);
        }
        List<ProducerEntry> producers = new ArrayList<>((int) count);
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < count; i++) {
            if (length - p < PRODUCER_FIXED_LENGTH) {
                throw CorruptionException.truncated(site.at(p), "producer " + i, PRODUCER_FIXED_LENGTH, length - p);
            }
            long id = buf.getLong(p + PRODUCER_ID_OFFSET);
            if (!ids.add(id)) {
                throw SideFiles.content(site, p + PRODUCER_ID_OFFSET, "producer " + i + " has id "
                        + Long.toUnsignedString(id) + ", which an earlier producer has");
            }
            long lastSequence = buf.getLong(p + LAST_SEQUENCE_OFFSET);
            int batchCount = Short.toUnsignedInt(buf.getShort(p + BATCH_COUNT_OFFSET));
            if (batchCount > ProducerEntry.MAX_BATCHES) {
                throw SideFiles.content(site, p + BATCH_COUNT_OFFSET, "producer " + i + " has " + batchCount
                        + " batches, more than the " + ProducerEntry.MAX_BATCHES + " remembered");
            }
            p += PRODUCER_FIXED_LENGTH;
            if (batchCount * BATCH_LENGTH > length - p) {
                throw CorruptionException.truncated(site.at(p), batchCount + " batches of producer " + i,
                        batchCount * BATCH_LENGTH, length - p);
            }
            List<BatchLocation> batches = new ArrayList<>(batchCount);
            for (int b = 0; b < batchCount; b++) {
                BatchLocation batch = new BatchLocation(buf.getLong(p + BATCH_FIRST_OFFSET),
                        Integer.toUnsignedLong(buf.getInt(p + BATCH_LEN_OFFSET)));
                if (b > 0) {
                    String problem = ProducerEntry.orderProblem(batches.get(b - 1), batch);
                    if (problem != null) {
                        throw SideFiles.content(site, p, "producer " + i + ", batch " + b + ": " + problem);
                    }
                }
                batches.add(batch);
                p += BATCH_LENGTH;
            }
            producers.add(new ProducerEntry(id, lastSequence, batches));
        }
        if (p != length) {
            throw SideFiles.content(site, p, (length - p) + " bytes after the last of " + count + " producers");
        }
        return new ProducerSnapshot(buf.getLong(AS_OF_OFFSET), open, producers);
    }

    /**
     * Fails when the snapshot cannot describe the log it sits beside: {@code as_of} below the log's
     * oldest offset (records it counted were removed since) or past its tail (records it counted are
     * gone). Offsets compare as unsigned 64-bit values.
     *
     * @param oldestOffset the offset of the log's oldest record (its tail when it is empty)
     * @param tailOffset   the offset the next record would take
     * @throws CorruptionException {@code SideFileContent}, reported at {@code as_of}
     */
    public static void checkAgainstLog(ProducerSnapshot snapshot, long oldestOffset, long tailOffset,
                                       CorruptionSite site) throws CorruptionException {
        long asOf = snapshot.asOf();
        if (Long.compareUnsigned(asOf, oldestOffset) < 0) {
            throw SideFiles.content(site, AS_OF_OFFSET, "as_of " + Long.toUnsignedString(asOf)
                    + " is below the log's oldest offset " + Long.toUnsignedString(oldestOffset));
        }
        if (Long.compareUnsigned(asOf, tailOffset) > 0) {
            throw SideFiles.content(site, AS_OF_OFFSET, "as_of " + Long.toUnsignedString(asOf)
                    + " is past the log's tail " + Long.toUnsignedString(tailOffset));
        }
    }

    /**
     * As {@link #FILE.loadDerived(Path)}, and a snapshot that fails {@link #checkAgainstLog} is ignored too: what an
     * open uses.
     */
    public static DerivedLoad<ProducerSnapshot> load(Path shardDir, long oldestOffset, long tailOffset)
            throws IOException {
        CorruptionSite site = FILE.siteIn(shardDir);
        return FILE.loadDerived(shardDir).checked(s -> checkAgainstLog(s, oldestOffset, tailOffset, site));
    }
}
