package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32c;
import static dev.felix.offload.log.side.SideFileBytes.hex;
import static dev.felix.offload.log.side.SideFileBytes.u32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** {@code keys.idx}: exact bytes, round trips, every structural check, the checks against the log, and the derived load rule. */
class KeyIndexFileTest {

    private static final String SHARD = "acme_default_sessions_0-1122334455667788";
    private static final CorruptionSite SITE = CorruptionSite.inFile(SHARD, KeyIndexFile.FILE_NAME, 0);
    private static final long ALLOCATION_LIMIT = 32 * 1024;

    @TempDir
    Path tmp;

    /**
     * Three entries in composite-key order: "a", then the byte 0xFF (above "a" unsigned, below it signed),
     * then "ab" (a longer key sorts after every shorter one, its key_len being compared first).
     */
    private static final byte[] GOLDEN_BODY = hex("""
            46 58 49 58               # magic "FXIX"
            00 01                     # format 1
            00                        # store 0: a cache
            00 00 00 00 00 00 00 0A   # covered_through 10
            00 00 00 00 00 00 00 03   # entry_count 3
            00 00 00 00 00 00 04 D2   # log_bytes 1234
            CA FE BA BE               # last_checksum
            # entry 0, at byte 35
            00 00 00 06               # key_len 6
            00 00 00 00 01 61         #   composite key: kind 0, key_len 1, "a"
            00 00 00 00 00 00 00 03   # offset 3
            00 00 00 00 00 00 00 01   # version 1
            00 00 00 00 00 00 00 00   # expires_at_millis: none
            00 00 00 05               # bytes 5
            # entry 1, at byte 73
            00 00 00 06               # key_len 6
            00 00 00 00 01 FF         #   composite key: kind 0, key_len 1, 0xFF
            00 00 00 00 00 00 00 09   # offset 9
            FF FF FF FF FF FF FF FF   # version 2^64-1
            00 00 01 8B CF E5 68 00   # expires_at_millis 1700000000000
            00 00 10 00               # bytes 4096
            # entry 2, at byte 111
            00 00 00 07               # key_len 7
            00 00 00 00 02 61 62      #   composite key: kind 0, key_len 2, "ab"
            00 00 00 00 00 00 00 00   # offset 0
            00 00 00 00 00 00 00 07   # version 7
            00 00 00 00 00 00 00 00   # expires_at_millis: none
            FF FF FF FF               # bytes 2^32-1
            """);
    private static final byte[] GOLDEN = concat(GOLDEN_BODY, u32(crc32c(GOLDEN_BODY, 0, GOLDEN_BODY.length)));
    private static final KeyIndexSnapshot GOLDEN_SNAPSHOT = new KeyIndexSnapshot(10, 1234, 0xCAFEBABE, List.of(
            KeyIndexEntry.ofCacheKey(new byte[] {'a'}, 3, 1, 0, 5),
            KeyIndexEntry.ofCacheKey(new byte[] {(byte) 0xFF}, 9, -1L, 1_700_000_000_000L, 4096),
            KeyIndexEntry.ofCacheKey(new byte[] {'a', 'b'}, 0, 7, 0, 0xFFFF_FFFFL)));

    private Path shard() throws IOException {
        return Files.createDirectories(tmp.resolve(SHARD));
    }

