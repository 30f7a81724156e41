package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The data root's {@code run-state} file: its {@link RunState}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic    0x464C524E "FLRN"
 *   4      2     version  1, the only version written or read
 *   6      1     state    u8: 1 = running, 2 = stopped cleanly
 *   7      1     flags    u8: bit 0, the run acknowledges before syncing (periodic or none);
 *                         every other bit must be 0
 *   8     16     id       the storage id the run started under
 *  24      4     crc      CRC-32 (IEEE) over bytes 0..24
 * </pre>
 *
 * <p>The file is exactly {@value #LENGTH} bytes. Checks run in this order: length at least
 * {@value #LENGTH} ({@code Truncated}), magic ({@code SideFileMagic}), version ({@code SideFileVersion}),
 * the CRC ({@code SideFileChecksum}), then {@code SideFileContent}: a state byte naming a state, no
 * unknown flag bit (an unknown bit may change what the file means, so it is never masked off), and
 * no bytes after the CRC.
 *
 * <p><b>Load rule: authoritative.</b> Absent is {@link Optional#empty()}; present and undecodable
 * fails {@link #FILE}. <b>Writes</b>: temporary, fsync, atomic rename, directory fsync. The start-up
 * rule built on it is {@link StartupIdentity}.
 */
public final class RunStateFile {

    /** The file's name in the data root. */
    public static final String FILE_NAME = DataRoot.RUN_STATE;
    /** "FLRN". */
    public static final int MAGIC = 0x464C524E;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;
    /** Flags bit 0: the run acknowledges before syncing. */
    public static final int FLAG_ACKNOWLEDGES_BEFORE_SYNC = 0x01;

    /** The frame's reserved bytes hold this file's state and flags. */
    public static final int STATE_OFFSET = SideFileFrame.RESERVED_OFFSET;
    public static final int STATE_LENGTH = 1;
    public static final int FLAGS_OFFSET = STATE_OFFSET + STATE_LENGTH;
    public static final int FLAGS_LENGTH = 1;
    public static final int ID_OFFSET = FLAGS_OFFSET + FLAGS_LENGTH;
    public static final int ID_LENGTH = StorageId.LENGTH;
    public static final int CRC_OFFSET = ID_OFFSET + ID_LENGTH;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + SideFileFrame.CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.fixedWithOwnBytes6To8("run-state", MAGIC, VERSION, LENGTH);

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<RunState> FILE = new SideFileKind<>(FILE_NAME, SideFiles.SMALL_FILE_LIMIT,
            DurableFiles.Sync.FULL, RunStateFile::decode, RunStateFile::encode);

    private RunStateFile() {
    }

    /** The run state's bytes, exactly as stored. */
    public static byte[] encode(RunState runState) {
        ByteBuffer buf = FRAME.start(LENGTH);
        buf.put(STATE_OFFSET, (byte) runState.state().code());
        buf.put(FLAGS_OFFSET, (byte) (runState.acknowledgesBeforeSync() ? FLAG_ACKNOWLEDGES_BEFORE_SYNC : 0));
        buf.put(ID_OFFSET, runState.storageId().bytes());
        return FRAME.seal(buf);
    }

    /** Decodes a whole {@code run-state} file: the bytes from {@code bytes}' position to its limit (not consumed). */
    public static RunState decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = FRAME.open(bytes, site);
        int code = Byte.toUnsignedInt(buf.get(STATE_OFFSET));
        RunState.State state = RunState.State.ofCode(code);
        if (state == null) {
            throw SideFiles.content(site, STATE_OFFSET, "state " + code + " is neither 1 (running) nor 2 (stopped cleanly)");
        }
        int flags = Byte.toUnsignedInt(buf.get(FLAGS_OFFSET));
        if ((flags & ~FLAG_ACKNOWLEDGES_BEFORE_SYNC) != 0) {
            throw SideFiles.content(site, FLAGS_OFFSET, String.format("flags 0x%02x has bits other than bit 0 set", flags));
        }
        FRAME.requireNothingAfter(buf, site);
        return new RunState(state, flags == FLAG_ACKNOWLEDGES_BEFORE_SYNC,
                new StorageId(buf.getLong(ID_OFFSET), buf.getLong(ID_OFFSET + 8)));
    }
}
