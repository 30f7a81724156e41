package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
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
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32;
import static dev.felix.offload.log.side.SideFileBytes.hex;
import static dev.felix.offload.log.side.SideFileBytes.u32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The data root's identity files: {@code storage-id}, {@code run-state} and {@code registration}. */
class RootIdentityFilesTest {

    @TempDir
    Path root;

    private static final StorageId ID = new StorageId(0x0011223344556677L, 0x8899AABBCCDDEEFFL);

    private static final byte[] STORAGE_ID_BODY = hex("""
            46 4C 49 44                                       # magic "FLID"
            00 01                                             # version 1
            00 00                                             # reserved
            00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF   # id
            """);
    private static final byte[] STORAGE_ID = concat(STORAGE_ID_BODY, u32(crc32(STORAGE_ID_BODY, 0, 24)));

    private static final byte[] RUNNING_BODY = hex("""
            46 4C 52 4E                                       # magic "FLRN"
            00 01                                             # version 1
            01                                                # state 1: running
            01                                                # flags: bit 0, acknowledges before syncing
            00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF   # id the run started under
            """);
    private static final byte[] RUNNING = concat(RUNNING_BODY, u32(crc32(RUNNING_BODY, 0, 24)));

    private static final byte[] STOPPED_BODY = hex("""
            46 4C 52 4E  00 01
            02                                                # state 2: stopped cleanly
            00                                                # flags: syncs before acknowledging
            00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF
            """);
    private static final byte[] STOPPED = concat(STOPPED_BODY, u32(crc32(STOPPED_BODY, 0, 24)));

    private static final byte[] REGISTRATION_BODY = hex("""
            46 4C 52 47                                       # magic "FLRG"
            00 01                                             # version 1
            00 00                                             # reserved
            00 06 41 1A 0C CF 2E 40                           # incarnation 0x6411a0ccf2e40
            """);
    private static final byte[] REGISTRATION = concat(REGISTRATION_BODY, u32(crc32(REGISTRATION_BODY, 0, 16)));

    private static CorruptionSite site(String file) {
        return CorruptionSite.inFile("root", file, 0);
    }

    @Test
    void layoutsAreTheDocumentedOnes() {
        assertThat(StorageIdFile.MAGIC).isEqualTo(0x464C4944);
        assertThat(StorageIdFile.ID_OFFSET).isEqualTo(8);
        assertThat(StorageIdFile.CRC_OFFSET).isEqualTo(24);
        assertThat(StorageIdFile.LENGTH).isEqualTo(28);
        assertThat(RunStateFile.MAGIC).isEqualTo(0x464C524E);
        assertThat(RunStateFile.STATE_OFFSET).isEqualTo(6);
        assertThat(RunStateFile.FLAGS_OFFSET).isEqualTo(7);
        assertThat(RunStateFile.ID_OFFSET).isEqualTo(8);
        assertThat(RunStateFile.CRC_OFFSET).isEqualTo(24);
        assertThat(RegistrationFile.MAGIC).isEqualTo(0x464C5247);
        assertThat(RegistrationFile.INCARNATION_OFFSET).isEqualTo(8);
        assertThat(RegistrationFile.CRC_OFFSET).isEqualTo(16);
        assertThat(RegistrationFile.LENGTH).isEqualTo(20);
        assertThat(StorageIdFile.FILE_NAME).isEqualTo(DataRoot.STORAGE_ID);
        assertThat(RunStateFile.FILE_NAME).isEqualTo(DataRoot.RUN_STATE);
        assertThat(RegistrationFile.FILE_NAME).isEqualTo(DataRoot.REGISTRATION);
    }

    @Test
    void goldenFilesEncodeAndDecodeToTheTypedBytes() throws CorruptionException {
        assertThat(StorageIdFile.encode(ID)).containsExactly(STORAGE_ID);
        assertThat(StorageIdFile.decode(ByteBuffer.wrap(STORAGE_ID), site("storage-id"))).isEqualTo(ID);
        assertThat(ID.toString()).isEqualTo("00112233445566778899aabbccddeeff");

        RunState running = RunState.running(ID, true);
        assertThat(RunStateFile.encode(running)).containsExactly(RUNNING);
        assertThat(RunStateFile.decode(ByteBuffer.wrap(RUNNING), site("run-state"))).isEqualTo(running);
        assertThat(RunStateFile.encode(RunState.running(ID, false).stoppedCleanly())).containsExactly(STOPPED);
        assertThat(RunStateFile.decode(ByteBuffer.wrap(STOPPED), site("run-state")))
                .isEqualTo(new RunState(RunState.State.STOPPED_CLEANLY, false, ID));

        assertThat(RegistrationFile.encode(new Registration(0x6411a0ccf2e40L))).containsExactly(REGISTRATION);
        assertThat(RegistrationFile.decode(ByteBuffer.wrap(REGISTRATION), site("registration")))
                .isEqualTo(new Registration(0x6411a0ccf2e40L));
    }

