package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A shard's {@code replica} file: its {@link ReplicaState}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic       0x464C5253 "FLRS"
 *   4      2     version     1, the only version written or read
 *   6      2     reserved    0; anything else is rejected
 *   8      8     generation  u64, the highest generation accepted
 *  16      8     commit      u64, one past the last record known committed
 *  24      4     crc         CRC-32 (IEEE) over bytes 0..24
 * </pre>
 *
 * <p>The file is exactly {@value #LENGTH} bytes. Checks run in this order: length at least
 * {@value #LENGTH} ({@code Truncated}), magic ({@code SideFileMagic}), version
 * ({@code SideFileVersion}), the CRC ({@code SideFileChecksum}), reserved and no bytes after the CRC
 * ({@code SideFileContent}).
 *
 * <p><b>Load rule: authoritative.</b> Nothing in the log can rebuild it, and a damaged file read as
 * zero would accept any leader, so a present file that does not decode fails {@link #FILE} with its
 * {@link CorruptionException} (and is left as it is). An absent file reads as {@link ReplicaState#NONE}.
 *
 * <p><b>Writes</b> go through a temporary, an fsync, an atomic rename and a directory fsync
 * ({@link DurableFiles.Sync#FULL}). When to write (a raised generation before anything from that
 * leader is stored; the commit offset behind its advance) is the caller's to decide.
 */
public final class ReplicaFile {

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "replica";
    /** "FLRS". */
    public static final int MAGIC = 0x464C5253;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int GENERATION_OFFSET = SideFileFrame.BODY_OFFSET;
    public static final int GENERATION_LENGTH = 8;
    public static final int COMMIT_OFFSET = GENERATION_OFFSET + GENERATION_LENGTH;
    public static final int COMMIT_LENGTH = 8;
    public static final int CRC_OFFSET = COMMIT_OFFSET + COMMIT_LENGTH;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + SideFileFrame.CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.fixed("replica", MAGIC, VERSION, LENGTH);

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<ReplicaState> FILE = new SideFileKind<>(FILE_NAME, SideFiles.SMALL_FILE_LIMIT,
            DurableFiles.Sync.FULL, ReplicaFile::decode, ReplicaFile::encode);

    private ReplicaFile() {
    }

    /** The state's bytes, exactly as stored. */
    public static byte[] encode(ReplicaState state) {
        ByteBuffer buf = FRAME.start(LENGTH);
        buf.putLong(GENERATION_OFFSET, state.generation());
        buf.putLong(COMMIT_OFFSET, state.commit());
        return FRAME.seal(buf);
    }

    /**
     * Decodes a whole {@code replica} file: the bytes from {@code bytes}' position to its limit (not
     * consumed). {@code site} names the shard and file; its position is ignored.
     */
    public static ReplicaState decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = FRAME.open(bytes, site);
        FRAME.requireNothingAfter(buf, site);
        return new ReplicaState(buf.getLong(GENERATION_OFFSET), buf.getLong(COMMIT_OFFSET));
    }

    /**
     * The state of {@code shardDir}: {@link ReplicaState#NONE} without a file.
     *
     * @throws CorruptionException when the file is present and does not decode; it is left as it is
     * @throws IOException         when the directory is missing or the file cannot be read
     */
    public static ReplicaState load(Path shardDir) throws IOException, CorruptionException {
        return FILE.load(shardDir).orElse(ReplicaState.NONE);
    }
}
