package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A shard's {@code epochs} file: its {@link EpochHistory}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic      0x464C4550 "FLEP"
 *   4      2     version    1, the only version written or read
 *   6      2     count      u16, the entries that follow
 *   8      4     body_crc   CRC-32 (IEEE) over the entries (bytes 12..end)
 *  12            entries, count times, back to back:
 *                  +0  8  generation    u64
 *                  +8  8  start_offset  u64
 * </pre>
 *
 * <p>The file is exactly {@code 12 + 16 * count} bytes. Checks run in this order: at least the header
 * ({@code Truncated}), magic ({@code SideFileMagic}), version ({@code SideFileVersion}), the length
 * the count promises ({@code Truncated} when short, {@code SideFileContent} for bytes past it), the
 * body CRC ({@code SideFileChecksum}), then the entries' order ({@code SideFileContent}: generations
 * strictly ascending, start offsets never descending). The count is checked against the bytes there
 * are before anything is allocated.
 *
 * <p><b>Load rule: derived.</b> Absent, short, failing its checksum or any other check, the file
 * loads as the empty history ({@link #FILE} says which and why): every shard from before the file
 * existed has none, and what is lost is the automatic repair of a divergence, never a record.
 *
 * <p><b>Writes</b> go through a temporary and an atomic rename ({@link DurableFiles.Sync#NONE}, as the
 * spec asks: a temporary and a rename, no flush), so a reader sees the old history or the new one,
 * never part of one; a history read half-written would be a confident wrong truncation point.
 */
public final class EpochsFile {

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "epochs";
    /** "FLEP". */
    public static final int MAGIC = 0x464C4550;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int VERSION_LENGTH = 2;
    public static final int COUNT_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int COUNT_LENGTH = 2;
    public static final int BODY_CRC_OFFSET = COUNT_OFFSET + COUNT_LENGTH;
    public static final int BODY_CRC_LENGTH = 4;
    /** The header's length; the first entry starts here. */
    public static final int HEADER_LENGTH = BODY_CRC_OFFSET + BODY_CRC_LENGTH;

    // Within an entry, from its first byte.
    public static final int GENERATION_OFFSET = 0;
    public static final int GENERATION_LENGTH = 8;
    public static final int START_OFFSET_OFFSET = GENERATION_OFFSET + GENERATION_LENGTH;
    public static final int START_OFFSET_LENGTH = 8;
    public static final int ENTRY_LENGTH = START_OFFSET_OFFSET + START_OFFSET_LENGTH;

    /** The longest file: {@link EpochHistory#MAX_ENTRIES} entries. */
    public static final int MAX_LENGTH = HEADER_LENGTH + EpochHistory.MAX_ENTRIES * ENTRY_LENGTH;

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<EpochHistory> FILE = new SideFileKind<>(FILE_NAME, MAX_LENGTH,
            DurableFiles.Sync.NONE, EpochsFile::decode, EpochsFile::encode);

    private EpochsFile() {
    }

    /** The history's bytes, exactly as stored. */
    public static byte[] encode(EpochHistory history) {
        int count = history.size();
        ByteBuffer buf = ByteBuffer.allocate(HEADER_LENGTH + count * ENTRY_LENGTH);
        SideFileFrame.writeHead(buf, MAGIC, VERSION);
        buf.putShort(COUNT_OFFSET, (short) count);
        int p = HEADER_LENGTH;
        for (Epoch e : history.entries()) {
            buf.putLong(p + GENERATION_OFFSET, e.generation());
            buf.putLong(p + START_OFFSET_OFFSET, e.startOffset());
            p += ENTRY_LENGTH;
        }
        SideFileFrame.writeCrc(buf, SideFileFrame.Crc.CRC32, BODY_CRC_OFFSET, HEADER_LENGTH, p - HEADER_LENGTH);
        return buf.array();
    }

    /**
     * Decodes a whole {@code epochs} file: the bytes from {@code bytes}' position to its limit (not
     * consumed). {@code site} names the shard and file; its position is ignored, every error carries
     * its own.
     */
    public static EpochHistory decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = SideFileFrame.openHead(bytes, site, HEADER_LENGTH, "epochs header", MAGIC, "epochs", VERSION);
        int length = buf.limit();
        int count = Short.toUnsignedInt(buf.getShort(COUNT_OFFSET));
        if (count > EpochHistory.MAX_ENTRIES) {
            throw SideFiles.content(site, COUNT_OFFSET, count + " entries, more than the " + EpochHistory.MAX_ENTRIES
                    + " a history holds");
        }
        long needed = HEADER_LENGTH + (long) count * ENTRY_LENGTH;
        if (length < needed) {
            throw CorruptionException.truncated(site.at(HEADER_LENGTH), count + " entries",
                    needed - HEADER_LENGTH, length - HEADER_LENGTH);
        }
        if (length > needed) {
            throw SideFiles.content(site, needed, (length - needed) + " bytes after the last of " + count + " entries");
        }
        SideFileFrame.checkCrc(buf, site, SideFileFrame.Crc.CRC32, BODY_CRC_OFFSET, HEADER_LENGTH, length - HEADER_LENGTH,
                "epochs body of " + count + " entries");
        List<Epoch> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = HEADER_LENGTH + i * ENTRY_LENGTH;
            Epoch e = new Epoch(buf.getLong(p + GENERATION_OFFSET), buf.getLong(p + START_OFFSET_OFFSET));
            if (i > 0) {
                String problem = EpochHistory.orderProblem(entries.get(i - 1), e);
                if (problem != null) {
                    throw SideFiles.content(site, p, "entry " + i + ": " + problem);
                }
            }
            entries.add(e);
        }
        return new EpochHistory(entries);
    }

    /** The history of {@code shardDir}, empty when the file is absent or damaged. */
    public static EpochHistory loadOrEmpty(Path shardDir) throws IOException {
        return FILE.loadDerived(shardDir).orElse(EpochHistory.empty());
    }
}
