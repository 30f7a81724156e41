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
 * zero would accept any leader, so a present file that does not decode fails {@link #load} with its
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

    public static final int MAGIC_OFFSET = SideFileFrame.MAGIC_OFFSET;
    public static final int VERSION_OFFSET = SideFileFrame.VERSION_OFFSET;
    public static final int RESERVED_OFFSET = SideFileFrame.RESERVED_OFFSET;
    public static final int RESERVED_LENGTH = SideFileFrame.RESERVED_LENGTH;
    public static final int GENERATION_OFFSET = RESERVED_OFFSET + RESERVED_LENGTH;
    public static final int GENERATION_LENGTH = 8;
    public static final int COMMIT_OFFSET = GENERATION_OFFSET + GENERATION_LENGTH;
    public static final int COMMIT_LENGTH = 8;
    public static final int CRC_OFFSET = COMMIT_OFFSET + COMMIT_LENGTH;
    public static final int CRC_LENGTH = SideFileFrame.CRC_LENGTH;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.fixed("replica", MAGIC, VERSION, LENGTH);

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

    /** The {@code replica} file of a shard directory. */
    public static Path fileIn(Path shardDir) {
        return shardDir.resolve(FILE_NAME);
    }

    /**
     * The state of {@code shardDir}: {@link ReplicaState#NONE} without a file.
     *
     * @throws CorruptionException when the file is present and does not decode; it is left as it is
     * @throws IOException         when the directory is missing or the file cannot be read
     */
    public static ReplicaState load(Path shardDir) throws IOException, CorruptionException {
        SideFiles.requireDirectory(shardDir);
        ReplicaState state = SideFiles.loadAuthoritative(fileIn(shardDir), SideFiles.SMALL_FILE_LIMIT,
                CorruptionSite.inFile(SideFiles.directoryName(shardDir), FILE_NAME, 0), ReplicaFile::decode);
        return state == null ? ReplicaState.NONE : state;
    }

    /** Makes {@code state} the file's content, durably, before returning. */
    public static void save(Path shardDir, ReplicaState state) throws IOException {
        save(shardDir, state, step -> { });
    }

    /** As {@link #save(Path, ReplicaState)}, reporting each step of the replace; for crash tests. */
    public static void save(Path shardDir, ReplicaState state, DurableFiles.StepListener steps) throws IOException {
        DurableFiles.replace(fileIn(shardDir), encode(state), DurableFiles.Sync.FULL, steps);
    }
}
