package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The data root's {@code storage-id} file: its {@link StorageId}. All integers are big-endian. The spec
 * gives only the fields ("FLID", a version, the id, a CRC); this layout pads the version to a 4-byte
 * boundary as the other headers do:
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic     0x464C4944 "FLID"
 *   4      2     version   1, the only version written or read
 *   6      2     reserved  0; anything else is rejected
 *   8     16     id        the 16 id bytes
 *  24      4     crc       CRC-32 (IEEE) over bytes 0..24
 * </pre>
 *
 * <p>The file is exactly {@value #LENGTH} bytes. Checks run in this order: length at least
 * {@value #LENGTH} ({@code Truncated}), magic ({@code SideFileMagic}), version ({@code SideFileVersion}),
 * the CRC ({@code SideFileChecksum}), reserved and no bytes after the CRC ({@code SideFileContent}).
 *
 * <p><b>Load rule: authoritative.</b> Absent is {@link Optional#empty()} (a directory opened for the
 * first time); present and undecodable fails {@link #FILE}, since a made-up identity could hide that
 * acknowledged records were lost. <b>Writes</b>: temporary, fsync, atomic rename, directory fsync.
 */
public final class StorageIdFile {

    /** The file's name in the data root. */
    public static final String FILE_NAME = DataRoot.STORAGE_ID;
    /** "FLID". */
    public static final int MAGIC = 0x464C4944;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int ID_OFFSET = SideFileFrame.BODY_OFFSET;
    public static final int ID_LENGTH = StorageId.LENGTH;
    public static final int CRC_OFFSET = ID_OFFSET + ID_LENGTH;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + SideFileFrame.CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.fixed("storage-id", MAGIC, VERSION, LENGTH);

    /** The file, where it lives and how it is loaded, saved and removed. */
    public static final SideFileKind<StorageId> FILE = new SideFileKind<>(FILE_NAME, SideFiles.SMALL_FILE_LIMIT,
            DurableFiles.Sync.FULL, StorageIdFile::decode, StorageIdFile::encode);

    private StorageIdFile() {
    }

    /** The id's file bytes, exactly as stored. */
    public static byte[] encode(StorageId id) {
        ByteBuffer buf = FRAME.start(LENGTH);
        buf.put(ID_OFFSET, id.bytes());
        return FRAME.seal(buf);
    }

    /** Decodes a whole {@code storage-id} file: the bytes from {@code bytes}' position to its limit (not consumed). */
    public static StorageId decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = FRAME.open(bytes, site);
        FRAME.requireNothingAfter(buf, site);
        return new StorageId(buf.getLong(ID_OFFSET), buf.getLong(ID_OFFSET + 8));
    }
}
