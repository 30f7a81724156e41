package dev.felix.offload.root;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * The codec of {@value #FILE_NAME}, the data root's journal of object keys that may be left in the
 * store without a manifest entry naming them (see {@link PendingKeys}). All integers big-endian.
 *
 * <pre>
 * file   := header record*
 * header := magic "FXPK" (4) | version u16 = 1 (2) | reserved u16 = 0 (2)          8 bytes
 * record := op u8 (1) | key length u16 (2) | key UTF-8 (1..1024) | crc32 u32 (4)
 *           op 1 = ADD: the key may exist unnamed from now on (written before its request)
 *           op 2 = DONE: the key left the journal (named by a manifest, absent, or deleted)
 *           crc32 over op, key length and key
 * </pre>
 *
 * <p>Records are appended and fsynced one by one, so a crash may leave the last record incomplete:
 * a torn tail (the file ends inside a record whose length was read, or inside its fixed fields) is
 * told apart from damage and dropped, since the request it announced never began. Anything else that
 * does not decode (wrong magic, unknown version, a checksum that does not match, an op or key length
 * out of range, a key that is not UTF-8) is damage, a {@link CorruptionException} naming the file and
 * the byte. The key length is checked against {@link #MAX_KEY_BYTES} before anything is allocated.
 */
public final class PendingKeysFile {

    public static final String FILE_NAME = "offload.pending";

    static final int MAGIC = 0x4658504B; // "FXPK"
    static final int VERSION = 1;
    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = MAGIC_OFFSET + 4;
    static final int RESERVED_OFFSET = VERSION_OFFSET + 2;
    public static final int HEADER_LENGTH = RESERVED_OFFSET + 2;

    static final int OP_LENGTH = 1;
    static final int KEY_LENGTH_LENGTH = 2;
    static final int CRC_LENGTH = 4;
    /** A record's bytes besides its key. */
    static final int RECORD_OVERHEAD = OP_LENGTH + KEY_LENGTH_LENGTH + CRC_LENGTH;
    /** The longest key a store accepts (S3's limit, in UTF-8 bytes). */
    static final int MAX_KEY_BYTES = 1024;

    static final byte OP_ADD = 1;
    static final byte OP_DONE = 2;

    /** What a file holds: the keys added and not done, in the order first added. */
    public record Decoded(Set<String> keys, long validLength, boolean tornTail) {
    }

    private PendingKeysFile() {
    }

    public static byte[] header() {
        return ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.BIG_ENDIAN)
                .putInt(MAGIC).putShort((short) VERSION).putShort((short) 0).array();
    }

    public static byte[] add(String key) {
        return record(OP_ADD, key);
    }

    public static byte[] done(String key) {
        return record(OP_DONE, key);
    }

    /** A whole file holding exactly {@code keys}, each added once. */
    public static byte[] encode(Collection<String> keys) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(header());
        for (String key : keys) {
            out.writeBytes(add(key));
        }
        return out.toByteArray();
    }

    private static byte[] record(byte op, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        if (k.length < 1 || k.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("a key of " + k.length + " bytes; 1 to " + MAX_KEY_BYTES + " allowed");
        }
        ByteBuffer b = ByteBuffer.allocate(RECORD_OVERHEAD + k.length).order(ByteOrder.BIG_ENDIAN);
        b.put(op).putShort((short) k.length).put(k);
        CRC32 crc = new CRC32();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /**
     * Decodes a file's bytes.
     *
     * @param where the file's path, for the error
     * @throws CorruptionException when the bytes are damaged (a torn last record is not damage)
     */
    public static Decoded decode(byte[] bytes, String where) throws CorruptionException {
        CorruptionSite site = CorruptionSite.inFile(FILE_NAME, where, 0);
        if (bytes.length < HEADER_LENGTH) {
            throw CorruptionException.truncated(site, "the header", HEADER_LENGTH, bytes.length);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        int magic = b.getInt(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw CorruptionException.of(CorruptionKind.SIDE_FILE_MAGIC, site,
                    String.format("magic 0x%08x, expected 0x%08x (FXPK)", magic, MAGIC));
        }
        int version = Short.toUnsignedInt(b.getShort(VERSION_OFFSET));
        if (version != VERSION) {
            throw CorruptionException.of(CorruptionKind.SIDE_FILE_VERSION, site.at(VERSION_OFFSET),
                    "version " + version + ", only " + VERSION + " is known");
        }
        if (b.getShort(RESERVED_OFFSET) != 0) {
            throw CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(RESERVED_OFFSET),
                    "reserved bytes are not zero");
        }
        Set<String> keys = new LinkedHashSet<>();
        int at = HEADER_LENGTH;
        while (at < bytes.length) {
            if (bytes.length - at < OP_LENGTH + KEY_LENGTH_LENGTH) {
                return new Decoded(keys, at, true); // torn inside the fixed fields
            }
            byte op = bytes[at];
            int length = Short.toUnsignedInt(b.getShort(at + OP_LENGTH));
            if (op != OP_ADD && op != OP_DONE) {
                throw CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(at), "op " + op + ", not 1 or 2");
            }
            if (length < 1 || length > MAX_KEY_BYTES) {
                throw CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(at + OP_LENGTH),
                        "a key of " + length + " bytes; 1 to " + MAX_KEY_BYTES + " allowed");
            }
            int end = at + RECORD_OVERHEAD + length;
            if (end > bytes.length) {
                return new Decoded(keys, at, true); // torn: the append never completed
            }
            CRC32 crc = new CRC32();
            crc.update(bytes, at, OP_LENGTH + KEY_LENGTH_LENGTH + length);
            int stored = b.getInt(end - CRC_LENGTH);
            if (stored != (int) crc.getValue()) {
                throw CorruptionException.checksum(CorruptionKind.SIDE_FILE_CHECKSUM, site.at(at), "record",
                        stored, (int) crc.getValue());
            }
            String key;
            try {
                key = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes, at + OP_LENGTH + KEY_LENGTH_LENGTH, length)).toString();
            } catch (CharacterCodingException e) {
                throw CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(at + OP_LENGTH + KEY_LENGTH_LENGTH),
                        "the key is not UTF-8");
            }
            if (op == OP_ADD) {
                keys.add(key);
            } else {
                keys.remove(key);
            }
            at = end;
        }
        return new Decoded(keys, at, false);
    }
}
