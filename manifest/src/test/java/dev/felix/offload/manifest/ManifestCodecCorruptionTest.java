package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every way a manifest can be damaged ends in the one typed error, with the kind, the site (shard,
 * file, byte position) and, for checksums, the stored and computed values; never another exception
 * and never an allocation sized by a damaged length.
 */
class ManifestCodecCorruptionTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    /**
     * The most a single decode of these small files may allocate: the decoded entries, the exception
     * and its message take a few KiB. An allocation sized by a damaged count or key length (an array
     * of 2^24 entries, a 64 KiB key buffer) would exceed it.
     */
    private static final long ALLOCATION_LIMIT = 48 * 1024;

    private static final ManifestEntry E0 = new ManifestEntry(0, 0, 99, 4096, 1_700_000_000_000_000L,
            1_700_000_000_250_000L, 0x1234ABCD, SHARD + "/00000000000000000000-00000000000000000000.segment");
    private static final ManifestEntry E1 = new ManifestEntry(1, 100, 180, 3000, 1_700_000_000_300_000L,
            1_700_000_000_400_000L, 0x0BADF00D, "node-1/" + SHARD + "/00000000000000000100-00000000000000000001.segment");
    private static final ManifestEntry E2 = new ManifestEntry(3, 250, 260, 700, 1_700_000_000_900_000L,
            1_700_000_000_950_000L, 0xFEEDFACE, "n\u00f6de-2/" + SHARD + "/00000000000000000250-00000000000000000003.segment");

    /** Three entries: adjacent, then a gap; the last key not ASCII. */
    private static final byte[] THREE = ManifestCodec.encode(Manifest.of(List.of(E0, E1, E2)));
    private static final int S0 = ManifestCodec.HEADER_LENGTH;
    private static final int S1 = S0 + ManifestCodec.ENTRY_FIXED_LENGTH + utf8(E0.objectKey()).length;
    private static final int S2 = S1 + ManifestCodec.ENTRY_FIXED_LENGTH + utf8(E1.objectKey()).length;
    private static final int CRC_AT = THREE.length - ManifestCodec.CRC_LENGTH;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static CorruptionSite site(long position) {
        return CorruptionSite.inFile(SHARD, ManifestStore.FILE_NAME, position);
    }

    private static int crc32(byte[] bytes, int from, int to) {
        CRC32 crc = new CRC32();
        crc.update(bytes, from, to - from);
        return (int) crc.getValue();
    }

    /** {@code bytes} with its last four bytes replaced by the CRC of everything before them. */
    private static byte[] resealed(byte[] bytes) {
        byte[] copy = bytes.clone();
        ByteBuffer.wrap(copy).putInt(copy.length - 4, crc32(copy, 0, copy.length - 4));
        return copy;
    }

    /** {@code body} followed by its CRC. */
    private static byte[] sealed(byte[] body) {
        byte[] file = Arrays.copyOf(body, body.length + 4);
        ByteBuffer.wrap(file).putInt(body.length, crc32(body, 0, body.length));
        return file;
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @BeforeAll
    static void allocationIsMeasurable() throws CorruptionException {
        assertThat(THREADS.isThreadAllocatedMemorySupported()).isTrue();
        THREADS.setThreadAllocatedMemoryEnabled(true);
        // Load and initialize the classes decoding uses, so their one-off allocations are not counted.
        decode(THREE);
    }

    private static Manifest decode(byte[] bytes) throws CorruptionException {
        return ManifestCodec.decode(ByteBuffer.wrap(bytes), site(0));
    }

    private record Outcome(Manifest manifest, CorruptionException error, long allocated) {
    }

    /**
     * Decodes, allowing only success or the typed error, and measures what the thread allocated. The
     * decode runs twice and the second run is measured: the first links each string concatenation
     * of the error path it takes (a one-off cost of the JVM, not of the decoder), and the second
     * takes the same path, allocating exactly what the decoder itself asks for.
     */
    private static Outcome outcome(byte[] bytes) {
        attempt(bytes);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        Object result = attempt(bytes);
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated decoding %d bytes: %s", bytes.length, result)
                .isLessThan(ALLOCATION_LIMIT);
        return result instanceof CorruptionException e
                ? new Outcome(null, e, allocated)
                : new Outcome((Manifest) result, null, allocated);
    }

    private static Object attempt(byte[] bytes) {
        try {
            return decode(bytes);
        } catch (CorruptionException e) {
            return e;
        } catch (Throwable t) {
            throw new AssertionError("decoding " + HexFormat.of().formatHex(bytes) + " threw " + t, t);
        }
    }

    private static CorruptionException failure(byte[] bytes) {
        Outcome o = outcome(bytes);
        if (o.error() == null) {
            fail("decoded " + HexFormat.of().formatHex(bytes) + " to " + o.manifest());
        }
        return o.error();
    }

    private static CorruptionException failure(byte[] bytes, CorruptionKind kind, long position) {
        CorruptionException e = failure(bytes);
        assertThat(e.kind()).as(e.getMessage()).isEqualTo(kind);
        assertThat(e.site()).as(e.getMessage()).isEqualTo(site(position));
        assertThat(e.getMessage()).contains("file " + ManifestStore.FILE_NAME, "shard " + SHARD, "byte " + position);
        return e;
    }

    @Test
    void theFixtureDecodes() throws CorruptionException {
        assertThat(decode(THREE).entries()).containsExactly(E0, E1, E2);
        assertThat(THREE.length).isEqualTo(S2 + ManifestCodec.ENTRY_FIXED_LENGTH + utf8(E2.objectKey()).length + 4);
    }

    // ---- every byte, every length ----

    @Test
    void everyBitFlipIsReportedAtTheFieldThatCatchesIt() {
        for (int i = 0; i < THREE.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = THREE.clone();
                bad[i] ^= (byte) (1 << bit);
                if (i < ManifestCodec.VERSION_OFFSET) {
                    failure(bad, CorruptionKind.SIDE_FILE_MAGIC, 0);
                } else if (i < ManifestCodec.RESERVED_OFFSET) {
                    failure(bad, CorruptionKind.SIDE_FILE_VERSION, ManifestCodec.VERSION_OFFSET);
                } else {
                    CorruptionException e = failure(bad, CorruptionKind.SIDE_FILE_CHECKSUM, CRC_AT);
                    assertThat(e.storedChecksum()).isEqualTo(Integer.toUnsignedLong(ByteBuffer.wrap(bad).getInt(CRC_AT)));
                    assertThat(e.computedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(bad, 0, CRC_AT)));
                    assertThat(e.storedChecksum()).isNotEqualTo(e.computedChecksum());
                }
            }
        }
    }

    @Test
    void everyByteFlipWithAFreshCrcIsATypedErrorOrAManifestThatEncodesBackToTheSameBytes() {
        int decoded = 0;
        for (int i = 0; i < CRC_AT; i++) {
            for (int mask : new int[] {0x01, 0x80, 0xFF}) {
                byte[] bad = THREE.clone();
                bad[i] ^= (byte) mask;
                bad = resealed(bad);
                Outcome o = outcome(bad);
                if (o.error() != null) {
                    assertThat(o.error().kind()).as(o.error().getMessage()).isIn(CorruptionKind.SIDE_FILE_MAGIC,
                            CorruptionKind.SIDE_FILE_VERSION, CorruptionKind.SIDE_FILE_CONTENT, CorruptionKind.TRUNCATED);
                    assertThat(o.error().site().file()).isEqualTo(ManifestStore.FILE_NAME);
                    assertThat(o.error().site().position()).isBetween(0L, (long) CRC_AT);
                } else {
                    // A changed size, timestamp, object crc or key character is still a valid manifest.
                    assertThat(ManifestCodec.encode(o.manifest())).containsExactly(bad);
                    decoded++;
                }
            }
        }
        assertThat(decoded).as("flips that leave a valid manifest").isPositive();
    }

    @Test
    void everyCutIsTruncatedBelowTheMinimumAndAChecksumErrorAbove() {
        for (int length = 0; length < THREE.length; length++) {
            byte[] cut = Arrays.copyOf(THREE, length);
            if (length < ManifestCodec.MIN_LENGTH) {
                CorruptionException e = failure(cut, CorruptionKind.TRUNCATED, 0);
                assertThat(e.needed()).isEqualTo(ManifestCodec.MIN_LENGTH);
                assertThat(e.available()).isEqualTo(length);
            } else {
                failure(cut, CorruptionKind.SIDE_FILE_CHECKSUM, length - 4);
            }
        }
    }

    @Test
    void everyCutWithAFreshCrcIsTruncatedWhereTheBytesRunOut() {
        int[] starts = {S0, S1, S2, CRC_AT};
        for (int length = 0; length < CRC_AT; length++) {
            byte[] file = sealed(Arrays.copyOf(THREE, length));
            long expectedAt;
            if (file.length < ManifestCodec.MIN_LENGTH) {
                expectedAt = 0;
            } else if (length - ManifestCodec.HEADER_LENGTH < 3 * ManifestCodec.ENTRY_FIXED_LENGTH) {
                expectedAt = ManifestCodec.HEADER_LENGTH; // the count alone promises more than there is
            } else {
                int entry = 0;
                while (starts[entry + 1] <= length) {
                    entry++;
                }
                boolean fixedPartFits = length - starts[entry] >= ManifestCodec.ENTRY_FIXED_LENGTH;
                expectedAt = fixedPartFits ? starts[entry] + ManifestCodec.KEY_OFFSET : starts[entry];
            }
            failure(file, CorruptionKind.TRUNCATED, expectedAt);
        }
    }

    // ---- header rules ----

    @ParameterizedTest(name = "magic 0x{0}")
    @ValueSource(ints = {0x464C5347 /* FLSG */, 0x464C4550 /* FLEP */, 0, 0x464F4C46 /* byte-swapped */})
    void anotherMagicIsSideFileMagicAtByte0(int magic) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putInt(0, magic);
        CorruptionException e = failure(resealed(bad), CorruptionKind.SIDE_FILE_MAGIC, 0);
        assertThat(e.getMessage()).contains(String.format("0x%08x", magic));
    }

    @ParameterizedTest(name = "version {0}")
    @ValueSource(ints = {0, 2, 3, 0x0100, 0xFFFF})
    void anotherVersionIsSideFileVersionNamingIt(int version) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putShort(4, (short) version);
        CorruptionException e = failure(resealed(bad), CorruptionKind.SIDE_FILE_VERSION, 4);
        assertThat(e.getMessage()).contains("version " + version);
    }

    @Test
    void theVersionIsCheckedBeforeTheCrcBecauseAnotherVersionNeedNotEndInOne() {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putShort(4, (short) 2);
        bad[bad.length - 1] ^= 0x55;
        failure(bad, CorruptionKind.SIDE_FILE_VERSION, 4);
    }

    @Test
    void aBadCrcCarriesTheStoredAndComputedValues() {
        byte[] bad = THREE.clone();
        int good = ByteBuffer.wrap(THREE).getInt(CRC_AT);
        ByteBuffer.wrap(bad).putInt(CRC_AT, good ^ 0x00FF0000);
        CorruptionException e = failure(bad, CorruptionKind.SIDE_FILE_CHECKSUM, CRC_AT);
        assertThat(e.storedChecksum()).isEqualTo(Integer.toUnsignedLong(good ^ 0x00FF0000));
        assertThat(e.computedChecksum()).isEqualTo(Integer.toUnsignedLong(good));
        assertThat(e.getMessage()).contains(String.format("%08x", good ^ 0x00FF0000), String.format("%08x", good));
    }

    @ParameterizedTest(name = "reserved 0x{0}")
    @ValueSource(ints = {1, 0x8000, 0xFFFF})
    void nonZeroReservedIsSideFileContentAtByte6(int reserved) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putShort(6, (short) reserved);
        failure(resealed(bad), CorruptionKind.SIDE_FILE_CONTENT, 6);
    }

    // ---- bounded decoding ----

    @ParameterizedTest(name = "count 0x{0}")
    @ValueSource(ints = {0xFFFF_FFFF, 0x8000_0000, 0x0100_0003, 0x0001_0000, 9})
    void aCountTheBytesCannotHoldIsTruncatedBeforeAnythingIsAllocated(int count) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putInt(8, count);
        CorruptionException e = failure(resealed(bad), CorruptionKind.TRUNCATED, 12);
        assertThat(e.needed()).isEqualTo(Integer.toUnsignedLong(count) * ManifestCodec.ENTRY_FIXED_LENGTH);
        assertThat(e.available()).isEqualTo(CRC_AT - 12);
    }

    @Test
    void aCountOneTooHighIsTruncatedWhereTheMissingEntryWouldStart() {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putInt(8, 4);
        CorruptionException e = failure(resealed(bad), CorruptionKind.TRUNCATED, CRC_AT);
        assertThat(e.needed()).isEqualTo(ManifestCodec.ENTRY_FIXED_LENGTH);
        assertThat(e.available()).isZero();
    }

    @Test
    void aCountOneTooLowLeavesTrailingBytes() {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putInt(8, 2);
        CorruptionException e = failure(resealed(bad), CorruptionKind.SIDE_FILE_CONTENT, S2);
        assertThat(e.getMessage()).contains((CRC_AT - S2) + " bytes after the last of 2 entries");
    }

    @ParameterizedTest(name = "key length 0x{0}")
    @ValueSource(ints = {0xFFFF, 0x8000, 1000})
    void aKeyLengthPastTheEndIsTruncatedBeforeTheKeyIsAllocated(int keyLength) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putShort(S2 + ManifestCodec.KEY_LENGTH_OFFSET, (short) keyLength);
        CorruptionException e = failure(resealed(bad), CorruptionKind.TRUNCATED, S2 + ManifestCodec.KEY_OFFSET);
        assertThat(e.needed()).isEqualTo(keyLength);
        assertThat(e.available()).isEqualTo(CRC_AT - S2 - ManifestCodec.KEY_OFFSET);
    }

    @Test
    void bytesBetweenTheLastEntryAndTheCrcAreSideFileContent() {
        byte[] body = Arrays.copyOf(THREE, CRC_AT + 3);
        CorruptionException e = failure(sealed(body), CorruptionKind.SIDE_FILE_CONTENT, CRC_AT);
        assertThat(e.getMessage()).contains("3 bytes after the last of 3 entries");
    }

    // ---- entry rules ----

    private static byte[] withLong(int position, long value) {
        byte[] bad = THREE.clone();
        ByteBuffer.wrap(bad).putLong(position, value);
        return resealed(bad);
    }

    @Test
    void aBaseAboveItsLastOffsetIsSideFileContentAtTheBase() {
        CorruptionException e = failure(withLong(S1 + ManifestCodec.BASE_OFFSET_OFFSET, 181),
                CorruptionKind.SIDE_FILE_CONTENT, S1 + ManifestCodec.BASE_OFFSET_OFFSET);
        assertThat(e.getMessage()).contains("entry 1", "base offset 181", "last offset 180");
    }

    @Test
    void comparisonsAreUnsignedSoATopBitLastOffsetIsAboveItsBase() throws CorruptionException {
        // last = 2^63 is above base 250 as u64 (it would be below as a signed long).
        Manifest m = decode(withLong(S2 + ManifestCodec.LAST_OFFSET_OFFSET, Long.MIN_VALUE));
        assertThat(m.entries().get(2).lastOffset()).isEqualTo(Long.MIN_VALUE);
        // base = 2^63 with last 180 is a base above its last.
        failure(withLong(S1 + ManifestCodec.BASE_OFFSET_OFFSET, Long.MIN_VALUE),
                CorruptionKind.SIDE_FILE_CONTENT, S1 + ManifestCodec.BASE_OFFSET_OFFSET);
    }

    @Test
    void overlappingEntriesAreSideFileContentAtTheLaterBase() {
        // Entry 1 starting at entry 0's last offset shares offset 99 with it.
        CorruptionException e = failure(withLong(S1 + ManifestCodec.BASE_OFFSET_OFFSET, 99),
                CorruptionKind.SIDE_FILE_CONTENT, S1 + ManifestCodec.BASE_OFFSET_OFFSET);
        assertThat(e.getMessage()).contains("entry 1", "never overlap");
    }

    @Test
    void entriesOutOfOrderAreSideFileContent() {
        byte[] bad = THREE.clone();
        ByteBuffer b = ByteBuffer.wrap(bad);
        b.putLong(S2 + ManifestCodec.BASE_OFFSET_OFFSET, 10);
        b.putLong(S2 + ManifestCodec.LAST_OFFSET_OFFSET, 20);
        failure(resealed(bad), CorruptionKind.SIDE_FILE_CONTENT, S2 + ManifestCodec.BASE_OFFSET_OFFSET);
    }

    @Test
    void equalBaseOffsetsAreSideFileContent() {
        byte[] bad = THREE.clone();
        ByteBuffer b = ByteBuffer.wrap(bad);
        b.putLong(S2 + ManifestCodec.BASE_OFFSET_OFFSET, 100);
        b.putLong(S2 + ManifestCodec.LAST_OFFSET_OFFSET, 300);
        failure(resealed(bad), CorruptionKind.SIDE_FILE_CONTENT, S2 + ManifestCodec.BASE_OFFSET_OFFSET);
    }

    @Test
    void adjacentEntriesAndGapsAreBothValid() throws CorruptionException {
        // E0 ends at 99 and E1 starts at 100; E1 ends at 180 and E2 starts at 250.
        assertThat(decode(THREE).entries()).containsExactly(E0, E1, E2);
    }

    /** A one-entry manifest with exactly these key bytes. */
    private static byte[] withKey(byte[] key) {
        ByteBuffer body = ByteBuffer.allocate(ManifestCodec.HEADER_LENGTH + ManifestCodec.ENTRY_FIXED_LENGTH + key.length);
        body.putInt(ManifestCodec.MAGIC).putShort((short) 1).putShort((short) 0).putInt(1);
        body.putLong(0).putLong(0).putLong(9).putLong(100).putLong(1).putLong(2).putInt(7).putShort((short) key.length);
        body.put(key);
        return sealed(body.array());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "41 C3 28 42",    // a lead byte followed by no continuation
            "41 42 80",       // a continuation byte with no lead
            "C0 80",          // overlong encoding of U+0000
            "E0 80 AF",       // overlong encoding of '/'
            "ED A0 80",       // a UTF-16 surrogate, U+D800
            "F4 90 80 80",    // above U+10FFFF
            "F8 88 80 80 80", // a five-byte form
            "FF",
            "41 E2 82"        // a sequence the key ends inside
    })
    void aKeyThatIsNotUtf8IsSideFileContentAtItsFirstBadByte(String keyHex) {
        byte[] key = HexFormat.of().parseHex(keyHex.replace(" ", ""));
        int firstBad = keyHex.startsWith("41 42") ? 2 : keyHex.startsWith("41") ? 1 : 0;
        int keyAt = ManifestCodec.HEADER_LENGTH + ManifestCodec.KEY_OFFSET;
        CorruptionException e = failure(withKey(key), CorruptionKind.SIDE_FILE_CONTENT, keyAt + firstBad);
        assertThat(e.getMessage()).contains("not valid UTF-8");
    }

    @Test
    void validUtf8KeysOfEveryLengthDecode() throws CorruptionException {
        String key = "a\u00e9\u20ac\uD83D\uDE00/b"; // one, two, three and four bytes
        assertThat(decode(withKey(utf8(key))).entries().get(0).objectKey()).isEqualTo(key);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"", "..", "../victim.segment", "node/../../victim.segment", "/etc/passwd", "./a", "a/.",
            "a//b", "a/", "a\\b", "..\\..\\x", "a\u0000b", "a\nb", "a\u007fb"})
    void aKeyThatIsNotARelativeObjectNameIsSideFileContentAtTheKey(String key) {
        // Keys are kept as written, but one that is empty, absolute or climbs out with '..' can only be
        // damage or tampering: using it would name something outside the store.
        int keyAt = ManifestCodec.HEADER_LENGTH + ManifestCodec.KEY_OFFSET;
        CorruptionException e = failure(withKey(utf8(key)), CorruptionKind.SIDE_FILE_CONTENT, keyAt);
        assertThat(e.getMessage()).contains("entry 0: object key");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"a", "..a", "a..", "a/..b/c", "n\u00f6de/x y/00000000000000000000-00000000000000000000.segment",
            "shard/00000000000000000100-00000000000000000001.segment", ".hidden/x"})
    void keysWithDotsThatClimbNowhereDecode(String key) throws CorruptionException {
        assertThat(decode(withKey(utf8(key))).entries().get(0).objectKey()).isEqualTo(key);
    }

    @Test
    void aKeyOfTheLargestLengthDecodes() throws CorruptionException {
        byte[] key = new byte[ManifestEntry.MAX_KEY_BYTES];
        Arrays.fill(key, (byte) 'k');
        assertThat(decode(withKey(key)).entries().get(0).objectKey()).hasSize(0xFFFF);
    }
}
