package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import dev.felix.offload.log.side.SideFileFrame;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Encodes and decodes {@code offload.manifest}. All integers are big-endian.
 *
 * <pre>
 *  offset  size  field
 *   0      4     magic      0x464C4F46 "FLOF"
 *   4      2     version    1, the only version written or read
 *   6      2     reserved   0; anything else is rejected
 *   8      4     count      u32, the entries that follow
 *  12            entries, count times, back to back:
 *                  +0   8  segment_id    u64
 *                  +8   8  base_offset   u64
 *                 +16   8  last_offset   u64, inclusive
 *                 +24   8  size          u64, bytes in the object (the segment's valid bytes)
 *                 +32   8  oldest        u64, timestamp_micros of the first record
 *                 +40   8  newest        u64, timestamp_micros of the last record
 *                 +48   4  checksum      u32, CRC-32 over the object's bytes
 *                 +52   2  key_length    u16
 *                 +54   n  key           UTF-8 object key, key_length bytes
 *  end-4   4     crc        CRC-32 (IEEE) over every byte before it
 * </pre>
 *
 * <p>Checks run in this order, every failure a {@link CorruptionException} whose site names the
 * shard, the file and the byte position: length at least {@link #MIN_LENGTH} ({@code Truncated}),
 * magic ({@code SideFileMagic}), version ({@code SideFileVersion}), the CRC ({@code SideFileChecksum},
 * at the stored CRC), then the content ({@code SideFileContent}, {@code Truncated}). The version comes
 * before the CRC because a file of another version need not end in one. The CRC comes before any
 * other field is used, so a count or key length is acted on only once it is known to be what a
 * writer wrote; even then it is checked against the bytes that remain before anything is allocated,
 * so a file that carries a valid CRC over absurd lengths cannot ask for more memory than its own size.
 *
 * <p>Content rules: reserved is 0; every entry and its key fit before the CRC; keys are valid UTF-8
 * and relative object names ({@link ManifestEntry#keyProblem}: no {@code ..}, no leading {@code /});
 * each entry's base offset is at or below its last offset; each entry's base offset lies above the
 * previous entry's last offset (ascending, never overlapping; gaps allowed); no bytes between the last
 * entry and the CRC.
 */
public final class ManifestCodec {

    /** "FLOF". */
    public static final int MAGIC = 0x464C4F46;
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;

    public static final int MAGIC_OFFSET = SideFileFrame.MAGIC_OFFSET;
    public static final int VERSION_OFFSET = SideFileFrame.VERSION_OFFSET;
    public static final int RESERVED_OFFSET = SideFileFrame.RESERVED_OFFSET;
    public static final int COUNT_OFFSET = SideFileFrame.BODY_OFFSET;
    public static final int COUNT_LENGTH = 4;
    /** The header's length; the first entry starts here. */
    public static final int HEADER_LENGTH = COUNT_OFFSET + COUNT_LENGTH;

    // Within an entry, from its first byte.
    public static final int SEGMENT_ID_OFFSET = 0;
    public static final int SEGMENT_ID_LENGTH = 8;
    public static final int BASE_OFFSET_OFFSET = SEGMENT_ID_OFFSET + SEGMENT_ID_LENGTH;
    public static final int BASE_OFFSET_LENGTH = 8;
    public static final int LAST_OFFSET_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH;
    public static final int LAST_OFFSET_LENGTH = 8;
    public static final int SIZE_OFFSET = LAST_OFFSET_OFFSET + LAST_OFFSET_LENGTH;
    public static final int SIZE_LENGTH = 8;
    public static final int OLDEST_OFFSET = SIZE_OFFSET + SIZE_LENGTH;
    public static final int OLDEST_LENGTH = 8;
    public static final int NEWEST_OFFSET = OLDEST_OFFSET + OLDEST_LENGTH;
    public static final int NEWEST_LENGTH = 8;
    public static final int OBJECT_CRC_OFFSET = NEWEST_OFFSET + NEWEST_LENGTH;
    public static final int OBJECT_CRC_LENGTH = 4;
    public static final int KEY_LENGTH_OFFSET = OBJECT_CRC_OFFSET + OBJECT_CRC_LENGTH;
    public static final int KEY_LENGTH_LENGTH = 2;
    /** Where the key starts; also an entry's length without its key. */
    public static final int KEY_OFFSET = KEY_LENGTH_OFFSET + KEY_LENGTH_LENGTH;
    public static final int ENTRY_FIXED_LENGTH = KEY_OFFSET;

    /** The trailing CRC. */
    public static final int CRC_LENGTH = SideFileFrame.CRC_LENGTH;
    /** The shortest manifest: a header, no entries, the CRC. */
    public static final int MIN_LENGTH = HEADER_LENGTH + CRC_LENGTH;

    private static final SideFileFrame FRAME = SideFileFrame.variable("manifest", MAGIC, VERSION, MIN_LENGTH);

    private ManifestCodec() {
    }

    /** The manifest's bytes, exactly as stored. */
    public static byte[] encode(Manifest manifest) {
        int count = manifest.size();
        byte[][] keys = new byte[count][];
        long length = MIN_LENGTH;
        int i = 0;
        for (ManifestEntry e : manifest.entries()) {
            // ManifestEntry refuses lone surrogates, so this encoding is exact, never a '?' replacement.
            keys[i] = e.objectKey().getBytes(StandardCharsets.UTF_8);
            length += ENTRY_FIXED_LENGTH + keys[i].length;
            i++;
        }
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("a manifest of " + count + " entries takes " + length
                    + " bytes, more than one array holds");
        }
        ByteBuffer buf = FRAME.start((int) length);
        buf.putInt(COUNT_OFFSET, count);
        int p = HEADER_LENGTH;
        i = 0;
        for (ManifestEntry e : manifest.entries()) {
            buf.putLong(p + SEGMENT_ID_OFFSET, e.segmentId());
            buf.putLong(p + BASE_OFFSET_OFFSET, e.baseOffset());
            buf.putLong(p + LAST_OFFSET_OFFSET, e.lastOffset());
            buf.putLong(p + SIZE_OFFSET, e.sizeBytes());
            buf.putLong(p + OLDEST_OFFSET, e.oldestTimestampMicros());
            buf.putLong(p + NEWEST_OFFSET, e.newestTimestampMicros());
            buf.putInt(p + OBJECT_CRC_OFFSET, e.objectCrc32());
            buf.putShort(p + KEY_LENGTH_OFFSET, (short) keys[i].length);
            buf.put(p + KEY_OFFSET, keys[i]);
            p += ENTRY_FIXED_LENGTH + keys[i].length;
            i++;
        }
        return FRAME.seal(buf);
    }

    /**
     * Decodes a whole manifest file: the bytes from {@code bytes}' position to its limit (not consumed).
     * {@code site} names the shard and file; its position is ignored, every error carries its own.
     */
    public static Manifest decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = FRAME.open(bytes, site);
        int crcAt = FRAME.crcOffset(buf);
        long count = Integer.toUnsignedLong(buf.getInt(COUNT_OFFSET));
        long entryBytes = crcAt - HEADER_LENGTH;
        if (count * ENTRY_FIXED_LENGTH > entryBytes) {
            // count < 2^32 and ENTRY_FIXED_LENGTH < 2^6, so the product cannot overflow a long.
            throw CorruptionException.truncated(site.at(HEADER_LENGTH), count + " entries",
                    count * ENTRY_FIXED_LENGTH, entryBytes);
        }
        ManifestEntry[] entries = new ManifestEntry[(int) count];
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        int p = HEADER_LENGTH;
        for (int i = 0; i < count; i++) {
            int left = crcAt - p;
            if (left < ENTRY_FIXED_LENGTH) {
                throw CorruptionException.truncated(site.at(p), "entry " + i, ENTRY_FIXED_LENGTH, left);
            }
            int keyLength = Short.toUnsignedInt(buf.getShort(p + KEY_LENGTH_OFFSET));
            int keyAt = p + KEY_OFFSET;
            if (keyLength > crcAt - keyAt) {
                throw CorruptionException.truncated(site.at(keyAt), "key of entry " + i, keyLength, crcAt - keyAt);
            }
            long base = buf.getLong(p + BASE_OFFSET_OFFSET);
            long last = buf.getLong(p + LAST_OFFSET_OFFSET);
            if (Long.compareUnsigned(base, last) > 0) {
                throw content(site, p + BASE_OFFSET_OFFSET, "entry " + i + " has base offset "
                        + Long.toUnsignedString(base) + " above its last offset " + Long.toUnsignedString(last));
            }
            if (i > 0 && Long.compareUnsigned(base, entries[i - 1].lastOffset()) <= 0) {
                throw content(site, p + BASE_OFFSET_OFFSET, "entry " + i + " has base offset "
                        + Long.toUnsignedString(base) + ", not above entry " + (i - 1) + "'s last offset "
                        + Long.toUnsignedString(entries[i - 1].lastOffset())
                        + " (entries ascend by base offset and never overlap)");
            }
            String key = decodeKey(utf8, buf.slice(keyAt, keyLength), site, keyAt, i);
            String keyProblem = ManifestEntry.keyProblem(key);
            if (keyProblem != null) {
                throw content(site, keyAt, "entry " + i + ": " + keyProblem);
            }
            entries[i] = new ManifestEntry(buf.getLong(p + SEGMENT_ID_OFFSET), base, last, buf.getLong(p + SIZE_OFFSET),
                    buf.getLong(p + OLDEST_OFFSET), buf.getLong(p + NEWEST_OFFSET), buf.getInt(p + OBJECT_CRC_OFFSET),
                    key);
            p = keyAt + keyLength;
        }
        if (p != crcAt) {
            throw content(site, p, (crcAt - p) + " bytes after the last of " + count + " entries, before the crc");
        }
        return Manifest.ofOrdered(entries);
    }

    private static String decodeKey(CharsetDecoder utf8, ByteBuffer keyBytes, CorruptionSite site, int keyAt, int entry)
            throws CorruptionException {
        utf8.reset();
        // UTF-8 never decodes to more chars than it has bytes, and keyBytes is at most 65535 long.
        CharBuffer chars = CharBuffer.allocate(keyBytes.remaining());
        CoderResult result = utf8.decode(keyBytes, chars, true);
        if (!result.isError()) {
            result = utf8.flush(chars);
        }
        if (result.isError()) {
            // On a malformed sequence the decoder stops with the input at its first byte.
            throw content(site, keyAt + keyBytes.position(), "key of entry " + entry
                    + " is not valid UTF-8: a malformed sequence of " + result.length() + " byte(s) at key byte "
                    + keyBytes.position());
        }
        return chars.flip().toString();
    }

    private static CorruptionException content(CorruptionSite site, long position, String detail) {
        return CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(position), detail);
    }
}
