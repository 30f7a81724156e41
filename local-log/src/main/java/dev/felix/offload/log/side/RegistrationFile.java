package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The data root's {@code registration} file: its {@link Registration}. All integers are big-endian. The
 * spec gives only the fields ("FLRG", a version, the incarnation as a u64, a CRC); this layout pads the
 * version to a 4-byte boundary as the other headers do:
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic        0x464C5247 "FLRG"
 *   4      2     version      1, the only version written or read
 *   6      2     reserved     0; anything else is rejected
 *   8      8     incarnation  u64, the node incarnation of the last registration
 *  16      4     crc          CRC-32 (IEEE) over bytes 0..16
 * </pre>
 *
 * <p>The file is exactly {@value #LENGTH} bytes. Checks run in this order: length at least
 * {@value #LENGTH} ({@code Truncated}), magic ({@code SideFileMagic}), version ({@code SideFileVersion}),
 * the CRC ({@code SideFileChecksum}), reserved and no bytes after the CRC ({@code SideFileContent}).
 *
 * <p><b>Load rule: authoritative.</b> Absent is {@link Optional#empty()} (never registered);
 * present and undecodable fails {@link #FILE}. <b>Writes</b>: temporary, fsync, atomic rename,
 * directory fsync.
 */
public final class RegistrationFile {

    /** The file's name in the data root. */
    public static final String FILE_NAME = DataRoot.REGISTRATION;
    /** "FLRG". */
    public static final int MAGIC = 0x464C5247;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int INCARNATION_OFFSET = SideFileFrame.BODY_OFFSET;
    public static final int INCARNATION_LENGTH = 8;
    public static final int CRC_OFFSET = INCARNATION_OFFSET + INCARNATION_LENGTH;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + SideFileFrame.CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.fixed("registration", MAGIC, VERSION, LENGTH);

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<Registration> FILE = new SideFileKind<>(FILE_NAME, SideFiles.SMALL_FILE_LIMIT,
            DurableFiles.Sync.FULL, RegistrationFile::decode, RegistrationFile::encode);

    private RegistrationFile() {
    }

    /** The registration's bytes, exactly as stored. */
    public static byte[] encode(Registration registration) {
        ByteBuffer buf = FRAME.start(LENGTH);
        buf.putLong(INCARNATION_OFFSET, registration.incarnation());
        return FRAME.seal(buf);
    }

    /** Decodes a whole {@code registration} file: the bytes from {@code bytes}' position to its limit (not consumed). */
    public static Registration decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = FRAME.open(bytes, site);
        FRAME.requireNothingAfter(buf, site);
        return new Registration(buf.getLong(INCARNATION_OFFSET));
    }
}
