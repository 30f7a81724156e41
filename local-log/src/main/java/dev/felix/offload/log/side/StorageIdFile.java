package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
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
 * first time); present and undecodable fails {@link #load}, since a made-up identity could hide that
 * acknowledged records were lost. <b>Writes</b>: temporary, fsync, atomic rename, directory fsync.
 */
public final class StorageIdFile {

    /** The file's name in the data root. */
    public static final String FILE_NAME = DataRoot.STORAGE_ID;
    /** "FLID". */
    public static final int MAGIC = 0x464C4944;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 4;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int VERSION_LENGTH = 2;
    public static final int RESERVED_OFFSET = VERSION_OFFSET + VERSION_LENGTH;
    public static final int RESERVED_LENGTH = 2;
    public static final int ID_OFFSET = RESERVED_OFFSET + RESERVED_LENGTH;
    public static final int ID_LENGTH = StorageId.LENGTH;
    public static final int CRC_OFFSET = ID_OFFSET + ID_LENGTH;
    public static final int CRC_LENGTH = 4;
    /** The file's length. */
    public static final int LENGTH = CRC_OFFSET + CRC_LENGTH;

    private StorageIdFile() {
    }

    /** The id's file bytes, exactly as stored. */
    public static byte[] encode(StorageId id) {
        ByteBuffer buf = ByteBuffer.allocate(LENGTH);
        buf.putInt(MAGIC_OFFSET, MAGIC);
        buf.putShort(VERSION_OFFSET, (short) VERSION);
        buf.putShort(RESERVED_OFFSET, (short) 0);
        buf.put(ID_OFFSET, id.bytes());
        buf.putInt(CRC_OFFSET, SideFiles.crc32(buf, 0, CRC_OFFSET));
        return buf.array();
    }

    /** Decodes a whole {@code storage-id} file: the bytes from {@code bytes}' position to its limit (not consumed). */
    public static StorageId decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = bytes.slice();
        int length = buf.remaining();
        if (length < LENGTH) {
            throw CorruptionException.truncated(site.at(0), "storage-id file", LENGTH, length);
        }
        int magic = buf.getInt(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw SideFiles.magic(site, magic, MAGIC, "FLID");
        }
        int version = Short.toUnsignedInt(buf.getShort(VERSION_OFFSET));
        if (version != VERSION) {
            throw SideFiles.version(site, VERSION_OFFSET, "storage-id", version, VERSION);
        }
        int stored = buf.getInt(CRC_OFFSET);
        int computed = SideFiles.crc32(buf, 0, CRC_OFFSET);
        if (stored != computed) {
            throw CorruptionException.checksum(CorruptionKind.SIDE_FILE_CHECKSUM, site.at(CRC_OFFSET),
                    "storage-id bytes 0..24", stored, computed);
        }
        int reserved = Short.toUnsignedInt(buf.getShort(RESERVED_OFFSET));
        if (reserved != 0) {
            throw SideFiles.content(site, RESERVED_OFFSET, String.format("reserved 0x%04x, expected 0", reserved));
        }
        if (length > LENGTH) {
            throw SideFiles.content(site, LENGTH, (length - LENGTH) + " bytes after the crc");
        }
        return new StorageId(buf.getLong(ID_OFFSET), buf.getLong(ID_OFFSET + 8));
    }

    /** The {@code storage-id} file of a data root. */
    public static Path fileIn(Path root) {
        return root.resolve(FILE_NAME);
    }

    /**
     * The root's storage id, empty without a file.
     *
     * @throws CorruptionException when the file is present and does not decode; it is left as it is
     * @throws IOException         when the root is missing or the file cannot be read
     */
    public static Optional<StorageId> load(Path root) throws IOException, CorruptionException {
        SideFiles.requireDirectory(root);
        return Optional.ofNullable(SideFiles.loadAuthoritative(fileIn(root), SideFiles.SMALL_FILE_LIMIT,
                CorruptionSite.inFile(SideFiles.directoryName(root), FILE_NAME, 0), StorageIdFile::decode));
    }

    /** Makes {@code id} the root's storage id, durably, before returning. */
    public static void save(Path root, StorageId id) throws IOException {
        save(root, id, step -> { });
    }

    /** As {@link #save(Path, StorageId)}, reporting each step of the replace; for crash tests. */
    public static void save(Path root, StorageId id, DurableFiles.StepListener steps) throws IOException {
        DurableFiles.replace(fileIn(root), encode(id), DurableFiles.Sync.FULL, steps);
    }
}
