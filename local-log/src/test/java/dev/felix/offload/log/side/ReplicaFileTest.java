package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
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
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The {@code replica} file: exact bytes, round trips, and the authoritative load rule under every kind of damage. */
class ReplicaFileTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";
    private static final CorruptionSite SITE = CorruptionSite.inFile(SHARD, ReplicaFile.FILE_NAME, 0);

    @TempDir
    Path tmp;

    private static final byte[] GOLDEN_BODY = hex("""
            46 4C 52 53               # magic "FLRS"
            00 01                     # version 1
            00 00                     # reserved
            00 00 00 00 00 00 00 07   # generation 7
            80 00 00 00 00 00 03 E8   # commit 2^63 + 1000
            """);
    private static final byte[] GOLDEN = concat(GOLDEN_BODY, u32(crc32(GOLDEN_BODY, 0, 24)));
    private static final ReplicaState GOLDEN_STATE = new ReplicaState(7, Long.MIN_VALUE + 1000);

    private Path shard() throws IOException {
        return Files.createDirectories(tmp.resolve(SHARD));
    }

    private static ReplicaState decode(byte[] bytes) throws CorruptionException {
        return ReplicaFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    @Test
    void namedOffsetsFollowTheSpecTable() {
        assertThat(ReplicaFile.MAGIC).isEqualTo(0x464C5253);
        assertThat(ReplicaFile.GENERATION_OFFSET).isEqualTo(8);
        assertThat(ReplicaFile.COMMIT_OFFSET).isEqualTo(16);
        assertThat(ReplicaFile.CRC_OFFSET).isEqualTo(24);
        assertThat(ReplicaFile.LENGTH).isEqualTo(28);
    }

    @Test
    void goldenStateEncodesAndDecodesToTheTypedBytes() throws CorruptionException {
        assertThat(ReplicaFile.encode(GOLDEN_STATE)).containsExactly(GOLDEN);
        assertThat(decode(GOLDEN)).isEqualTo(GOLDEN_STATE);
        assertThat(GOLDEN_STATE.toString()).contains("9223372036854776808");
    }

    @Property(tries = 300)
    void everyStateRoundTrips(@ForAll long generation, @ForAll long commit) throws CorruptionException {
        ReplicaState state = new ReplicaState(generation, commit);
        assertThat(decode(ReplicaFile.encode(state))).isEqualTo(state);
    }

    @Test
    void absentReadsAsNothingAcceptedNothingCommitted() throws Exception {
        assertThat(ReplicaFile.load(shard())).isEqualTo(ReplicaState.NONE).isEqualTo(new ReplicaState(0, 0));
    }

    @Test
    void savedStateLoads() throws Exception {
        Path dir = shard();
        ReplicaFile.FILE.save(dir, GOLDEN_STATE);
        assertThat(ReplicaFile.load(dir)).isEqualTo(GOLDEN_STATE);
        assertThat(Files.readAllBytes(ReplicaFile.FILE.fileIn(dir))).containsExactly(GOLDEN);
        ReplicaFile.FILE.save(dir, GOLDEN_STATE.withCommit(2000).withGeneration(8));
        assertThat(ReplicaFile.load(dir)).isEqualTo(new ReplicaState(8, 2000));
    }

    @Test
    void saveIsFullySynced() throws IOException {
        List<DurableFiles.Step> steps = new ArrayList<>();
        ReplicaFile.FILE.save(shard(), GOLDEN_STATE, steps::add);
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.TEMP_SYNCED,
                DurableFiles.Step.MOVED, DurableFiles.Step.DIRECTORY_SYNCED);
    }

    /** Writes {@code bytes} as the file, loads, and returns the error the load must fail with; the file stays. */
    private CorruptionException failsOpen(byte[] bytes) throws IOException {
        Path dir = shard();
        SideFileBytes.write(dir, ReplicaFile.FILE_NAME, bytes);
        CorruptionException e = catchThrowableOfType(CorruptionException.class, () -> ReplicaFile.load(dir));
        assertThat(e).as("load of a damaged replica file").isNotNull();
        assertThat(e.site().file()).isEqualTo(ReplicaFile.FILE_NAME);
        assertThat(e.site().shard()).isEqualTo(SHARD);
        assertThat(Files.readAllBytes(ReplicaFile.FILE.fileIn(dir))).as("left as it is").containsExactly(bytes);
        return e;
    }

    @Test
    void presentAndUndecodableFailsTheOpenWithItsKind() throws IOException {
        assertThat(failsOpen(new byte[0]).kind()).isEqualTo(CorruptionKind.TRUNCATED);
        CorruptionException shortFile = failsOpen(SideFileBytes.cut(GOLDEN, 27));
        assertThat(shortFile.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(shortFile.needed()).isEqualTo(28);
        assertThat(shortFile.available()).isEqualTo(27);
        assertThat(failsOpen(SideFileBytes.withInt(GOLDEN, 0, 0x464C424C)).kind()).isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
        CorruptionException version = failsOpen(SideFileBytes.withShort(GOLDEN, 4, 2));
        assertThat(version.kind()).isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        assertThat(version.site().position()).isEqualTo(4);
        CorruptionException checksum = failsOpen(SideFileBytes.withLong(GOLDEN, 16, 1000));
        assertThat(checksum.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(checksum.storedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(GOLDEN_BODY, 0, 24)));
        assertThat(checksum.site().position()).isEqualTo(24);
        byte[] reserved = SideFileBytes.resealCrc32(SideFileBytes.withShort(GOLDEN, 6, 1), 24, 0, 24);
        assertThat(failsOpen(reserved).kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        CorruptionException trailing = failsOpen(concat(GOLDEN, new byte[] {0}));
        assertThat(trailing.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(trailing.site().position()).isEqualTo(28);
    }

    @Test
    void aHugeFileIsRefusedWithoutReadingIt() throws IOException {
        CorruptionException e = failsOpen(new byte[SideFiles.SMALL_FILE_LIMIT + 1]);
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void everyBitFlipIsTheTypedError() throws IOException {
        for (int bit = 0; bit < GOLDEN.length * 8; bit++) {
            String at = "byte " + bit / 8 + ", bit " + bit % 8;
            SideFileBytes.Outcome<ReplicaState> o = SideFileBytes.decodeGuarded(ReplicaFile::decode,
                    SideFileBytes.flipBit(GOLDEN, bit), SITE, 8 * 1024, at);
            assertThat(o.error()).as(at).isNotNull();
            assertThat(o.kind().isSegmentFormatKind()).as(at).isFalse();
        }
        // And through load, for one flip in each field.
        for (int bytePos : new int[] {0, 5, 7, 12, 20, 26}) {
            failsOpen(SideFileBytes.flipBit(GOLDEN, bytePos * 8));
        }
    }

    @Test
    void everyCutIsTruncated() {
        for (int length = 0; length < GOLDEN.length; length++) {
            SideFileBytes.Outcome<ReplicaState> o = SideFileBytes.decodeGuarded(ReplicaFile::decode,
                    SideFileBytes.cut(GOLDEN, length), SITE, 8 * 1024, "cut " + length);
            assertThat(o.kind()).as("cut at %d", length).isEqualTo(CorruptionKind.TRUNCATED);
        }
    }

    @Test
    void aMissingShardDirectoryIsAnIoError() {
        assertThatThrownBy(() -> ReplicaFile.load(tmp.resolve("nope"))).isInstanceOf(IOException.class);
    }
}
