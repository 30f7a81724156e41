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
import java.util.List;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32;
import static dev.felix.offload.log.side.SideFileBytes.hex;
import static dev.felix.offload.log.side.SideFileBytes.u32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code producers} file: exact bytes, limits, round trips, and the derived load rule under every kind of damage. */
class ProducersFileTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";
    private static final CorruptionSite SITE = CorruptionSite.inFile(SHARD, ProducersFile.FILE_NAME, 0);
    private static final long ALLOCATION_LIMIT = 32 * 1024;

    @TempDir
    Path tmp;

    private static final byte[] GOLDEN_HEADER = hex("""
            46 4C 50 53               # magic "FLPS"
            00 01                     # version 1
            00 00                     # reserved
            00 00 00 00 00 00 01 F4   # as_of 500
            00 00 00 02               # producers 2
            """);
    private static final byte[] GOLDEN_BODY = hex("""
            01                        # open: a batch is waiting
            00 00 00 00 00 00 00 09   #   producer_id 9
            00 00 00 00 00 00 00 04   #   sequence 4
            00 00 00 03               #   len 3
            00 00 00 00 00 00 01 F2   #   first 498
            00 00 00 02               #   held 2
            00 00 00 00 00 00 00 09   # producer 0: id 9
            00 00 00 00 00 00 00 03   #   last_sequence 3
            00 02                     #   batches 2
            00 00 00 00 00 00 00 64   #     first 100
            00 00 00 02               #     len 2
            00 00 00 00 00 00 01 2C   #     first 300
            00 00 00 01               #     len 1
            FF FF FF FF FF FF FF FF   # producer 1: id 2^64-1
            00 00 00 00 00 00 00 00   #   last_sequence 0
            00 00                     #   batches 0
            """);
    private static final byte[] GOLDEN = concat(GOLDEN_HEADER, u32(crc32(GOLDEN_BODY, 0, GOLDEN_BODY.length)), GOLDEN_BODY);
    private static final ProducerSnapshot GOLDEN_SNAPSHOT = new ProducerSnapshot(500,
            new OpenBatch(9, 4, 3, 498, 2),
            List.of(new ProducerEntry(9, 3, List.of(new BatchLocation(100, 2), new BatchLocation(300, 1))),
                    new ProducerEntry(-1L, 0, List.of())));

    private static final byte[] NOTHING = hex("""
            46 4C 50 53  00 01  00 00
            00 00 00 00 00 00 00 00   # as_of 0
            00 00 00 00               # producers 0
            D2 02 EF 8D               # crc32 of the single byte 00
            00                        # open: none
            """);

    private Path shard() throws IOException {
        return Files.createDirectories(tmp.resolve(SHARD));
    }

    private static ProducerSnapshot decode(byte[] bytes) throws CorruptionException {
        return ProducersFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    /** The golden file with {@code body} as its body, under a valid body CRC. */
    private static byte[] withBody(byte[] header, byte[] body) {
        return concat(header, u32(crc32(body, 0, body.length)), body);
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(ProducersFile.MAGIC).isEqualTo(0x464C5053);
        assertThat(ProducersFile.AS_OF_OFFSET).isEqualTo(8);
        assertThat(ProducersFile.PRODUCER_COUNT_OFFSET).isEqualTo(16);
        assertThat(ProducersFile.BODY_CRC_OFFSET).isEqualTo(20);
        assertThat(ProducersFile.OPEN_FLAG_OFFSET).isEqualTo(24);
        assertThat(ProducersFile.OPEN_BATCH_LENGTH).isEqualTo(32);
        assertThat(ProducersFile.PRODUCER_FIXED_LENGTH).isEqualTo(18);
        assertThat(ProducersFile.BATCH_LENGTH).isEqualTo(12);
    }

    @Test
    void goldenSnapshotEncodesAndDecodesToTheTypedBytes() throws CorruptionException {
        assertThat(GOLDEN).hasSize(117);
        assertThat(ProducersFile.encode(GOLDEN_SNAPSHOT)).containsExactly(GOLDEN);
        assertThat(decode(GOLDEN)).isEqualTo(GOLDEN_SNAPSHOT);
    }

    @Test
    void anEmptySnapshotIsAHeaderAndAZeroOpenFlag() throws CorruptionException {
        assertThat(crc32(new byte[1], 0, 1)).isEqualTo(0xD202EF8D);
        ProducerSnapshot nothing = new ProducerSnapshot(0, null, List.of());
        assertThat(ProducersFile.encode(nothing)).containsExactly(NOTHING);
        assertThat(decode(NOTHING)).isEqualTo(nothing);
    }

    @Provide
    static Arbitrary<ProducerSnapshot> snapshots() {
        Arbitrary<OpenBatch> open = Arbitraries.longs().between(2, 0xFFFF_FFFFL).flatMap(len ->
                Combinators.combine(Arbitraries.longs(), Arbitraries.longs(), Arbitraries.longs(),
                        Arbitraries.longs().between(1, len - 1))
                        .as((id, seq, first, held) -> new OpenBatch(id, seq, len, first, held)));
        Arbitrary<List<BatchLocation>> batches = Arbitraries.longs().set().ofMaxSize(ProducerEntry.MAX_BATCHES)
                .flatMap(firsts -> Arbitraries.longs().between(0, 0xFFFF_FFFFL).list().ofSize(firsts.size())
                        .map(lens -> {
                            List<Long> sorted = new ArrayList<>(firsts);
                            sorted.sort(Long::compareUnsigned);
                            List<BatchLocation> out = new ArrayList<>();
                            for (int i = 0; i < sorted.size(); i++) {
                                out.add(new BatchLocation(sorted.get(i), lens.get(i)));
                            }
                            return out;
                        }));
        Arbitrary<List<ProducerEntry>> producers = Arbitraries.longs().set().ofMaxSize(12).flatMap(ids ->
                Combinators.combine(Arbitraries.longs().list().ofSize(ids.size()), batches.list().ofSize(ids.size()))
                        .as((seqs, lists) -> {
                            List<ProducerEntry> out = new ArrayList<>();
                            int i = 0;
                            for (long id : ids) {
                                out.add(new ProducerEntry(id, seqs.get(i), lists.get(i)));
                                i++;
                            }
                            return out;
                        }));
        return Combinators.combine(Arbitraries.longs(), open.injectNull(0.3), producers).as(ProducerSnapshot::new);
    }

    @Property(tries = 200)
    void everySnapshotRoundTrips(@ForAll("snapshots") ProducerSnapshot snapshot) throws CorruptionException {
        assertThat(decode(ProducersFile.encode(snapshot))).isEqualTo(snapshot);
    }

    // --- limits

    private static List<ProducerEntry> producers(int count, int batchesEach) {
        List<ProducerEntry> out = new ArrayList<>();
        for (int p = 0; p < count; p++) {
            List<BatchLocation> batches = new ArrayList<>();
            for (int b = 0; b < batchesEach; b++) {
                batches.add(new BatchLocation(p * 1000L + b * 10L, 10));
            }
            out.add(new ProducerEntry(p, batchesEach, batches));
        }
        return out;
    }

    @Test
    void theFullestSnapshotRoundTripsAtTheLongestFile() throws CorruptionException {
        ProducerSnapshot full = new ProducerSnapshot(1, new OpenBatch(1, 1, 5, 1, 4),
                producers(ProducerSnapshot.MAX_PRODUCERS, ProducerEntry.MAX_BATCHES));
        byte[] bytes = ProducersFile.encode(full);
        assertThat(bytes).hasSize(ProducersFile.MAX_LENGTH);
        assertThat(decode(bytes)).isEqualTo(full);
    }

    @Test
    void constructionRejectsMoreThanTheLimitsAndBrokenRules() {
        assertThatThrownBy(() -> new ProducerSnapshot(0, null, producers(ProducerSnapshot.MAX_PRODUCERS + 1, 0)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> producers(1, ProducerEntry.MAX_BATCHES + 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ProducerSnapshot(0, null, List.of(new ProducerEntry(5, 0, List.of()),
                new ProducerEntry(5, 1, List.of())))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ProducerEntry(1, 1, List.of(new BatchLocation(10, 1), new BatchLocation(10, 1))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BatchLocation(1, 1L << 32)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BatchLocation(1, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OpenBatch(1, 1, 3, 0, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OpenBatch(1, 1, 3, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OpenBatch(1, 1, 1L << 32, 0, 1)).isInstanceOf(IllegalArgumentException.class);
        // Unsigned: 2^63 is above 5 in a producer's batch list.
        assertThat(new ProducerEntry(1, 1, List.of(new BatchLocation(5, 1), new BatchLocation(Long.MIN_VALUE, 1)))
                .batches()).hasSize(2);
    }

    private static CorruptionException decodeFails(byte[] bytes, String what) {
        SideFileBytes.Outcome<ProducerSnapshot> o =
                SideFileBytes.decodeGuarded(ProducersFile::decode, bytes, SITE, ALLOCATION_LIMIT, what);
        assertThat(o.error()).as(what).isNotNull();
        return o.error();
    }

    @Test
    void decodeRejectsMoreThanTheLimitsBeforeAllocating() {
        assertThat(decodeFails(SideFileBytes.withInt(GOLDEN, 16, 4097), "4097 producers").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(SideFileBytes.withInt(GOLDEN, 16, -1), "2^32-1 producers").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        CorruptionException truncated = decodeFails(SideFileBytes.withInt(GOLDEN, 16, 4096), "4096 producers");
        assertThat(truncated.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(truncated.needed()).isEqualTo(4096L * 18);
        // 65 batches announced for producer 0, under a valid body CRC.
        byte[] body = SideFileBytes.withShort(GOLDEN_BODY, 33 + 16, 65);
        CorruptionException batches = decodeFails(withBody(GOLDEN_HEADER, body), "65 batches");
        assertThat(batches.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(batches.site().position()).isEqualTo(24 + 33 + 16);
        byte[] many = SideFileBytes.withShort(GOLDEN_BODY, 33 + 16, 64);
        assertThat(decodeFails(withBody(GOLDEN_HEADER, many), "64 batches, 2 there").kind())
                .isEqualTo(CorruptionKind.TRUNCATED);
    }

    @Test
    void decodeRejectsBrokenRulesUnderAValidChecksum() {
        assertThat(decodeFails(withBody(GOLDEN_HEADER, SideFileBytes.withByte(GOLDEN_BODY, 0, 2)), "open flag 2").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(withBody(GOLDEN_HEADER, SideFileBytes.withInt(GOLDEN_BODY, 29, 3)), "held = len").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(withBody(GOLDEN_HEADER, SideFileBytes.withLong(GOLDEN_BODY, 75, 9)), "same id twice").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(withBody(GOLDEN_HEADER, SideFileBytes.withLong(GOLDEN_BODY, 63, 100)), "batch not ascending")
                .kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(decodeFails(withBody(SideFileBytes.withShort(GOLDEN_HEADER, 6, 1), GOLDEN_BODY), "reserved").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        CorruptionException trailing = decodeFails(withBody(GOLDEN_HEADER, concat(GOLDEN_BODY, new byte[5])), "trailing");
        assertThat(trailing.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(trailing.site().position()).isEqualTo(117);
    }

    // --- the derived load rule

    @Test
    void absentLoadsAsNone() throws IOException {
        DerivedLoad<ProducerSnapshot> load = ProducersFile.FILE.loadDerived(shard());
        assertThat(load.status()).isEqualTo(DerivedLoad.Status.ABSENT);
        assertThat(load.value()).isEmpty();
        assertThat(load.problem()).isEmpty();
    }

    @Test
    void savedSnapshotLoadsAndIsWrittenWithoutFlush() throws IOException {
        Path dir = shard();
        List<DurableFiles.Step> steps = new ArrayList<>();
        ProducersFile.FILE.save(dir, GOLDEN_SNAPSHOT, steps::add);
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.MOVED);
        assertThat(ProducersFile.FILE.loadDerived(dir).value()).contains(GOLDEN_SNAPSHOT);
        assertThat(Files.readAllBytes(ProducersFile.FILE.fileIn(dir))).containsExactly(GOLDEN);
    }

    private CorruptionException ignoredBecause(byte[] bytes) throws IOException {
        Path dir = shard();
        SideFileBytes.write(dir, ProducersFile.FILE_NAME, bytes);
        DerivedLoad<ProducerSnapshot> load = ProducersFile.FILE.loadDerived(dir);
        assertThat(load.status()).isEqualTo(DerivedLoad.Status.IGNORED);
        assertThat(load.value()).isEmpty();
        assertThat(load.problem().orElseThrow().site().file()).isEqualTo(ProducersFile.FILE_NAME);
        return load.problem().orElseThrow();
    }

    @Test
    void damagedFilesLoadAsNoneWithTheReason() throws IOException {
        assertThat(ignoredBecause(SideFileBytes.cut(GOLDEN, 20)).kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(ignoredBecause(SideFileBytes.withInt(GOLDEN, 0, 0x464C5053 + 1)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
        assertThat(ignoredBecause(SideFileBytes.withShort(GOLDEN, 4, 7)).kind()).isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        CorruptionException checksum = ignoredBecause(SideFileBytes.withByte(GOLDEN, 60, 0x55));
        assertThat(checksum.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(checksum.storedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(GOLDEN_BODY, 0, GOLDEN_BODY.length)));
        assertThat(checksum.site().position()).isEqualTo(20);
    }

    @Test
    void aSnapshotBelowTheOldestRecordOrPastTheTailIsIgnored() throws IOException {
        Path dir = shard();
        ProducersFile.FILE.save(dir, GOLDEN_SNAPSHOT); // as_of 500
        assertThat(ProducersFile.load(dir, 0, 500).status()).isEqualTo(DerivedLoad.Status.LOADED);
        assertThat(ProducersFile.load(dir, 500, 800).status()).isEqualTo(DerivedLoad.Status.LOADED);
        DerivedLoad<ProducerSnapshot> below = ProducersFile.load(dir, 501, 800);
        assertThat(below.status()).isEqualTo(DerivedLoad.Status.IGNORED);
        assertThat(below.problem().orElseThrow().kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(below.problem().orElseThrow().site().position()).isEqualTo(ProducersFile.AS_OF_OFFSET);
        assertThat(ProducersFile.load(dir, 0, 499).status()).isEqualTo(DerivedLoad.Status.IGNORED);
        // Unsigned: a tail of 2^63 lies above 500.
        assertThat(ProducersFile.load(dir, 0, Long.MIN_VALUE).status()).isEqualTo(DerivedLoad.Status.LOADED);
        assertThat(ProducersFile.load(tmp.resolve(SHARD), 0, 10).status()).isEqualTo(DerivedLoad.Status.IGNORED);
    }

    @Test
    void removeDeletesTheSnapshot() throws IOException {
        Path dir = shard();
        ProducersFile.FILE.save(dir, GOLDEN_SNAPSHOT);
        assertThat(ProducersFile.FILE.remove(dir)).isTrue();
        assertThat(ProducersFile.FILE.loadDerived(dir).status()).isEqualTo(DerivedLoad.Status.ABSENT);
        assertThat(ProducersFile.FILE.remove(dir)).isFalse();
    }

    /**
     * Every bit flip outside {@code as_of} is the typed error, and loads as none. {@code as_of} lies
     * outside the body CRC in the spec's layout, so a flip there decodes, to a snapshot that differs
     * in {@code as_of} alone; an open still ignores it when it lands outside the log.
     */
    @Test
    void everyBitFlipIsTheTypedErrorAndLoadsAsNoneExceptInAsOf() throws IOException {
        Path dir = shard();
        for (int bit = 0; bit < GOLDEN.length * 8; bit++) {
            int bytePos = bit / 8;
            String at = "byte " + bytePos + ", bit " + bit % 8;
            byte[] flipped = SideFileBytes.flipBit(GOLDEN, bit);
            SideFileBytes.Outcome<ProducerSnapshot> o =
                    SideFileBytes.decodeGuarded(ProducersFile::decode, flipped, SITE, ALLOCATION_LIMIT, at);
            boolean inAsOf = bytePos >= ProducersFile.AS_OF_OFFSET && bytePos < ProducersFile.PRODUCER_COUNT_OFFSET;
            if (inAsOf) {
                assertThat(o.value()).as(at).isNotNull();
                assertThat(o.value().asOf()).as(at).isNotEqualTo(500);
                assertThat(new ProducerSnapshot(500, o.value().open(), o.value().producers())).as(at)
                        .isEqualTo(GOLDEN_SNAPSHOT);
                continue;
            }
            assertThat(o.error()).as(at).isNotNull();
            SideFileBytes.write(dir, ProducersFile.FILE_NAME, flipped);
            assertThat(ProducersFile.FILE.loadDerived(dir).status()).as(at).isEqualTo(DerivedLoad.Status.IGNORED);
        }
    }

    @Test
    void everyCutIsTruncatedAndLoadsAsNone() throws IOException {
        Path dir = shard();
        for (int length = 0; length < GOLDEN.length; length++) {
            byte[] cut = SideFileBytes.cut(GOLDEN, length);
            SideFileBytes.Outcome<ProducerSnapshot> o =
                    SideFileBytes.decodeGuarded(ProducersFile::decode, cut, SITE, ALLOCATION_LIMIT, "cut " + length);
            // A cut body fails its CRC before its lengths are looked at.
            assertThat(o.kind()).as("cut at %d", length)
                    .isIn(CorruptionKind.TRUNCATED, CorruptionKind.SIDE_FILE_CHECKSUM);
            if (length < ProducersFile.MIN_LENGTH) {
                assertThat(o.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.TRUNCATED);
            }
            SideFileBytes.write(dir, ProducersFile.FILE_NAME, cut);
            assertThat(ProducersFile.FILE.loadDerived(dir).status()).as("cut at %d", length).isEqualTo(DerivedLoad.Status.IGNORED);
        }
    }
}
