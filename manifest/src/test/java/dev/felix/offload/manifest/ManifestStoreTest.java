package dev.felix.offload.manifest;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.DurableFiles.Step;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The manifest on disk: authoritative reads, and a replace that a crash at any step leaves whole. */
class ManifestStoreTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    @TempDir
    Path root;
    Path shardDir;
    Path file;

    private static ManifestEntry entry(long segment, long base, long last) {
        return new ManifestEntry(segment, base, last, 4096 + segment, 1_700_000_000_000_000L + base,
                1_700_000_000_000_000L + last, (int) (segment * 0x01010101),
                "node-1/" + SHARD + "/" + String.format("%020d-%020d.segment", base, segment));
    }

    private static final Manifest OLD = Manifest.of(List.of(entry(0, 0, 99), entry(1, 100, 199)));
    private static final Manifest NEW = OLD.withEntry(entry(2, 200, 299));
    private static final Manifest THIRD = NEW.withEntry(entry(4, 400, 450));

    /** Stands for the process dying right after a step. */
    private static final class SimulatedCrash extends IOException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(Step step) {
            super("simulated crash after " + step);
        }
    }

    @BeforeEach
    void shard() throws IOException {
        shardDir = Files.createDirectory(root.resolve(SHARD));
        file = shardDir.resolve(ManifestStore.FILE_NAME);
    }

    private List<String> listing() throws IOException {
        try (Stream<Path> files = Files.list(shardDir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void anAbsentManifestReadsAsEmptyAndOpeningWritesNothing() throws Exception {
        assertThat(ManifestStore.read(shardDir)).isEqualTo(Manifest.empty());
        ManifestStore store = ManifestStore.open(shardDir);
        assertThat(store.manifest()).isEqualTo(Manifest.empty());
        assertThat(store.file()).isEqualTo(file);
        assertThat(store.shard()).isEqualTo(SHARD);
        assertThat(listing()).isEmpty();
    }

    @Test
    void aSavedManifestIsWhatTheNextOpenReads() throws Exception {
        ManifestStore store = ManifestStore.open(shardDir);
        store.save(OLD);
        assertThat(store.manifest()).isEqualTo(OLD);
        assertThat(Files.readAllBytes(file)).isEqualTo(ManifestCodec.encode(OLD));
        assertThat(ManifestStore.open(shardDir).manifest()).isEqualTo(OLD);
        store.save(NEW);
        assertThat(ManifestStore.read(shardDir)).isEqualTo(NEW);
        assertThat(listing()).containsExactly(ManifestStore.FILE_NAME);
    }

    @Test
    void savingTheEmptyManifestWritesAnEmptyFileNotNoFile() throws Exception {
        ManifestStore store = ManifestStore.open(shardDir);
        store.save(OLD);
        store.save(OLD.reset());
        assertThat(Files.readAllBytes(file)).hasSize(ManifestCodec.MIN_LENGTH);
        assertThat(ManifestStore.read(shardDir)).isEqualTo(Manifest.empty());
    }

    @Test
    void aMissingShardDirectoryIsNotAnEmptyManifest() {
        Path missing = root.resolve("no-such-shard");
        assertThatThrownBy(() -> ManifestStore.open(missing)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> ManifestStore.read(missing)).isInstanceOf(NoSuchFileException.class);
        assertThat(missing).doesNotExist();
    }

    @Test
    void aShardPathThatIsAFileIsRefused() throws IOException {
        Path notADir = Files.createFile(root.resolve("plain-file"));
        assertThatThrownBy(() -> ManifestStore.open(notADir)).isInstanceOf(NotDirectoryException.class);
    }

    @Test
    void aManifestPathThatIsADirectoryIsAnIoErrorNotAnEmptyManifest() throws IOException {
        Files.createDirectory(file);
        assertThatThrownBy(() -> ManifestStore.open(shardDir)).isInstanceOf(IOException.class);
    }

    // ---- authoritative: present and undecodable fails, and stays as it is ----

    @Test
    void aDamagedManifestFailsTheOpenNamingTheShardFileAndPosition() throws Exception {
        byte[] bytes = ManifestCodec.encode(OLD);
        bytes[40] ^= 0x10;
        Files.write(file, bytes);
        CorruptionException e = catchThrowableOfType(CorruptionException.class, () -> ManifestStore.open(shardDir));
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(e.site()).isEqualTo(CorruptionSite.inFile(SHARD, ManifestStore.FILE_NAME, bytes.length - 4));
        assertThat(e.getMessage()).contains("shard " + SHARD, "file offload.manifest", "byte " + (bytes.length - 4));
        // Left exactly as found: not deleted, not rewritten, no temporary beside it.
        assertThat(Files.readAllBytes(file)).isEqualTo(bytes);
        assertThat(listing()).containsExactly(ManifestStore.FILE_NAME);
    }

    @Test
    void anEmptyFileIsPresentAndUndecodableNotAbsent() throws Exception {
        Files.createFile(file);
        CorruptionException e = catchThrowableOfType(CorruptionException.class, () -> ManifestStore.read(shardDir));
        assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(e.needed()).isEqualTo(16);
        assertThat(e.available()).isZero();
        assertThat(Files.size(file)).isZero();
    }

    @Test
    void aTruncatedManifestFailsTheOpenAndIsKept() throws Exception {
        byte[] whole = ManifestCodec.encode(NEW);
        byte[] cut = Arrays.copyOf(whole, whole.length / 2);
        Files.write(file, cut);
        assertThatThrownBy(() -> ManifestStore.open(shardDir)).isInstanceOf(CorruptionException.class);
        assertThat(Files.readAllBytes(file)).isEqualTo(cut);
    }

    // ---- crash safety of the replace ----

    @ParameterizedTest(name = "crash after {0}")
    @EnumSource(Step.class)
    void aCrashAfterAnyStepLeavesTheOldManifestOrTheNewOneWhole(Step crashAfter) throws Exception {
        ManifestStore.open(shardDir).save(OLD);
        List<Step> reached = new ArrayList<>();
        List<Manifest> seenOnDisk = new ArrayList<>();
        ManifestStore store = ManifestStore.open(shardDir, step -> {
            reached.add(step);
            // What a reader opening the shard right now would see.
            try {
                seenOnDisk.add(ManifestStore.read(shardDir));
            } catch (CorruptionException e) {
                throw new AssertionError("a reader saw a damaged manifest after " + step, e);
            }
            if (step == crashAfter) {
                throw new SimulatedCrash(step);
            }
        });

        assertThatThrownBy(() -> store.save(NEW)).isInstanceOf(SimulatedCrash.class);

        assertThat(reached).endsWith(crashAfter);
        for (int i = 0; i < reached.size(); i++) {
            boolean moved = reached.get(i).compareTo(Step.MOVED) >= 0;
            assertThat(seenOnDisk.get(i)).as("on disk after %s", reached.get(i)).isEqualTo(moved ? NEW : OLD);
        }
        boolean moved = crashAfter.compareTo(Step.MOVED) >= 0;
        // The store that failed still answers what it last knew to be saved.
        assertThat(store.manifest()).isEqualTo(OLD);

        // The restart: a new store reads the old manifest or the new one, never the temporary.
        Path temp = ManifestStore.tempFileIn(shardDir).toAbsolutePath();
        assertThat(temp.getParent()).isEqualTo(shardDir.toAbsolutePath());
        if (moved) {
            assertThat(temp).doesNotExist();
        } else {
            assertThat(Files.readAllBytes(temp)).isEqualTo(ManifestCodec.encode(NEW));
        }
        ManifestStore reopened = ManifestStore.open(shardDir);
        assertThat(reopened.manifest()).isEqualTo(moved ? NEW : OLD);

        // The next save overwrites a leftover temporary and leaves none.
        reopened.save(THIRD);
        assertThat(ManifestStore.read(shardDir)).isEqualTo(THIRD);
        assertThat(listing()).containsExactly(ManifestStore.FILE_NAME);
    }

    @ParameterizedTest(name = "crash after {0}")
    @EnumSource(value = Step.class, names = {"TEMP_WRITTEN", "TEMP_SYNCED"})
    void aCrashBeforeTheFirstManifestIsMovedInLeavesNone(Step crashAfter) throws Exception {
        ManifestStore store = ManifestStore.open(shardDir, step -> {
            if (step == crashAfter) {
                throw new SimulatedCrash(step);
            }
        });
        assertThatThrownBy(() -> store.save(OLD)).isInstanceOf(SimulatedCrash.class);
        assertThat(file).doesNotExist();
        assertThat(ManifestStore.open(shardDir).manifest()).isEqualTo(Manifest.empty());
    }

    @Test
    void aTornLeftoverTemporaryIsNeverReadAndIsOverwritten() throws Exception {
        ManifestStore.open(shardDir).save(OLD);
        // What a crash mid-write of the temporary may leave: part of a longer manifest, then garbage.
        byte[] longer = ManifestCodec.encode(THIRD);
        byte[] torn = Arrays.copyOf(longer, longer.length + 500);
        Arrays.fill(torn, longer.length - 20, torn.length, (byte) 0xEE);
        Path temp = ManifestStore.tempFileIn(shardDir).toAbsolutePath();
        Files.write(temp, torn);

        ManifestStore store = ManifestStore.open(shardDir);
        assertThat(store.manifest()).isEqualTo(OLD);

        store.save(NEW);
        assertThat(Files.readAllBytes(file)).isEqualTo(ManifestCodec.encode(NEW));
        assertThat(temp).doesNotExist();
        assertThat(ManifestStore.read(shardDir)).isEqualTo(NEW);
    }

    @Test
    void savesReportEveryStepOfTheDurableReplace() throws Exception {
        List<Step> reached = new ArrayList<>();
        ManifestStore.open(shardDir, reached::add).save(OLD);
        assertThat(reached).containsExactly(Step.TEMP_WRITTEN, Step.TEMP_SYNCED, Step.MOVED, Step.DIRECTORY_SYNCED);
    }

    @Test
    void aManifestAnotherProcessReplacedIsNeverWrittenOverAndIsTakenUpOnReload() throws Exception {
        ManifestStore.open(shardDir).save(NEW);
        ManifestStore pass = ManifestStore.open(shardDir);
        // The broker truncates: the entries at or after the cut leave, through its own temporary.
        DurableFiles.replace(file, ManifestCodec.encode(OLD), DurableFiles.Sync.FULL);

        assertThatThrownBy(pass::checkUnchanged).isInstanceOf(ManifestChangedException.class);
        ManifestChangedException e = catchThrowableOfType(() -> pass.save(THIRD), ManifestChangedException.class);
        assertThat(e.file()).isEqualTo(file);
        assertThat(e.getMessage()).contains(SHARD).contains("nothing was written");
        assertThat(Files.readAllBytes(file)).as("the broker's manifest stays").isEqualTo(ManifestCodec.encode(OLD));
        assertThat(pass.manifest()).isEqualTo(NEW);
        assertThat(listing()).containsExactly(ManifestStore.FILE_NAME);

        assertThat(pass.reload()).isEqualTo(OLD);
        pass.checkUnchanged();
        pass.save(OLD.withEntry(entry(2, 200, 260)));
        assertThat(ManifestStore.read(shardDir)).isEqualTo(OLD.withEntry(entry(2, 200, 260)));
    }

    @Test
    void aManifestRemovedOrCreatedByAnotherProcessCountsAsChanged() throws Exception {
        ManifestStore none = ManifestStore.open(shardDir);
        DurableFiles.replace(file, ManifestCodec.encode(OLD), DurableFiles.Sync.FULL);
        assertThatThrownBy(() -> none.save(NEW)).isInstanceOf(ManifestChangedException.class);
        ManifestStore some = ManifestStore.open(shardDir);
        Files.delete(file);
        assertThatThrownBy(() -> some.save(NEW)).isInstanceOf(ManifestChangedException.class);
        assertThat(file).doesNotExist();
    }

    @Test
    void afterAReloadMetAnUndecodableFileNothingIsSavedOverIt() throws Exception {
        ManifestStore store = ManifestStore.open(shardDir);
        Files.write(file, new byte[] {1, 2, 3});
        assertThatThrownBy(store::reload).isInstanceOf(CorruptionException.class);
        assertThatThrownBy(() -> store.save(NEW)).isInstanceOf(ManifestChangedException.class);
        assertThat(Files.readAllBytes(file)).containsExactly(1, 2, 3);
    }
}
