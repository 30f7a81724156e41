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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32;
import static dev.felix.offload.log.side.SideFileBytes.hex;
import static dev.felix.offload.log.side.SideFileBytes.u32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The {@code ballot} file: exact bytes, round trips, the authoritative load rule, and the open rule against {@code replica}. */
class BallotFileTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";
    private static final CorruptionSite SITE = CorruptionSite.inFile(SHARD, BallotFile.FILE_NAME, 0);

    @TempDir
    Path tmp;

    private static final byte[] GOLDEN_BODY = hex("""
            46 4C 42 4C               # magic "FLBL"
            00 01                     # version 1
            00 08                     # leader_len 8
            00 00 00 00 00 00 00 2A   # generation 42
            6E C5 93 75 64 2D 30 31   # "nœud-01": n, œ (2 bytes), u, d, -, 0, 1
            """);
    private static final byte[] GOLDEN = concat(GOLDEN_BODY, u32(crc32(GOLDEN_BODY, 0, 24)));
    private static final Ballot GOLDEN_BALLOT = new Ballot(42, "n\u0153ud-01");

    private static final byte[] GIVEN_UP_BODY = hex("""
            46 4C 42 4C               # magic "FLBL"
            00 01                     # version 1
            00 00                     # leader_len 0: given up
            FF FF FF FF FF FF FF FF   # generation 2^64-1
            """);
    private static final byte[] GIVEN_UP = concat(GIVEN_UP_BODY, u32(crc32(GIVEN_UP_BODY, 0, 16)));

    private Path shard() throws IOException {
        return Files.createDirectories(tmp.resolve(SHARD));
    }

    private static Ballot decode(byte[] bytes) throws CorruptionException {
        return BallotFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(BallotFile.MAGIC).isEqualTo(0x464C424C);
        assertThat(BallotFile.LEADER_LEN_OFFSET).isEqualTo(6);
        assertThat(BallotFile.GENERATION_OFFSET).isEqualTo(8);
        assertThat(BallotFile.LEADER_OFFSET).isEqualTo(16);
        assertThat(BallotFile.MIN_LENGTH).isEqualTo(20);
        assertThat(BallotFile.MAX_LENGTH).isEqualTo(1044);
    }

    @Test
    void goldenBallotsEncodeAndDecodeToTheTypedBytes() throws CorruptionException {
        assertThat(GOLDEN).hasSize(28);
        assertThat(BallotFile.encode(GOLDEN_BALLOT)).containsExactly(GOLDEN);
        assertThat(decode(GOLDEN)).isEqualTo(GOLDEN_BALLOT);
        assertThat(BallotFile.encode(Ballot.givenUp(-1L))).containsExactly(GIVEN_UP);
        Ballot givenUp = decode(GIVEN_UP);
        assertThat(givenUp.isGivenUp()).isTrue();
        assertThat(givenUp.generation()).isEqualTo(-1L);
    }

    @Provide
    static Arbitrary<String> leaders() {
        return Arbitraries.strings().all().ofMaxLength(300)
                .filter(s -> {
                    try {
                        SideFiles.utf8Exact(s, "leader");
                        return s.getBytes(StandardCharsets.UTF_8).length <= Ballot.MAX_LEADER_BYTES;
                    } catch (IllegalArgumentException e) {
                        return false;
                    }
                });
    }

    @Property(tries = 300)
    void everyBallotRoundTrips(@ForAll long generation, @ForAll("leaders") String leader) throws CorruptionException {
        Ballot ballot = new Ballot(generation, leader);
        byte[] bytes = BallotFile.encode(ballot);
        assertThat(bytes).hasSize(20 + leader.getBytes(StandardCharsets.UTF_8).length);
        assertThat(decode(bytes)).isEqualTo(ballot);
    }

    @Test
    void theLeaderIsAtMost1024BytesOfExactUtf8() throws CorruptionException {
        String longest = "\u00e9".repeat(512); // 1024 bytes
        assertThat(decode(BallotFile.encode(new Ballot(1, longest))).leader()).isEqualTo(longest);
        assertThatThrownBy(() -> new Ballot(1, longest + "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Ballot(1, "a\ud800b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLeaderLenOverTheLimitIsContentEvenUnderAValidCrc() {
        byte[] body = concat(SideFileBytes.withShort(SideFileBytes.cut(GOLDEN_BODY, 16), 6, 1025), new byte[1025]);
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> decode(concat(body, u32(crc32(body, 0, body.length)))));
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(e.site().position()).isEqualTo(6);
    }

    @Test
    void aLeaderThatIsNotUtf8IsContentNeverAReplacement() {
        for (byte[] bad : List.of(hex("C3"), hex("C0 80"), hex("ED A0 80"), hex("FF"), hex("61 E2 82"))) {
            byte[] body = concat(SideFileBytes.withShort(SideFileBytes.cut(GOLDEN_BODY, 16), 6, bad.length), bad);
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> decode(concat(body, u32(crc32(body, 0, body.length)))));
            assertThat(e.kind()).as("leader %s", java.util.HexFormat.of().formatHex(bad))
                    .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
            assertThat(e.site().position()).isGreaterThanOrEqualTo(16);
        }
    }

    @Test
    void absentIsNoBallotAndSavedLoads() throws Exception {
        Path dir = shard();
        assertThat(BallotFile.FILE.load(dir)).isEmpty();
        BallotFile.FILE.save(dir, GOLDEN_BALLOT);
        assertThat(BallotFile.FILE.load(dir)).contains(GOLDEN_BALLOT);
        assertThat(Files.readAllBytes(BallotFile.FILE.fileIn(dir))).containsExactly(GOLDEN);
    }

    @Test
    void saveIsFullySynced() throws IOException {
        List<DurableFiles.Step> steps = new ArrayList<>();
        BallotFile.FILE.save(shard(), GOLDEN_BALLOT, steps::add);
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.TEMP_SYNCED,
                DurableFiles.Step.MOVED, DurableFiles.Step.DIRECTORY_SYNCED);
    }

    private CorruptionException failsOpen(byte[] bytes) throws IOException {
        Path dir = shard();
        SideFileBytes.write(dir, BallotFile.FILE_NAME, bytes);
        CorruptionException e = catchThrowableOfType(CorruptionException.class, () -> BallotFile.FILE.load(dir));
        assertThat(e).as("load of a damaged ballot").isNotNull();
        assertThat(e.site().file()).isEqualTo(BallotFile.FILE_NAME);
        assertThat(Files.readAllBytes(BallotFile.FILE.fileIn(dir))).containsExactly(bytes);
        return e;
    }

    @Test
    void presentAndUndecodableFailsTheOpenWithItsKind() throws IOException {
        assertThat(failsOpen(SideFileBytes.cut(GOLDEN, 19)).kind()).isEqualTo(CorruptionKind.TRUNCATED);
        CorruptionException cutLeader = failsOpen(SideFileBytes.cut(GOLDEN, 26));
        assertThat(cutLeader.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(cutLeader.needed()).isEqualTo(12);
        assertThat(cutLeader.available()).isEqualTo(10);
        assertThat(failsOpen(SideFileBytes.withInt(GOLDEN, 0, 0x464C5253)).kind()).isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
        assertThat(failsOpen(SideFileBytes.withShort(GOLDEN, 4, 0)).kind()).isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        CorruptionException checksum = failsOpen(SideFileBytes.withByte(GOLDEN, 17, 'X'));
        assertThat(checksum.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(checksum.site().position()).isEqualTo(24);
        assertThat(checksum.computedChecksum())
                .isEqualTo(Integer.toUnsignedLong(crc32(SideFileBytes.withByte(GOLDEN, 17, 'X'), 0, 24)));
        assertThat(failsOpen(concat(GOLDEN, new byte[3])).kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void everyBitFlipIsTheTypedError() {
        for (byte[] golden : List.of(GOLDEN, GIVEN_UP)) {
            for (int bit = 0; bit < golden.length * 8; bit++) {
                String at = "byte " + bit / 8 + ", bit " + bit % 8;
                SideFileBytes.Outcome<Ballot> o = SideFileBytes.decodeGuarded(BallotFile::decode,
                        SideFileBytes.flipBit(golden, bit), SITE, 16 * 1024, at);
                assertThat(o.error()).as(at).isNotNull();
                assertThat(o.kind().isSegmentFormatKind() && o.kind() != CorruptionKind.TRUNCATED).as(at).isFalse();
            }
        }
    }

    @Test
    void everyCutIsTruncated() {
        for (int length = 0; length < GOLDEN.length; length++) {
            SideFileBytes.Outcome<Ballot> o = SideFileBytes.decodeGuarded(BallotFile::decode,
                    SideFileBytes.cut(GOLDEN, length), SITE, 16 * 1024, "cut " + length);
            assertThat(o.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.TRUNCATED);
        }
    }

    // --- the open rule

    @Test
    void aBallotAtTheReplicaGenerationNamesItsLeader() {
        BallotOpening o = BallotOpening.decide(Optional.of(new Ballot(7, "node-2")), 7);
        assertThat(o).isEqualTo(new BallotOpening(7, Optional.of("node-2"), false, false));
    }

    @Test
    void aGivenUpBallotAtTheReplicaGenerationNamesNoLeaderAndSaysSo() {
        BallotOpening o = BallotOpening.decide(Optional.of(Ballot.givenUp(7)), 7);
        assertThat(o).isEqualTo(new BallotOpening(7, Optional.empty(), true, false));
    }

    @Test
    void aBallotOneAheadIsACrashedRaiseWhoseGenerationIsTaken() {
        BallotOpening o = BallotOpening.decide(Optional.of(new Ballot(8, "node-3")), 7);
        assertThat(o).isEqualTo(new BallotOpening(8, Optional.of("node-3"), false, true));
        // From no replica file at all (generation 0).
        assertThat(BallotOpening.decide(Optional.of(new Ballot(1, "n")), ReplicaState.NONE.generation()))
                .isEqualTo(new BallotOpening(1, Optional.of("n"), false, true));
    }

    @Test
    void aBallotFurtherAheadIsTakenTooTheConservativeChoice() {
        BallotOpening o = BallotOpening.decide(Optional.of(new Ballot(12, "node-3")), 7);
        assertThat(o).isEqualTo(new BallotOpening(12, Optional.of("node-3"), false, true));
    }

    @Test
    void aBallotBehindOrNoneNamesNoLeader() {
        assertThat(BallotOpening.decide(Optional.of(new Ballot(6, "node-1")), 7))
                .isEqualTo(new BallotOpening(7, Optional.empty(), false, false));
        assertThat(BallotOpening.decide(Optional.empty(), 7))
                .isEqualTo(new BallotOpening(7, Optional.empty(), false, false));
        assertThat(BallotOpening.decide(Optional.of(Ballot.givenUp(6)), 7).givenUp()).isFalse();
    }

    @Test
    void generationsCompareUnsigned() {
        // 2^63 is ahead of 2^63 - 1, not behind it.
        BallotOpening ahead = BallotOpening.decide(Optional.of(new Ballot(Long.MIN_VALUE, "x")), Long.MAX_VALUE);
        assertThat(ahead.raisesReplica()).isTrue();
        assertThat(ahead.generation()).isEqualTo(Long.MIN_VALUE);
        // 0 is behind 2^64 - 1.
        assertThat(BallotOpening.decide(Optional.of(new Ballot(0, "x")), -1L).leader()).isEmpty();
    }
}