    private static KeyIndexSnapshot decode(byte[] bytes) throws CorruptionException {
        return KeyIndexFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    /** {@code body} (everything before the CRC) with its CRC-32C. */
    private static byte[] sealed(byte[] body) {
        return concat(body, u32(crc32c(body, 0, body.length)));
    }

    private static CorruptionException decodeFails(byte[] bytes, String what) {
        SideFileBytes.Outcome<KeyIndexSnapshot> o =
                SideFileBytes.decodeGuarded(KeyIndexFile::decode, bytes, SITE, ALLOCATION_LIMIT, what);
        assertThat(o.error()).as(what).isNotNull();
        return o.error();
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(KeyIndexFile.MAGIC).isEqualTo(0x46584958);
        assertThat(KeyIndexFile.STORE_OFFSET).isEqualTo(6);
        assertThat(KeyIndexFile.COVERED_THROUGH_OFFSET).isEqualTo(7);
        assertThat(KeyIndexFile.ENTRY_COUNT_OFFSET).isEqualTo(15);
        assertThat(KeyIndexFile.LOG_BYTES_OFFSET).isEqualTo(23);
        assertThat(KeyIndexFile.LAST_CHECKSUM_OFFSET).isEqualTo(31);
        assertThat(KeyIndexFile.HEADER_LENGTH).isEqualTo(35);
        assertThat(KeyIndexFile.ENTRY_TAIL_LENGTH).isEqualTo(28);
        assertThat(KeyIndexFile.MIN_ENTRY_LENGTH).isEqualTo(37);
    }

    @Test
    void goldenIndexEncodesAndDecodesToTheTypedBytes() throws CorruptionException {
        assertThat(GOLDEN).hasSize(154);
        assertThat(KeyIndexFile.encode(GOLDEN_SNAPSHOT)).containsExactly(GOLDEN);
        KeyIndexSnapshot decoded = decode(GOLDEN);
        assertThat(decoded).isEqualTo(GOLDEN_SNAPSHOT);
        assertThat(decoded.entries().get(2).key()).containsExactly('a', 'b');
    }

    @Test
    void theTrailingCrcIsCastagnoliNotIeee() {
        byte[] ieee = concat(GOLDEN_BODY, u32(SideFileBytes.crc32(GOLDEN_BODY, 0, GOLDEN_BODY.length)));
        assertThat(decodeFails(ieee, "crc32 instead of crc32c").kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
    }

    @Test
    void anEmptyIndexCoveringNothingHasAZeroLastChecksum() throws CorruptionException {
        KeyIndexSnapshot nothing = new KeyIndexSnapshot(0, 0, 0, List.of());
        byte[] bytes = KeyIndexFile.encode(nothing);
        assertThat(bytes).hasSize(39);
        assertThat(decode(bytes)).isEqualTo(nothing);
        assertThatThrownBy(() -> new KeyIndexSnapshot(0, 0, 1, List.of())).isInstanceOf(IllegalArgumentException.class);
        byte[] nonZero = sealed(SideFileBytes.withInt(SideFileBytes.cut(bytes, 35), 31, 1));
        assertThat(decodeFails(nonZero, "covered 0, last_checksum 1").kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Provide
    static Arbitrary<KeyIndexSnapshot> snapshots() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(12).list().ofMaxSize(40).flatMap(keys -> {
            List<byte[]> composites = new ArrayList<>();
            for (byte[] k : keys) {
                byte[] c = KeyIndexEntry.cacheKey(k);
                if (composites.stream().noneMatch(x -> Arrays.equals(x, c))) {
                    composites.add(c);
                }
            }
            composites.sort(Arrays::compareUnsigned);
            return Combinators.combine(Arbitraries.longs().between(1, Long.MAX_VALUE), Arbitraries.longs(),
                    Arbitraries.integers(), Arbitraries.longs().list().ofSize(composites.size()),
                    Arbitraries.longs().between(0, 0xFFFF_FFFFL).list().ofSize(composites.size()))
                    .as((covered, logBytes, lastChecksum, seeds, sizes) -> {
                        List<KeyIndexEntry> entries = new ArrayList<>();
                        for (int i = 0; i < composites.size(); i++) {
                            long seed = seeds.get(i);
                            entries.add(new KeyIndexEntry(composites.get(i), Math.floorMod(seed, covered), seed * 31,
                                    seed >>> 3, sizes.get(i)));
                        }
                        return new KeyIndexSnapshot(covered, logBytes, lastChecksum, entries);
                    });
        });
    }

    @Property(tries = 200)
    void everyIndexRoundTrips(@ForAll("snapshots") KeyIndexSnapshot snapshot) throws CorruptionException {
        assertThat(decode(KeyIndexFile.encode(snapshot))).isEqualTo(snapshot);
    }

    // --- structural checks

    @Test
    void everyKeyMustBeACacheKey() {
        // Entry 0's kind byte (at 39) set to 1, a hash.
        CorruptionException kind = decodeFails(sealed(SideFileBytes.withByte(GOLDEN_BODY, 39, 1)), "kind 1");
        assertThat(kind.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(kind.site().position()).isEqualTo(39);
        // Entry 0's inner key_len (at 40) says 2 where the entry holds 1 key byte: a slot or field would follow.
        assertThat(decodeFails(sealed(SideFileBytes.withInt(GOLDEN_BODY, 40, 2)), "inner key_len").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThatThrownBy(() -> new KeyIndexEntry(new byte[] {1, 0, 0, 0, 0}, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KeyIndexEntry(new byte[] {0, 0, 0, 0}, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KeyIndexEntry(new byte[] {0, 0, 0, 0, 1, 'a', 0}, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void entriesMustAscendAsUnsignedBytesEachKeyOnce() {
        // Entry 1's key 0xFF rewritten as "a": the same key as entry 0.
        CorruptionException duplicate = decodeFails(sealed(SideFileBytes.withByte(GOLDEN_BODY, 82, 'a')), "duplicate");
        assertThat(duplicate.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(duplicate.site().position()).isEqualTo(73);
        // Rewritten as 0x00: below "a".
        assertThat(decodeFails(sealed(SideFileBytes.withByte(GOLDEN_BODY, 82, 0)), "descending").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThatThrownBy(() -> new KeyIndexSnapshot(10, 0, 1, List.of(GOLDEN_SNAPSHOT.entries().get(1),
                GOLDEN_SNAPSHOT.entries().get(0)))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyOffsetLiesBelowCoveredThrough() {
        // Entry 1's offset (at 83) rewritten as 10, covered_through.
        assertThat(decodeFails(sealed(SideFileBytes.withLong(GOLDEN_BODY, 83, 10)), "offset at covered").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThatThrownBy(() -> new KeyIndexSnapshot(3, 0, 1, List.of(GOLDEN_SNAPSHOT.entries().get(0))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStoreOtherThanCacheAndAnotherFormatAreRejected() {
        assertThat(decodeFails(sealed(SideFileBytes.withByte(GOLDEN_BODY, 6, 1)), "store 1").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(sealed(SideFileBytes.withShort(GOLDEN_BODY, 4, 2)), "format 2").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        assertThat(decodeFails(SideFileBytes.withInt(GOLDEN, 0, 0x46584959), "magic").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
    }

    @Test
    void countsAndLengthsBeyondTheBytesAreTruncatedBeforeAnyAllocation() {
        for (long count : new long[] {4, 1_000_000, Integer.MAX_VALUE + 1L, Long.MAX_VALUE, -1L}) {
            CorruptionException e = decodeFails(sealed(SideFileBytes.withLong(GOLDEN_BODY, 15, count)), "count " + count);
            assertThat(e.kind()).as("count %s", Long.toUnsignedString(count)).isEqualTo(CorruptionKind.TRUNCATED);
        }
        for (int keyLength : new int[] {200, 1 << 30, -1}) {
            CorruptionException e = decodeFails(sealed(SideFileBytes.withInt(GOLDEN_BODY, 35, keyLength)), "key_len");
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.site().position()).isEqualTo(39);
        }
        CorruptionException fewer = decodeFails(sealed(SideFileBytes.withLong(GOLDEN_BODY, 15, 2)), "count 2 of 3");
        assertThat(fewer.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(fewer.site().position()).isEqualTo(111);
    }

    @Test
    void everyBitFlipIsTheTypedError() {
        for (int bit = 0; bit < GOLDEN.length * 8; bit++) {
            String at = "byte " + bit / 8 + ", bit " + bit % 8;
            SideFileBytes.Outcome<KeyIndexSnapshot> o = SideFileBytes.decodeGuarded(KeyIndexFile::decode,
                    SideFileBytes.flipBit(GOLDEN, bit), SITE, ALLOCATION_LIMIT, at);
            assertThat(o.error()).as(at).isNotNull();
        }
    }

    @Test
    void everyCutIsTheTypedError() {
        for (int length = 0; length < GOLDEN.length; length++) {
            SideFileBytes.Outcome<KeyIndexSnapshot> o = SideFileBytes.decodeGuarded(KeyIndexFile::decode,
                    SideFileBytes.cut(GOLDEN, length), SITE, ALLOCATION_LIMIT, "cut " + length);
            assertThat(o.error()).as("cut at %d", length).isNotNull();
            if (length < KeyIndexFile.MIN_LENGTH) {
                assertThat(o.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.TRUNCATED);
            } else {
                // The CRC is read from the last four bytes there are, so a cut file fails it.
                assertThat(o.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
            }
        }
    }

    // --- checks against the log

    private static CorruptionException invalidAgainst(KeyIndexSnapshot s, long oldest, long tail,
                                                      KeyIndexFile.RecordChecksums checksums) {
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> KeyIndexFile.validateAgainstLog(s, oldest, tail, checksums, SITE));
        assertThat(e).as("validation against oldest %d, tail %d", oldest, tail).isNotNull();
        return e;
    }

    private static final KeyIndexFile.RecordChecksums LOG = offset -> {
        if (offset != 9) {
            throw new AssertionError("asked for the record at " + offset + ", not covered_through - 1");
        }
        return 0xCAFEBABE;
    };

    @Test
    void anIndexMatchingTheLogIsValid() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        KeyIndexFile.validateAgainstLog(GOLDEN_SNAPSHOT, 0, 10, offset -> {
            asked.incrementAndGet();
            return LOG.checksumAt(offset);
        }, SITE);
        KeyIndexFile.validateAgainstLog(GOLDEN_SNAPSHOT, 0, 500, LOG, SITE);
        assertThat(asked.get()).isEqualTo(1);
    }

    @Test
    void coveredThroughMustLieBetweenTheOldestOffsetAndTheTail() {
        KeyIndexSnapshot later = new KeyIndexSnapshot(10, 0, 0xCAFEBABE, List.of());
        CorruptionException below = invalidAgainst(later, 11, 20, LOG);
        assertThat(below.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(below.site().position()).isEqualTo(KeyIndexFile.COVERED_THROUGH_OFFSET);
        assertThat(invalidAgainst(later, 0, 9, LOG).kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        // Unsigned: an oldest offset of 2^63 lies above 10.
        assertThat(invalidAgainst(later, Long.MIN_VALUE, -1L, LOG).kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void everyEntryMustPointAtOrAboveTheOldestOffset() {
        // Entry 2 points at 0; the log now starts at 1.
        CorruptionException e = invalidAgainst(GOLDEN_SNAPSHOT, 1, 10, LOG);
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(e.site().position()).isEqualTo(111);
    }

    @Test
    void theRecordBeforeCoveredThroughMustCarryLastChecksum() {
        CorruptionException e = invalidAgainst(GOLDEN_SNAPSHOT, 0, 10, offset -> 0x12345678);
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(e.storedChecksum()).isEqualTo(0xCAFEBABEL);
        assertThat(e.computedChecksum()).isEqualTo(0x12345678L);
        assertThat(e.site().position()).isEqualTo(KeyIndexFile.LAST_CHECKSUM_OFFSET);
    }

    @Test
    void coveringNothingOfTheLogNeedsAZeroLastChecksumAndNoRecord() throws Exception {
        KeyIndexFile.RecordChecksums none = offset -> {
            throw new AssertionError("no record lies below covered_through in this log");
        };
        KeyIndexFile.validateAgainstLog(new KeyIndexSnapshot(40, 0, 0, List.of()), 40, 90, none, SITE);
        KeyIndexFile.validateAgainstLog(new KeyIndexSnapshot(0, 0, 0, List.of()), 0, 0, none, SITE);
        assertThat(invalidAgainst(new KeyIndexSnapshot(40, 0, 7, List.of()), 40, 90, none).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    // --- the derived load rule and writes

    @Test
    void absentLoadsAsNoneAndSavedLoads() throws IOException {
        Path dir = shard();
        assertThat(KeyIndexFile.FILE.loadDerived(dir).status()).isEqualTo(DerivedLoad.Status.ABSENT);
        KeyIndexFile.FILE.save(dir, GOLDEN_SNAPSHOT);
        assertThat(KeyIndexFile.FILE.loadDerived(dir).value()).contains(GOLDEN_SNAPSHOT);
        assertThat(KeyIndexFile.load(dir, 0, 10, LOG).value()).contains(GOLDEN_SNAPSHOT);
        assertThat(Files.readAllBytes(KeyIndexFile.FILE.fileIn(dir))).containsExactly(GOLDEN);
    }

    @Test
    void anIndexFailingAnyCheckIsIgnoredWithTheReason() throws IOException {
        Path dir = shard();
        KeyIndexFile.FILE.save(dir, GOLDEN_SNAPSHOT);
        DerivedLoad<KeyIndexSnapshot> againstLog = KeyIndexFile.load(dir, 0, 10, offset -> 1);
        assertThat(againstLog.status()).isEqualTo(DerivedLoad.Status.IGNORED);
        assertThat(againstLog.problem().orElseThrow().kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(KeyIndexFile.load(dir, 0, 5, LOG).status()).isEqualTo(DerivedLoad.Status.IGNORED);

        for (byte[] damaged : List.of(SideFileBytes.cut(GOLDEN, 38), SideFileBytes.cut(GOLDEN, 100),
                SideFileBytes.flipBit(GOLDEN, 600), sealed(SideFileBytes.withByte(GOLDEN_BODY, 39, 2)))) {
            SideFileBytes.write(dir, KeyIndexFile.FILE_NAME, damaged);
            DerivedLoad<KeyIndexSnapshot> load = KeyIndexFile.FILE.loadDerived(dir);
            assertThat(load.status()).isEqualTo(DerivedLoad.Status.IGNORED);
            assertThat(load.value()).isEmpty();
            assertThat(load.problem().orElseThrow().site().file()).isEqualTo(KeyIndexFile.FILE_NAME);
            assertThat(KeyIndexFile.load(dir, 0, 10, LOG).status()).isEqualTo(DerivedLoad.Status.IGNORED);
        }
    }

    @Test
    void saveWritesKeysIdxTmpThenFlushesRenamesAndFlushesTheDirectory() throws IOException {
        Path dir = shard();
        List<DurableFiles.Step> steps = new ArrayList<>();
        KeyIndexFile.FILE.save(dir, GOLDEN_SNAPSHOT, step -> {
            steps.add(step);
            if (step == DurableFiles.Step.TEMP_SYNCED) {
                assertThat(dir.resolve("keys.idx.tmp")).exists();
            }
        });
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.TEMP_SYNCED,
                DurableFiles.Step.MOVED, DurableFiles.Step.DIRECTORY_SYNCED);
        assertThat(dir.resolve("keys.idx.tmp")).doesNotExist();
    }

    @Test
    void aTemporaryLeftByACrashIsNeverRead() throws IOException {
        Path dir = shard();
        assertThatThrownBy(() -> KeyIndexFile.FILE.save(dir, GOLDEN_SNAPSHOT, step -> {
            if (step == DurableFiles.Step.TEMP_SYNCED) {
                throw new IOException("crash");
            }
        })).hasMessage("crash");
        assertThat(dir.resolve("keys.idx.tmp")).exists();
        assertThat(KeyIndexFile.FILE.loadDerived(dir).status()).isEqualTo(DerivedLoad.Status.ABSENT);
        KeyIndexFile.FILE.save(dir, GOLDEN_SNAPSHOT);
        assertThat(KeyIndexFile.FILE.remove(dir)).isTrue();
        assertThat(KeyIndexFile.FILE.loadDerived(dir).status()).isEqualTo(DerivedLoad.Status.ABSENT);
    }
}