    @Property(tries = 200)
    void everyValueRoundTrips(@ForAll long high, @ForAll long low, @ForAll boolean running, @ForAll boolean flag,
                              @ForAll long incarnation) throws CorruptionException {
        StorageId id = new StorageId(high, low);
        assertThat(StorageId.fromBytes(id.bytes())).isEqualTo(id);
        assertThat(StorageIdFile.decode(ByteBuffer.wrap(StorageIdFile.encode(id)), site("s"))).isEqualTo(id);
        RunState state = new RunState(running ? RunState.State.RUNNING : RunState.State.STOPPED_CLEANLY, flag, id);
        assertThat(RunStateFile.decode(ByteBuffer.wrap(RunStateFile.encode(state)), site("r"))).isEqualTo(state);
        Registration r = new Registration(incarnation);
        assertThat(RegistrationFile.decode(ByteBuffer.wrap(RegistrationFile.encode(r)), site("g"))).isEqualTo(r);
    }

    @Test
    void storageIdsAreSixteenBytes() {
        assertThatThrownBy(() -> StorageId.fromBytes(new byte[15])).isInstanceOf(IllegalArgumentException.class);
        StorageId a = StorageId.random(new SecureRandom());
        StorageId b = StorageId.random(new SecureRandom());
        assertThat(a).isNotEqualTo(b);
        assertThat(a.bytes()).hasSize(16);
    }

