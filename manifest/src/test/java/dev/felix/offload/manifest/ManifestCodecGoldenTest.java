package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exact bytes of {@code offload.manifest}, typed field by field from the spec's layout (section
 * "offload.manifest: segments with a copy in the object store"), never produced by the codec. The
 * trailing CRCs were computed outside Java (Python's zlib.crc32) and each fixture re-checks its own
 * with {@link CRC32}, so a mistyped byte fails the fixture, not the codec.
 */
class ManifestCodecGoldenTest {

    private static final CorruptionSite SITE = CorruptionSite.inFile("golden", ManifestStore.FILE_NAME, 0);

    /** Hex bytes, whitespace ignored, {@code #} starting a comment to the end of the line. */
    static byte[] hex(String annotated) {
        StringBuilder digits = new StringBuilder();
        for (String line : annotated.split("\n")) {
            int hash = line.indexOf('#');
            digits.append((hash < 0 ? line : line.substring(0, hash)).replaceAll("\\s+", ""));
        }
        return HexFormat.of().parseHex(digits);
    }

    static final byte[] EMPTY = hex("""
            46 4C 4F 46   # magic "FLOF"
            00 01         # version 1
            00 00         # reserved
            00 00 00 00   # count 0
            1C 97 72 43   # crc32 over bytes 0..12
            """);

    static final ManifestEntry OLD_KEY_ENTRY = new ManifestEntry(0, 0, 99, 4096,
            1_700_000_000_000_000L, 1_700_000_000_250_000L, 0x1234ABCD,
            "acme_default_orders_0-0d3aed4b998d2798/00000000000000000000-00000000000000000000.segment");

    static final ManifestEntry NODE_KEY_ENTRY = new ManifestEntry(2, 150, 199, 2048,
            1_700_000_000_500_000L, 1_700_000_000_750_000L, 0x89ABCDEF,
            "node-1/acme_default_orders_0-0d3aed4b998d2798/00000000000000000150-00000000000000000002.segment");

    /**
     * Two entries with a gap between them (offsets 100..149 were never copied). The first has a key
     * as 0.6.0-preview.3 wrote it, without a node id; the second one as later builds write it.
     */
    static final byte[] TWO_ENTRIES = hex("""
            46 4C 4F 46               # magic "FLOF"
            00 01                     # version 1
            00 00                     # reserved
            00 00 00 02               # count 2
            # entry 0, at byte 12
            00 00 00 00 00 00 00 00   # segment id 0
            00 00 00 00 00 00 00 00   # base offset 0
            00 00 00 00 00 00 00 63   # last offset 99
            00 00 00 00 00 00 10 00   # size 4096
            00 06 0A 24 18 1E 40 00   # oldest 1700000000000000
            00 06 0A 24 18 22 10 90   # newest 1700000000250000
            12 34 AB CD               # object crc32
            00 58                     # key length 88
            61 63 6D 65 5F 64 65 66 61 75 6C 74 5F 6F 72 64 # acme_default_ord
            65 72 73 5F 30 2D 30 64 33 61 65 64 34 62 39 39 # ers_0-0d3aed4b99
            38 64 32 37 39 38 2F 30 30 30 30 30 30 30 30 30 # 8d2798/000000000
            30 30 30 30 30 30 30 30 30 30 30 2D 30 30 30 30 # 00000000000-0000
            30 30 30 30 30 30 30 30 30 30 30 30 30 30 30 30 # 0000000000000000
            2E 73 65 67 6D 65 6E 74                         # .segment
            # entry 1, at byte 154
            00 00 00 00 00 00 00 02   # segment id 2
            00 00 00 00 00 00 00 96   # base offset 150
            00 00 00 00 00 00 00 C7   # last offset 199
            00 00 00 00 00 00 08 00   # size 2048
            00 06 0A 24 18 25 E1 20   # oldest 1700000000500000
            00 06 0A 24 18 29 B1 B0   # newest 1700000000750000
            89 AB CD EF               # object crc32
            00 5F                     # key length 95
            6E 6F 64 65 2D 31 2F 61 63 6D 65 5F 64 65 66 61 # node-1/acme_defa
            75 6C 74 5F 6F 72 64 65 72 73 5F 30 2D 30 64 33 # ult_orders_0-0d3
            61 65 64 34 62 39 39 38 64 32 37 39 38 2F 30 30 # aed4b998d2798/00
            30 30 30 30 30 30 30 30 30 30 30 30 30 30 30 31 # 0000000000000001
            35 30 2D 30 30 30 30 30 30 30 30 30 30 30 30 30 # 50-0000000000000
            30 30 30 30 30 30 32 2E 73 65 67 6D 65 6E 74    # 0000002.segment
            # at byte 303
            BE 45 74 9C               # crc32 over bytes 0..303
            """);

    static final ManifestEntry UNSIGNED_ENTRY = new ManifestEntry(-1L, 0xFFFF_FFFF_FFFF_FFF0L, -1L,
            Long.MIN_VALUE, 0, -1L, -1, "ключ/é");

    /** Values with the top bit set, which must be written and read as u64, and a key that is not ASCII. */
    static final byte[] UNSIGNED_AND_UTF8 = hex("""
            46 4C 4F 46               # magic "FLOF"
            00 01                     # version 1
            00 00                     # reserved
            00 00 00 01               # count 1
            FF FF FF FF FF FF FF FF   # segment id 2^64-1
            FF FF FF FF FF FF FF F0   # base offset 2^64-16
            FF FF FF FF FF FF FF FF   # last offset 2^64-1
            80 00 00 00 00 00 00 00   # size 2^63
            00 00 00 00 00 00 00 00   # oldest 0
            FF FF FF FF FF FF FF FF   # newest 2^64-1
            FF FF FF FF               # object crc32
            00 0B                     # key length 11 (6 chars)
            D0 BA D0 BB D1 8E D1 87   # "ключ", two bytes each
            2F                        # "/"
            C3 A9                     # "é"
            F8 A6 12 12               # crc32 over bytes 0..77
            """);

    @Test
    void fixturesCarryTheCrcOfTheirOwnBytes() {
        for (byte[] fixture : List.of(EMPTY, TWO_ENTRIES, UNSIGNED_AND_UTF8)) {
            CRC32 crc = new CRC32();
            crc.update(fixture, 0, fixture.length - 4);
            assertThat(ByteBuffer.wrap(fixture).getInt(fixture.length - 4)).isEqualTo((int) crc.getValue());
        }
        assertThat(TWO_ENTRIES).hasSize(307);
        assertThat(UNSIGNED_AND_UTF8).hasSize(81);
    }

    @Test
    void emptyManifestEncodesToTheSpecBytes() throws CorruptionException {
        assertThat(ManifestCodec.encode(Manifest.empty())).containsExactly(EMPTY);
        assertThat(ManifestCodec.decode(ByteBuffer.wrap(EMPTY), SITE)).isEqualTo(Manifest.empty());
    }

    @Test
    void twoEntriesWithAGapEncodeToTheSpecBytes() {
        Manifest m = Manifest.of(List.of(OLD_KEY_ENTRY, NODE_KEY_ENTRY));
        assertThat(ManifestCodec.encode(m)).containsExactly(TWO_ENTRIES);
    }

    @Test
    void twoEntriesDecodeWithBothKeysAsWritten() throws CorruptionException {
        Manifest m = ManifestCodec.decode(ByteBuffer.wrap(TWO_ENTRIES), SITE);
        assertThat(m.entries()).containsExactly(OLD_KEY_ENTRY, NODE_KEY_ENTRY);
        // The preview key has no node id and is kept exactly, not rebuilt from the other fields.
        assertThat(m.entries().get(0).objectKey()).startsWith("acme_default_orders_0-");
        assertThat(m.entries().get(1).objectKey()).startsWith("node-1/");
    }

    @Test
    void topBitValuesAndUtf8KeysEncodeToTheSpecBytes() throws CorruptionException {
        Manifest m = Manifest.of(List.of(UNSIGNED_ENTRY));
        assertThat(ManifestCodec.encode(m)).containsExactly(UNSIGNED_AND_UTF8);
        ManifestEntry e = ManifestCodec.decode(ByteBuffer.wrap(UNSIGNED_AND_UTF8), SITE).entries().get(0);
        assertThat(e).isEqualTo(UNSIGNED_ENTRY);
        assertThat(Long.toUnsignedString(e.segmentId())).isEqualTo("18446744073709551615");
        assertThat(Long.toUnsignedString(e.sizeBytes())).isEqualTo("9223372036854775808");
        assertThat(e.objectKey()).isEqualTo("\u043a\u043b\u044e\u0447/\u00e9");
    }

    @Test
    void decodingReadsOnlyBetweenPositionAndLimit() throws CorruptionException {
        byte[] padded = new byte[TWO_ENTRIES.length + 10];
        Arrays.fill(padded, (byte) 0x77);
        System.arraycopy(TWO_ENTRIES, 0, padded, 5, TWO_ENTRIES.length);
        ByteBuffer window = ByteBuffer.wrap(padded).position(5).limit(5 + TWO_ENTRIES.length);
        assertThat(ManifestCodec.decode(window, SITE).entries()).containsExactly(OLD_KEY_ENTRY, NODE_KEY_ENTRY);
        assertThat(window.position()).isEqualTo(5);
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(ManifestCodec.HEADER_LENGTH).isEqualTo(12);
        assertThat(ManifestCodec.COUNT_OFFSET).isEqualTo(8);
        assertThat(ManifestCodec.OBJECT_CRC_OFFSET).isEqualTo(48);
        assertThat(ManifestCodec.KEY_LENGTH_OFFSET).isEqualTo(52);
        assertThat(ManifestCodec.ENTRY_FIXED_LENGTH).isEqualTo(54);
        assertThat(ManifestCodec.MIN_LENGTH).isEqualTo(16);
        assertThat(ManifestCodec.MAGIC).isEqualTo(0x464C4F46);
    }
}
