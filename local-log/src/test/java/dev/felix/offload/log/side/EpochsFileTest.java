package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32;
import static dev.felix.offload.log.side.SideFileBytes.hex;
import static dev.felix.offload.log.side.SideFileBytes.u32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code epochs} file: exact bytes, round trips, the derived load rule under every kind of damage, and the history's operations. */
class EpochsFileTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";
    private static final CorruptionSite SITE = CorruptionSite.inFile(SHARD, EpochsFile.FILE_NAME, 0);

    @TempDir
    Path tmp;

    /** The entries of the golden file, typed from the spec's layout; the body CRC is computed over them. */
    private static final byte[] GOLDEN_ENTRIES = hex("""
            00 00 00 00 00 00 00 01   # generation 1
            00 00 00 00 00 00 00 00   # start offset 0
            00 00 00 00 00 00 00 02   # generation 2
            00 00 00 00 00 00 00 64   # start offset 100
            80 00 00 00 00 00 00 00   # generation 2^63
            FF FF FF FF FF FF FF F0   # start offset 2^64-16
            """);
    private static final byte[] GOLDEN = concat(hex("""
            46 4C 45 50               # magic "FLEP"
            00 01                     # version 1
            00 03                     # count 3
            """), u32(crc32(GOLDEN_ENTRIES, 0, GOLDEN_ENTRIES.length)), GOLDEN_ENTRIES);
    private static final EpochHistory GOLDEN_HISTORY = new EpochHistory(List.of(new Epoch(1, 0), new Epoch(2, 100),
            new Epoch(Long.MIN_VALUE, 0xFFFF_FFFF_FFFF_FFF0L)));

    private static EpochHistory decode(byte[] bytes) throws CorruptionException {
        return EpochsFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    private Path shard() throws IOException {
        return Files.createDirectories(tmp.resolve(SHARD));
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(EpochsFile.MAGIC).isEqualTo(0x464C4550);
        assertThat(EpochsFile.COUNT_OFFSET).isEqualTo(6);
        assertThat(EpochsFile.BODY_CRC_OFFSET).isEqualTo(8);
        assertThat(EpochsFile.HEADER_LENGTH).isEqualTo(12);
        assertThat(EpochsFile.ENTRY_LENGTH).isEqualTo(16);
        assertThat(EpochsFile.MAX_LENGTH).isEqualTo(12 + 65535 * 16);
    }

    @Test
    void goldenHistoryEncodesAndDecodesToTheTypedBytes() throws CorruptionException {
        assertThat(GOLDEN).hasSize(60);
        assertThat(EpochsFile.encode(GOLDEN_HISTORY)).containsExactly(GOLDEN);
        assertThat(decode(GOLDEN)).isEqualTo(GOLDEN_HISTORY);
    }

    @Test
    void emptyHistoryIsAHeaderWhoseBodyCrcIsTheCrcOfNothing() throws CorruptionException {
        byte[] empty = hex("46 4C 45 50  00 01  00 00  00 00 00 00");
        assertThat(EpochsFile.encode(EpochHistory.empty())).containsExactly(empty);
        assertThat(decode(empty)).isEqualTo(EpochHistory.empty());
    }

    @Test
    void decodingReadsOnlyBetweenPositionAndLimit() throws CorruptionException {
        byte[] padded = concat(new byte[] {9, 9, 9}, GOLDEN, new byte[] {7});
        ByteBuffer window = ByteBuffer.wrap(padded).position(3).limit(3 + GOLDEN.length);
        assertThat(EpochsFile.decode(window, SITE)).isEqualTo(GOLDEN_HISTORY);
        assertThat(window.position()).isEqualTo(3);
    }

    @Provide
    static Arbitrary<EpochHistory> histories() {
        return Arbitraries.longs().set().ofMaxSize(40).flatMap(generations -> {
            List<Long> gens = new ArrayList<>(generations);
            gens.sort(Long::compareUnsigned);
            return Arbitraries.longs().list().ofSize(gens.size()).map(starts -> {
                List<Long> sorted = new ArrayList<>(starts);
                sorted.sort(Long::compareUnsigned);
                List<Epoch> entries = new ArrayList<>();
                for (int i = 0; i < gens.size(); i++) {
                    entries.add(new Epoch(gens.get(i), sorted.get(i)));
                }
                return new EpochHistory(entries);
            });
        });
    }

    @Property(tries = 300)
    void everyHistoryRoundTrips(@ForAll("histories") EpochHistory history) throws CorruptionException {
        byte[] bytes = EpochsFile.encode(history);
        assertThat(bytes).hasSize(12 + 16 * history.size());
        assertThat(decode(bytes)).isEqualTo(history);
    }

    // --- the derived load rule

    @Test
    void anAbsentFileLoadsAsAbsentAndTheEmptyHistory() throws IOException {
        Path dir = shard();
        DerivedLoad<EpochHistory> load = EpochsFile.FILE.loadDerived(dir);
        assertThat(load.status()).isEqualTo(DerivedLoad.Status.ABSENT);
        assertThat(load.problem()).isEmpty();
        assertThat(EpochsFile.loadOrEmpty(dir)).isEqualTo(EpochHistory.empty());
    }

    @Test
    void aMissingShardDirectoryIsAnIoErrorNotAnAbsentFile() {
        assertThatThrownBy(() -> EpochsFile.FILE.loadDerived(tmp.resolve("nope"))).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void savedHistoryLoads() throws IOException {
        Path dir = shard();
        EpochsFile.FILE.save(dir, GOLDEN_HISTORY);
        DerivedLoad<EpochHistory> load = EpochsFile.FILE.loadDerived(dir);
        assertThat(load.status()).isEqualTo(DerivedLoad.Status.LOADED);
        assertThat(load.value()).contains(GOLDEN_HISTORY);
        assertThat(Files.readAllBytes(EpochsFile.FILE.fileIn(dir))).containsExactly(GOLDEN);
    }

    private CorruptionException ignoredBecause(byte[] bytes) throws IOException {
        Path dir = shard();
        SideFileBytes.write(dir, EpochsFile.FILE_NAME, bytes);
        DerivedLoad<EpochHistory> load = EpochsFile.FILE.loadDerived(dir);
        assertThat(load.status()).isEqualTo(DerivedLoad.Status.IGNORED);
        assertThat(load.value()).isEmpty();
        assertThat(EpochsFile.loadOrEmpty(dir)).isEqualTo(EpochHistory.empty());
        CorruptionException why = load.problem().orElseThrow();
        assertThat(why.site().file()).isEqualTo(EpochsFile.FILE_NAME);
        assertThat(why.site().shard()).isEqualTo(SHARD);
        return why;
    }

    @Test
    void aShortFileLoadsAsEmptyWithTruncated() throws IOException {
        CorruptionException why = ignoredBecause(SideFileBytes.cut(GOLDEN, 30));
        assertThat(why.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(why.needed()).isEqualTo(48);
        assertThat(why.available()).isEqualTo(18);
        assertThat(ignoredBecause(new byte[0]).kind()).isEqualTo(CorruptionKind.TRUNCATED);
    }

    @Test
    void aBadChecksumLoadsAsEmptyWithStoredAndComputedValues() throws IOException {
        byte[] damaged = SideFileBytes.withByte(GOLDEN, 40, GOLDEN[40] ^ 0x10);
        CorruptionException why = ignoredBecause(damaged);
        assertThat(why.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(why.storedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(GOLDEN_ENTRIES, 0, 48)));
        assertThat(why.computedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(damaged, 12, 60)));
        assertThat(why.site().position()).isEqualTo(EpochsFile.BODY_CRC_OFFSET);
    }

    @Test
    void aBadMagicOrVersionLoadsAsEmpty() throws IOException {
        assertThat(ignoredBecause(SideFileBytes.withInt(GOLDEN, 0, 0x464C5347)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
        assertThat(ignoredBecause(SideFileBytes.withShort(GOLDEN, 4, 2)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
    }

    @Test
    void bytesPastTheEntriesLoadAsEmpty() throws IOException {
        CorruptionException why = ignoredBecause(concat(GOLDEN, new byte[16]));
        assertThat(why.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(why.site().position()).isEqualTo(60);
    }

    @Test
    void entriesOutOfOrderUnderAValidChecksumLoadAsEmpty() throws IOException {
        // Generation 2 rewritten as 1: not above the entry before it.
        byte[] body = SideFileBytes.withLong(GOLDEN_ENTRIES, 16, 1);
        CorruptionException why = ignoredBecause(concat(SideFileBytes.cut(GOLDEN, 8), u32(crc32(body, 0, 48)), body));
        assertThat(why.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(why.site().position()).isEqualTo(28);
        // The third entry's start rewritten as 99: below the second entry's 100.
        byte[] startBack = SideFileBytes.withLong(GOLDEN_ENTRIES, 40, 99);
        assertThat(ignoredBecause(concat(SideFileBytes.cut(GOLDEN, 8), u32(crc32(startBack, 0, 48)), startBack)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void aCountFarBeyondTheBytesIsTruncatedNotAnAllocation() {
        byte[] header = hex("46 4C 45 50  00 01  FF FF  00 00 00 00");
        SideFileBytes.Outcome<EpochHistory> outcome =
                SideFileBytes.decodeGuarded(EpochsFile::decode, header, SITE, 16 * 1024, "count 65535");
        assertThat(outcome.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(outcome.error().needed()).isEqualTo(65535L * 16);
    }

    @Test
    void everyBitFlipIsTheTypedErrorAndLoadsAsEmpty() throws IOException {
        Path dir = shard();
        for (int bit = 0; bit < GOLDEN.length * 8; bit++) {
            String at = "byte " + bit / 8 + ", bit " + bit % 8;
            byte[] flipped = SideFileBytes.flipBit(GOLDEN, bit);
            SideFileBytes.Outcome<EpochHistory> outcome =
                    SideFileBytes.decodeGuarded(EpochsFile::decode, flipped, SITE, 16 * 1024, at);
            assertThat(outcome.error()).as(at).isNotNull();
            SideFileBytes.write(dir, EpochsFile.FILE_NAME, flipped);
            DerivedLoad<EpochHistory> load = EpochsFile.FILE.loadDerived(dir);
            assertThat(load.status()).as(at).isEqualTo(DerivedLoad.Status.IGNORED);
            assertThat(load.orElse(EpochHistory.empty())).as(at).isEqualTo(EpochHistory.empty());
        }
    }

    @Test
    void everyCutIsTruncatedAndLoadsAsEmpty() throws IOException {
        Path dir = shard();
        for (int length = 0; length < GOLDEN.length; length++) {
            byte[] cut = SideFileBytes.cut(GOLDEN, length);
            SideFileBytes.Outcome<EpochHistory> outcome =
                    SideFileBytes.decodeGuarded(EpochsFile::decode, cut, SITE, 16 * 1024, "cut " + length);
            assertThat(outcome.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.TRUNCATED);
            SideFileBytes.write(dir, EpochsFile.FILE_NAME, cut);
            assertThat(EpochsFile.FILE.loadDerived(dir).status()).as("cut at %d", length).isEqualTo(DerivedLoad.Status.IGNORED);
        }
    }

    // --- writes

    @Test
    void saveIsATemporaryAndARenameWithoutFlush() throws IOException {
        List<DurableFiles.Step> steps = new ArrayList<>();
        EpochsFile.FILE.save(shard(), GOLDEN_HISTORY, steps::add);
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.MOVED);
    }

    @Test
    void aSaveStoppedBeforeTheRenameLeavesTheOldHistoryAndTheTemporaryIsNeverRead() throws IOException {
        Path dir = shard();
        EpochHistory old = EpochHistory.empty().append(1, 0);
        EpochsFile.FILE.save(dir, old);
        assertThatThrownBy(() -> EpochsFile.FILE.save(dir, old.append(2, 50), step -> {
            if (step == DurableFiles.Step.TEMP_WRITTEN) {
                throw new IOException("crash");
            }
        })).hasMessage("crash");
        assertThat(DurableFiles.tempFor(EpochsFile.FILE.fileIn(dir))).exists();
        assertThat(EpochsFile.loadOrEmpty(dir)).isEqualTo(old);
    }

    // --- the history's operations

    @Test
    void appendTakesOnlyAHigherGenerationAtOrAfterTheLastStart() {
        EpochHistory h = EpochHistory.empty().append(3, 10).append(4, 10).append(9, 25);
        assertThat(h.entries()).containsExactly(new Epoch(3, 10), new Epoch(4, 10), new Epoch(9, 25));
        assertThatThrownBy(() -> h.append(9, 30)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> h.append(8, 30)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> h.append(10, 24)).isInstanceOf(IllegalArgumentException.class);
        // Unsigned: 2^63 is above 9, and start 2^63 is above 25.
        assertThat(h.append(Long.MIN_VALUE, Long.MIN_VALUE).last()).contains(new Epoch(Long.MIN_VALUE, Long.MIN_VALUE));
        assertThat(h.size()).isEqualTo(3);
    }

    @Test
    void constructionRejectsDisorderAndMoreThanTheBound() {
        assertThatThrownBy(() -> new EpochHistory(List.of(new Epoch(2, 0), new Epoch(2, 5))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EpochHistory(List.of(new Epoch(-1L, 0), new Epoch(1, 5))))
                .isInstanceOf(IllegalArgumentException.class);
        List<Epoch> tooMany = new ArrayList<>();
        for (int i = 0; i <= EpochHistory.MAX_ENTRIES; i++) {
            tooMany.add(new Epoch(i, i));
        }
        assertThatThrownBy(() -> new EpochHistory(tooMany)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void appendAtTheBoundForgetsTheOldestEntry() throws CorruptionException {
        List<Epoch> full = new ArrayList<>();
        for (int i = 0; i < EpochHistory.MAX_ENTRIES; i++) {
            full.add(new Epoch(i, i * 2L));
        }
        EpochHistory h = new EpochHistory(full).append(EpochHistory.MAX_ENTRIES, 1_000_000);
        assertThat(h.size()).isEqualTo(EpochHistory.MAX_ENTRIES);
        assertThat(h.entries().get(0)).isEqualTo(new Epoch(1, 2));
        assertThat(h.last()).contains(new Epoch(EpochHistory.MAX_ENTRIES, 1_000_000));
        byte[] bytes = EpochsFile.encode(h);
        assertThat(bytes).hasSize(EpochsFile.MAX_LENGTH);
        assertThat(decode(bytes)).isEqualTo(h);
    }

    @Test
    void truncationDropsEntriesStartingAtOrAfterTheCut() {
        EpochHistory h = new EpochHistory(List.of(new Epoch(1, 0), new Epoch(2, 100), new Epoch(3, 100),
                new Epoch(5, 250)));
        assertThat(h.truncatedAt(250).entries()).containsExactly(new Epoch(1, 0), new Epoch(2, 100), new Epoch(3, 100));
        assertThat(h.truncatedAt(251)).isEqualTo(h);
        assertThat(h.truncatedAt(101).entries()).containsExactly(new Epoch(1, 0), new Epoch(2, 100), new Epoch(3, 100));
        assertThat(h.truncatedAt(100).entries()).containsExactly(new Epoch(1, 0));
        assertThat(h.truncatedAt(0)).isEqualTo(EpochHistory.empty());
        // Unsigned: a cut at 2^63 lies above every entry.
        assertThat(h.truncatedAt(Long.MIN_VALUE)).isEqualTo(h);
    }

    @Test
    void retentionKeepsTheEntryThatWroteTheOldestRecord() {
        EpochHistory h = new EpochHistory(List.of(new Epoch(1, 0), new Epoch(2, 100), new Epoch(5, 250)));
        assertThat(h.retainedFrom(0)).isEqualTo(h);
        assertThat(h.retainedFrom(99)).isEqualTo(h);
        assertThat(h.retainedFrom(100).entries()).containsExactly(new Epoch(2, 100), new Epoch(5, 250));
        assertThat(h.retainedFrom(249).entries()).containsExactly(new Epoch(2, 100), new Epoch(5, 250));
        assertThat(h.retainedFrom(1000).entries()).containsExactly(new Epoch(5, 250));
    }

    @Test
    void generationAtFindsTheNewestEntryStartingAtOrBelowTheOffset() {
        EpochHistory h = new EpochHistory(List.of(new Epoch(1, 10), new Epoch(2, 100), new Epoch(3, 100)));
        assertThat(h.generationAt(9)).isEmpty();
        assertThat(h.generationAt(10)).hasValue(1);
        assertThat(h.generationAt(99)).hasValue(1);
        assertThat(h.generationAt(100)).hasValue(3);
        assertThat(h.generationAt(-1L)).hasValue(3);
        assertThat(h.startOf(2)).hasValue(100);
        assertThat(h.startOf(4)).isEmpty();
    }
}
