package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * A shard's {@code ballot} file: its {@link Ballot}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic       0x464C424C "FLBL"
 *   4      2     version     1, the only version written or read
 *   6      2     leader_len  u16, at most 1024
 *   8      8     generation  u64, the generation the leader was accepted at
 *  16      n     leader      UTF-8 node id, leader_len bytes (0 for a generation given up)
 *  16+n    4     crc         CRC-32 (IEEE) over bytes 0..16+n
 * </pre>
 *
 * <p>The file is exactly {@code 20 + leader_len} bytes. Checks run in this order: at least 20 bytes
 * ({@code Truncated}), magic ({@code SideFileMagic}), version ({@code SideFileVersion}), leader_len at
 * most 1024 ({@code SideFileContent}, before the length is used), the length it promises
 * ({@code Truncated}), the CRC ({@code SideFileChecksum}), no bytes after the CRC and the leader being
 * valid UTF-8 ({@code SideFileContent}, decoded with a reporting decoder, never replaced).
 *
 * <p><b>Load rule: authoritative</b>, as {@code replica}: a present file that does not decode fails
 * {@link #FILE}; absent is {@link Optional#empty()}, which names no leader. See {@link BallotOpening}
 * for what a ballot means beside the replica's generation.
 *
 * <p><b>Writes</b> as {@code replica}: temporary, fsync, atomic rename, directory fsync
 * ({@link DurableFiles.Sync#FULL}). When a generation is raised the ballot is written before
 * {@code replica}; that order is the caller's.
 */
public final class BallotFile {

    /** The file's name in a shard directory. */
    public static final String FILE_NAME = "ballot";
    /** "FLBL". */
    public static final int MAGIC = 0x464C424C;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int VERSION_LENGTH = 2;
    public static final int LEADER_LEN_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int LEADER_LEN_LENGTH = 2;
    public static final int GENERATION_OFFSET = LEADER_LEN_OFFSET + LEADER_LEN_LENGTH;
    public static final int GENERATION_LENGTH = 8;
    /** Where the leader starts; the fixed part before it. */
    public static final int LEADER_OFFSET = GENERATION_OFFSET + GENERATION_LENGTH;
    /** The trailing CRC, at {@code LEADER_OFFSET + leader_len}. */
    public static final int CRC_LENGTH = 4;
    /** The shortest file: a generation given up. */
    public static final int MIN_LENGTH = LEADER_OFFSET + CRC_LENGTH;
    /** The longest file. */
    public static final int MAX_LENGTH = MIN_LENGTH + Ballot.MAX_LEADER_BYTES;

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<Ballot> FILE = new SideFileKind<>(FILE_NAME, SideFiles.SMALL_FILE_LIMIT,
            DurableFiles.Sync.FULL, BallotFile::decode, BallotFile::encode);

    private BallotFile() {
    }

    /** The ballot's bytes, exactly as stored. */
    public static byte[] encode(Ballot ballot) {
        byte[] leader = SideFiles.utf8Exact(ballot.leader(), "leader");
        ByteBuffer buf = ByteBuffer.allocate(MIN_LENGTH + leader.length);
        SideFileFrame.writeHead(buf, MAGIC, VERSION);
        buf.putShort(LEADER_LEN_OFFSET, (short) leader.length);
        buf.putLong(GENERATION_OFFSET, ballot.generation());
        buf.put(LEADER_OFFSET, leader);
        int crcAt = LEADER_OFFSET + leader.length;
        SideFileFrame.writeCrc(buf, SideFileFrame.Crc.CRC32, crcAt, 0, crcAt);
        return buf.array();
    }

    /**
     * Decodes a whole {@code ballot} file: the bytes from {@code bytes}' position to its limit (not
     * consumed). {@code site} names the shard and file; its position is ignored.
     */
    public static Ballot decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = SideFileFrame.openHead(bytes, site, MIN_LENGTH, "ballot file", MAGIC, "ballot", VERSION);
        int length = buf.limit();
        int leaderLength = Short.toUnsignedInt(buf.getShort(LEADER_LEN_OFFSET));
        if (leaderLength > Ballot.MAX_LEADER_BYTES) {
            throw SideFiles.content(site, LEADER_LEN_OFFSET, "leader_len " + leaderLength + ", at most "
                    + Ballot.MAX_LEADER_BYTES + " is allowed");
        }
        int crcAt = LEADER_OFFSET + leaderLength;
        if (length < crcAt + CRC_LENGTH) {
            throw CorruptionException.truncated(site.at(LEADER_OFFSET), "leader of " + leaderLength
                    + " bytes and the crc", leaderLength + CRC_LENGTH, length - LEADER_OFFSET);
        }
        SideFileFrame.checkCrc(buf, site, SideFileFrame.Crc.CRC32, crcAt, 0, crcAt, "ballot bytes 0.." + crcAt);
        int end = crcAt + CRC_LENGTH;
        if (length > end) {
            throw SideFiles.content(site, end, (length - end) + " bytes after the crc");
        }
        String leader = SideFiles.utf8Strict(buf.slice(LEADER_OFFSET, leaderLength), site, LEADER_OFFSET, "leader");
        return new Ballot(buf.getLong(GENERATION_OFFSET), leader);
    }
}
