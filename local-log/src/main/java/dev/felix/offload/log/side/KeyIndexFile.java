package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A cache shard's {@code keys.idx}: its {@link KeyIndexSnapshot}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic            0x46584958 "FXIX"
 *   4      2     format           1, the only format written or read
 *   6      1     store            0 for a cache; 1 is reserved for collections and rejected
 *   7      8     covered_through  u64, every record below it is reflected, none at or past it
 *  15      8     entry_count      u64
 *  23      8     log_bytes        u64, payload bytes of every record below covered_through
 *  31      4     last_checksum    u32, checksum of the record at covered_through - 1; 0 when nothing is covered
 *  35            entries, entry_count times, back to back:
 *                  +0     4  key_len            u32
 *                  +4     n  key                composite key: kind u8 = 0 | key_len u32 | key
 *                  +4+n   8  offset             u64
 *                  +12+n  8  version            u64
 *                  +20+n  8  expires_at_millis  u64, 0 for none
 *                  +28+n  4  bytes              u32, the record's payload length
 *  end-4   4     crc              CRC-32C (Castagnoli) over every byte before it
 * </pre>
 *
 * <p>Structural checks, in order: at least {@value #MIN_LENGTH} bytes ({@code Truncated}), magic
 * ({@code SideFileMagic}), format ({@code SideFileVersion}), the CRC-32C ({@code SideFileChecksum}),
 * then {@code SideFileContent} for: store 0; last_checksum 0 when covered_through is 0; every key a
 * cache key (kind 0, its inner key_len matching the entry's key length); keys strictly ascending as
 * unsigned bytes; every offset below covered_through; no bytes between the last entry and the CRC.
 * A count or length that needs more bytes than remain before the CRC is {@code Truncated}, checked
 * before anything is allocated. The checks that need the log are {@link #validateAgainstLog}.
 *
 * <p><b>Load rule: derived.</b> A file that fails any check is ignored (with the reason) and the
 * whole log is replayed. A temporary ({@code keys.idx.tmp}) left by a crash is never read.
 *
 * <p><b>Writes</b> go to {@code keys.idx.tmp}, which is fsynced, renamed over {@code keys.idx}, and
 * the directory fsynced ({@link DurableFiles.Sync#FULL}): losing it costs a replay of the whole log.
 * Flushing the log before the index is the caller's to do. {@link #FILE} deletes it durably.
 */
public final class KeyIndexFile {

    /** The file's name in a cache shard directory. */
    public static final String FILE_NAME = "keys.idx";
    /** "FXIX". */
    public static final int MAGIC = 0x46584958;
    /** The format this build writes, and the only one it reads. */
    public static final int FORMAT = 1;
    /** The store byte of a cache. */
    public static final int STORE_CACHE = 0;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int FORMAT_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int FORMAT_LENGTH = 2;
    public static final int STORE_OFFSET = FORMAT_OFFSET + FORMAT_LENGTH;
    public static final int STORE_LENGTH = 1;
    public static final int COVERED_THROUGH_OFFSET = STORE_OFFSET + STORE_LENGTH;
    public static final int COVERED_THROUGH_LENGTH = 8;
    public static final int ENTRY_COUNT_OFFSET = COVERED_THROUGH_OFFSET + COVERED_THROUGH_LENGTH;
    public static final int ENTRY_COUNT_LENGTH = 8;
    public static final int LOG_BYTES_OFFSET = ENTRY_COUNT_OFFSET + ENTRY_COUNT_LENGTH;
    public static final int LOG_BYTES_LENGTH = 8;
    public static final int LAST_CHECKSUM_OFFSET = LOG_BYTES_OFFSET + LOG_BYTES_LENGTH;
    public static final int LAST_CHECKSUM_LENGTH = 4;
    /** The header's length; the first entry starts here. */
    public static final int HEADER_LENGTH = LAST_CHECKSUM_OFFSET + LAST_CHECKSUM_LENGTH;

    // Within an entry, from its first byte.
    public static final int KEY_LEN_OFFSET = 0;
    public static final int KEY_LEN_LENGTH = 4;
    public static final int KEY_OFFSET = KEY_LEN_OFFSET + KEY_LEN_LENGTH;
    // Within an entry, from the byte after its key.
    public static final int RECORD_OFFSET_OFFSET = 0;
    public static final int RECORD_OFFSET_LENGTH = 8;
    public static final int VERSION_OFFSET = RECORD_OFFSET_OFFSET + RECORD_OFFSET_LENGTH;
    public static final int VERSION_LENGTH = 8;
    public static final int EXPIRES_AT_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int EXPIRES_AT_LENGTH = 8;
    public static final int BYTES_OFFSET = EXPIRES_AT_OFFSET + EXPIRES_AT_LENGTH;
    public static final int BYTES_LENGTH = 4;
    /** The 28 bytes after the key: the in-memory entry. */
    public static final int ENTRY_TAIL_LENGTH = BYTES_OFFSET + BYTES_LENGTH;
    /** The shortest valid entry: a cache value with an empty key. */
    public static final int MIN_ENTRY_LENGTH = KEY_OFFSET + KeyIndexEntry.INNER_KEY_OFFSET + ENTRY_TAIL_LENGTH;

    /** The trailing CRC-32C. */
    public static final int CRC_LENGTH = 4;
    /** The shortest file: a header, no entries, the CRC. */
    public static final int MIN_LENGTH = HEADER_LENGTH + CRC_LENGTH;

    /** The checksum of a log record (its {@code checksum} field), looked up by offset. */
    @FunctionalInterface
    public interface RecordChecksums {
        /** The checksum field of the record at {@code offset}, which the log holds. */
        int checksumAt(long offset) throws IOException;
    }

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<KeyIndexSnapshot> FILE = new SideFileKind<>(FILE_NAME, SideFiles.MAX_LOADABLE,
            DurableFiles.Sync.FULL, KeyIndexFile::decode, KeyIndexFile::encode);

    private KeyIndexFile() {
    }

    /** The snapshot's bytes, exactly as stored. */
    public static byte[] encode(KeyIndexSnapshot snapshot) {
        long length = MIN_LENGTH;
        for (KeyIndexEntry e : snapshot.entries()) {
            length += KEY_OFFSET + e.compositeKeyLength() + ENTRY_TAIL_LENGTH;
        }
        if (length > SideFiles.MAX_LOADABLE) {
            throw new IllegalStateException("a key index of " + snapshot.entries().size() + " entries takes "
                    + length + " bytes, more than one array (and a load) holds");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) length);
        SideFileFrame.writeHead(buf, MAGIC, FORMAT);
        buf.put(STORE_OFFSET, (byte) STORE_CACHE);
        buf.putLong(COVERED_THROUGH_OFFSET, snapshot.coveredThrough());
        buf.putLong(ENTRY_COUNT_OFFSET, snapshot.entries().size());
        buf.putLong(LOG_BYTES_OFFSET, snapshot.logBytes());
        buf.putInt(LAST_CHECKSUM_OFFSET, snapshot.lastChecksum());
        int p = HEADER_LENGTH;
        for (KeyIndexEntry e : snapshot.entries()) {
            byte[] key = e.compositeKeyUnsafe();
            buf.putInt(p + KEY_LEN_OFFSET, key.length);
            buf.put(p + KEY_OFFSET, key);
            int tail = p + KEY_OFFSET + key.length;
            buf.putLong(tail + RECORD_OFFSET_OFFSET, e.offset());
            buf.putLong(tail + VERSION_OFFSET, e.version());
            buf.putLong(tail + EXPIRES_AT_OFFSET, e.expiresAtMillis());
            buf.putInt(tail + BYTES_OFFSET, (int) e.bytes());
            p = tail + ENTRY_TAIL_LENGTH;
        }
        SideFileFrame.writeCrc(buf, SideFileFrame.Crc.CRC32C, p, 0, p);
        return buf.array();
    }

    /**
     * Decodes a whole {@code keys.idx} and runs every check that needs no log: the bytes from
     * {@code bytes}' position to its limit (not consumed). {@code site} names the shard and file; its
     * position is ignored.
     */
    public static KeyIndexSnapshot decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = SideFileFrame.openHead(bytes, site, MIN_LENGTH, "keys.idx header and crc", MAGIC,
                "keys.idx format", FORMAT);
        int length = buf.limit();
        int crcAt = length - CRC_LENGTH;
        SideFileFrame.checkCrc(buf, site, SideFileFrame.Crc.CRC32C, crcAt, 0, crcAt,
                "keys.idx of " + length + " bytes (crc32c)");
        int store = Byte.toUnsignedInt(buf.get(STORE_OFFSET));
        if (store != STORE_CACHE) {
            throw SideFiles.content(site, STORE_OFFSET, "store " + store + " is not a cache (" + STORE_CACHE
                    + "); 1 is reserved for collections");
        }
        long coveredThrough = buf.getLong(COVERED_THROUGH_OFFSET);
        int lastChecksum = buf.getInt(LAST_CHECKSUM_OFFSET);
        if (coveredThrough == 0 && lastChecksum != 0) {
            throw SideFiles.content(site, LAST_CHECKSUM_OFFSET, KeyIndexSnapshot.zeroCoverageProblem(lastChecksum));
        }
        long count = buf.getLong(ENTRY_COUNT_OFFSET);
        long entryBytes = crcAt - HEADER_LENGTH;
        long fitting = entryBytes / MIN_ENTRY_LENGTH;
        if (Long.compareUnsigned(count, fitting) > 0) {
            long needed = Long.compareUnsigned(count, Long.MAX_VALUE / MIN_ENTRY_LENGTH) > 0
                    ? Long.MAX_VALUE : count * MIN_ENTRY_LENGTH;
            throw CorruptionException.truncated(site.at(HEADER_LENGTH), Long.toUnsignedString(count)
                    + " entries of at least " + MIN_ENTRY_LENGTH + " bytes", needed, entryBytes);
        }
        List<KeyIndexEntry> entries = new ArrayList<>((int) count);
        int p = HEADER_LENGTH;
        KeyIndexEntry previous = null;
        for (int i = 0; i < count; i++) {
            int left = crcAt - p;
            if (left < KEY_OFFSET) {
                throw CorruptionException.truncated(site.at(p), "entry " + i + " key_len", KEY_OFFSET, left);
            }
            long keyLength = Integer.toUnsignedLong(buf.getInt(p + KEY_LEN_OFFSET));
            if (keyLength + ENTRY_TAIL_LENGTH > left - KEY_OFFSET) {
                throw CorruptionException.truncated(site.at(p + KEY_OFFSET), "entry " + i + " of a "
                        + keyLength + "-byte key", keyLength + ENTRY_TAIL_LENGTH, left - KEY_OFFSET);
            }
            byte[] key = new byte[(int) keyLength];
            buf.get(p + KEY_OFFSET, key);
            String keyProblem = KeyIndexEntry.cacheKeyProblem(key);
            if (keyProblem != null) {
                throw SideFiles.content(site, p + KEY_OFFSET, "entry " + i + ": " + keyProblem);
            }
            int tail = p + KEY_OFFSET + key.length;
            KeyIndexEntry entry = new KeyIndexEntry(key, buf.getLong(tail + RECORD_OFFSET_OFFSET),
                    buf.getLong(tail + VERSION_OFFSET), buf.getLong(tail + EXPIRES_AT_OFFSET),
                    Integer.toUnsignedLong(buf.getInt(tail + BYTES_OFFSET)));
            String problem = KeyIndexSnapshot.entryProblem(i, previous, entry, coveredThrough);
            if (problem != null) {
                throw SideFiles.content(site, p, problem);
            }
            entries.add(entry);
            previous = entry;
            p = tail + ENTRY_TAIL_LENGTH;
        }
        if (p != crcAt) {
            throw SideFiles.content(site, p, (crcAt - p) + " bytes after the last of " + count + " entries, before the crc");
        }
        return new KeyIndexSnapshot(coveredThrough, buf.getLong(LOG_BYTES_OFFSET), lastChecksum, entries);
    }

    /**
     * The checks that need the log, all {@code SideFileContent} but the last: covered_through lies
     * between the log's oldest offset and its tail; every entry points at an offset from the oldest
     * up to covered_through; and the record at covered_through - 1 has last_checksum
     * ({@code SideFileChecksum}, stored being last_checksum, computed the log's), or, when nothing of
     * this log is covered (covered_through equals the oldest offset), last_checksum is 0. Offsets
     * compare as unsigned 64-bit values.
     *
     * @param oldestOffset the offset of the log's oldest record (its tail when it is empty)
     * @param tailOffset   the offset the next record would take
     * @param checksums    reads the checksum field of the record at covered_through - 1; called at most
     *                     once, and only when that record lies in the log
     */
    public static void validateAgainstLog(KeyIndexSnapshot snapshot, long oldestOffset, long tailOffset,
                                          RecordChecksums checksums, CorruptionSite site)
            throws CorruptionException, IOException {
        long covered = snapshot.coveredThrough();
        if (Long.compareUnsigned(covered, oldestOffset) < 0) {
            throw SideFiles.content(site, COVERED_THROUGH_OFFSET, "covered_through " + Long.toUnsignedString(covered)
                    + " is below the log's oldest offset " + Long.toUnsignedString(oldestOffset)
                    + ": a later pass trimmed records this snapshot never saw");
        }
        if (Long.compareUnsigned(covered, tailOffset) > 0) {
            throw SideFiles.content(site, COVERED_THROUGH_OFFSET, "covered_through " + Long.toUnsignedString(covered)
                    + " is past the log's tail " + Long.toUnsignedString(tailOffset)
                    + ": records this snapshot saw are gone");
        }
        long p = HEADER_LENGTH;
        List<KeyIndexEntry> entries = snapshot.entries();
        for (int i = 0; i < entries.size(); i++) {
            KeyIndexEntry e = entries.get(i);
            if (Long.compareUnsigned(e.offset(), oldestOffset) < 0) {
                throw SideFiles.content(site, p, "entry " + i + " points at offset " + Long.toUnsignedString(e.offset())
                        + ", below the log's oldest offset " + Long.toUnsignedString(oldestOffset));
            }
            // Below covered_through is a rule of the value itself; checked again for a value not decoded here.
            if (Long.compareUnsigned(e.offset(), covered) >= 0) {
                throw SideFiles.content(site, p, "entry " + i + " points at offset " + Long.toUnsignedString(e.offset())
                        + ", not below covered_through " + Long.toUnsignedString(covered));
            }
            p += KEY_OFFSET + e.compositeKeyLength() + ENTRY_TAIL_LENGTH;
        }
        if (covered == oldestOffset) {
            if (snapshot.lastChecksum() != 0) {
                throw SideFiles.content(site, LAST_CHECKSUM_OFFSET, String.format("nothing of the log is covered "
                        + "(covered_through is its oldest offset %s) but last_checksum is 0x%08x, not 0",
                        Long.toUnsignedString(covered), snapshot.lastChecksum()));
            }
            return;
        }
        int logs = checksums.checksumAt(covered - 1);
        if (logs != snapshot.lastChecksum()) {
            throw CorruptionException.checksum(CorruptionKind.SIDE_FILE_CHECKSUM, site.at(LAST_CHECKSUM_OFFSET),
                    "last_checksum against the record at offset " + Long.toUnsignedString(covered - 1),
                    snapshot.lastChecksum(), logs);
        }
    }

    /**
     * Loads {@code keys.idx} as an open uses it: a snapshot failing the structural checks or
     * {@link #validateAgainstLog} is ignored (with the reason).
     *
     * @throws IOException when the file cannot be read, or {@code checksums} fails to read the log
     */
    public static DerivedLoad<KeyIndexSnapshot> load(Path shardDir, long oldestOffset, long tailOffset,
                                                     RecordChecksums checksums) throws IOException {
        DerivedLoad<KeyIndexSnapshot> loaded = FILE.loadDerived(shardDir);
        if (loaded.value().isEmpty()) {
            return loaded;
        }
        try {
            validateAgainstLog(loaded.value().get(), oldestOffset, tailOffset, checksums, FILE.siteIn(shardDir));
            return loaded;
        } catch (CorruptionException e) {
            return DerivedLoad.ignored(e);
        }
    }
}