    @Test
    void runStateRejectsAnUnknownStateAndUnknownFlagBits() {
        for (int state : new int[] {0, 3, 0xFF}) {
            byte[] bytes = SideFileBytes.resealCrc32(SideFileBytes.withByte(RUNNING, 6, state), 24, 0, 24);
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> RunStateFile.decode(ByteBuffer.wrap(bytes), site("run-state")));
            assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
            assertThat(e.site().position()).isEqualTo(6);
        }
        for (int flags : new int[] {2, 3, 0x80}) {
            byte[] bytes = SideFileBytes.resealCrc32(SideFileBytes.withByte(RUNNING, 7, flags), 24, 0, 24);
            CorruptionException e = catchThrowableOfType(CorruptionException.class,
                    () -> RunStateFile.decode(ByteBuffer.wrap(bytes), site("run-state")));
            assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
            assertThat(e.site().position()).isEqualTo(7);
        }
    }

    /** Each kind's golden bytes and decoder, for the damage tests. */
    private static final Map<String, byte[]> GOLDENS = Map.of("storage-id", STORAGE_ID, "run-state", RUNNING,
            "registration", REGISTRATION);

    private static SideFileBytes.Decoder<?> decoder(String file) {
        return switch (file) {
            case "storage-id" -> StorageIdFile::decode;
            case "run-state" -> RunStateFile::decode;
            case "registration" -> RegistrationFile::decode;
            default -> throw new IllegalArgumentException(file);
        };
    }

    private Object load(String file) throws IOException, CorruptionException {
        return switch (file) {
            case "storage-id" -> StorageIdFile.FILE.load(root);
            case "run-state" -> RunStateFile.FILE.load(root);
            case "registration" -> RegistrationFile.FILE.load(root);
            default -> throw new IllegalArgumentException(file);
        };
    }

    @Test
    void everyBitFlipIsTheTypedError() {
        GOLDENS.forEach((file, golden) -> {
            for (int bit = 0; bit < golden.length * 8; bit++) {
                String at = file + " byte " + bit / 8 + ", bit " + bit % 8;
                SideFileBytes.Outcome<?> o = SideFileBytes.decodeGuarded(decoder(file),
                        SideFileBytes.flipBit(golden, bit), site(file), 8 * 1024, at);
                assertThat(o.error()).as(at).isNotNull();
            }
        });
    }

    @Test
    void everyCutIsTruncated() {
        GOLDENS.forEach((file, golden) -> {
            for (int length = 0; length < golden.length; length++) {
                SideFileBytes.Outcome<?> o = SideFileBytes.decodeGuarded(decoder(file),
                        SideFileBytes.cut(golden, length), site(file), 8 * 1024, file + " cut " + length);
                assertThat(o.kind()).as("%s cut at %d", file, length).isEqualTo(CorruptionKind.TRUNCATED);
            }
        });
    }

    @Test
    void absentFilesLoadAsEmpty() throws Exception {
        assertThat(StorageIdFile.FILE.load(root)).isEmpty();
        assertThat(RunStateFile.FILE.load(root)).isEmpty();
        assertThat(RegistrationFile.FILE.load(root)).isEmpty();
    }

    @Test
    void savedFilesLoadAndAreFullySynced() throws Exception {
        List<DurableFiles.Step> steps = new ArrayList<>();
        StorageIdFile.FILE.save(root, ID, steps::add);
        RunStateFile.FILE.save(root, RunState.running(ID, true), steps::add);
        RegistrationFile.FILE.save(root, new Registration(0x6411a0ccf2e40L), steps::add);
        List<DurableFiles.Step> full = List.of(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.TEMP_SYNCED,
                DurableFiles.Step.MOVED, DurableFiles.Step.DIRECTORY_SYNCED);
        assertThat(steps).containsExactlyElementsOf(concatLists(full, full, full));
        assertThat(StorageIdFile.FILE.load(root)).contains(ID);
        assertThat(RunStateFile.FILE.load(root)).contains(RunState.running(ID, true));
        assertThat(RegistrationFile.FILE.load(root)).contains(new Registration(0x6411a0ccf2e40L));
        assertThat(Files.readAllBytes(StorageIdFile.FILE.fileIn(root))).containsExactly(STORAGE_ID);
        assertThat(Files.readAllBytes(RunStateFile.FILE.fileIn(root))).containsExactly(RUNNING);
        assertThat(Files.readAllBytes(RegistrationFile.FILE.fileIn(root))).containsExactly(REGISTRATION);
    }

    @SafeVarargs
    private static <T> List<T> concatLists(List<T>... lists) {
        List<T> out = new ArrayList<>();
        for (List<T> l : lists) {
            out.addAll(l);
        }
        return out;
    }

    @Test
    void presentAndUndecodableFilesFailTheLoadAndAreLeftAlone() throws IOException {
        for (Map.Entry<String, byte[]> e : GOLDENS.entrySet()) {
            String file = e.getKey();
            byte[] golden = e.getValue();
            int crcAt = golden.length - 4;
            Map<CorruptionKind, byte[]> damage = Map.of(
                    CorruptionKind.TRUNCATED, SideFileBytes.cut(golden, 10),
                    CorruptionKind.SIDE_FILE_MAGIC, SideFileBytes.withInt(golden, 0, 0x464C5853),
                    CorruptionKind.SIDE_FILE_VERSION, SideFileBytes.withShort(golden, 4, 9),
                    CorruptionKind.SIDE_FILE_CHECKSUM, SideFileBytes.withByte(golden, 10, golden[10] ^ 1),
                    CorruptionKind.SIDE_FILE_CONTENT, concat(golden, new byte[] {0}));
            for (Map.Entry<CorruptionKind, byte[]> d : damage.entrySet()) {
                Path path = SideFileBytes.write(root, file, d.getValue());
                CorruptionException error = catchThrowableOfType(CorruptionException.class, () -> load(file));
                assertThat(error).as("%s with %s", file, d.getKey()).isNotNull();
                assertThat(error.kind()).as(file).isEqualTo(d.getKey());
                assertThat(error.site().file()).isEqualTo(file);
                assertThat(Files.readAllBytes(path)).containsExactly(d.getValue());
                if (d.getKey() == CorruptionKind.SIDE_FILE_CHECKSUM) {
                    assertThat(error.site().position()).isEqualTo(crcAt);
                    assertThat(error.storedChecksum()).isEqualTo(
                            Integer.toUnsignedLong(ByteBuffer.wrap(golden).getInt(crcAt)));
                }
            }
            Files.delete(root.resolve(file));
        }
        // Reserved bytes under a valid CRC (run-state has none).
        byte[] reserved = SideFileBytes.resealCrc32(SideFileBytes.withShort(STORAGE_ID, 6, 1), 24, 0, 24);
        SideFileBytes.write(root, "storage-id", reserved);
        assertThat(catchThrowableOfType(CorruptionException.class, () -> StorageIdFile.FILE.load(root)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        byte[] regReserved = SideFileBytes.resealCrc32(SideFileBytes.withShort(REGISTRATION, 6, 1), 16, 0, 16);
        SideFileBytes.write(root, "registration", regReserved);
        assertThat(catchThrowableOfType(CorruptionException.class, () -> RegistrationFile.FILE.load(root)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void registrationIsBehindWhenTheControlPlaneIsAheadUnsigned() {
        Registration r = new Registration(5);
        assertThat(r.isBehind(6)).isTrue();
        assertThat(r.isBehind(5)).isFalse();
        assertThat(r.isBehind(4)).isFalse();
        assertThat(new Registration(Long.MAX_VALUE).isBehind(Long.MIN_VALUE)).isTrue();
        assertThat(new Registration(-1L).isBehind(0)).isFalse();
    }
}
