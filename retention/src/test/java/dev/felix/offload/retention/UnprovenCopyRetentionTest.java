package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.CopyProofs;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.copy.VerifyMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --verify none} records entries but unlinks nothing on their strength: the pass keeps every
 * segment, and retention proves each copy itself before the local file goes.
 */
class UnprovenCopyRetentionTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path storeDir;
    private Path shard;
    private FilesystemStore store;
    private List<Record> written;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        storeDir = Files.createDirectories(tmp.resolve("store"));
        store = FilesystemStore.open(storeDir);
        shard = TestData.shardOf(root, "orders", 0);
        written = TestData.write(shard, 300, Duration.ofMinutes(1), 7);
        assertThat(SegmentFile.list(shard)).hasSizeGreaterThanOrEqualTo(4);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private PassReport offload(VerifyMode mode, LocalRetention local) throws Exception {
        return new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults().withVerify(mode)
                .withLocalRetention(local), StepHook.none(), TestData.ENV, dir -> OptionalLong.empty())
                .run(ProgressListener.none());
    }

    private ShardRetentionResult retainTo(long localBytes) {
        return retainTo(localBytes, Duration.ZERO);
    }

    /** Retention {@code later} after the first record, judged at a fixed instant. */
    private ShardRetentionResult retainTo(long localBytes, Duration later) {
        return new ShardRetention(shard, store, new RetentionSettings(localBytes, UNLIMITED, UNLIMITED, UNLIMITED),
                Clock.fixed(TestData.FIRST_RECORD.plus(later), ZoneOffset.UTC), RetentionHook.none(), 1000,
                TestData.ownership(), live()).run(StopSignal.never());
    }

    private dev.felix.offload.root.LiveKeys live() {
        try {
            return TestData.live(shard);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private List<Long> localIds() throws Exception {
        return SegmentFile.list(shard).stream().map(SegmentFile::id).toList();
    }

    private Path objectFile(ManifestEntry e) throws Exception {
        try (Stream<Path> files = Files.walk(storeDir)) {
            return files.filter(p -> p.toString().endsWith(e.objectKey())).findFirst().orElseThrow();
        }
    }

    @Test
    void passWithVerifyNoneRecordsButUnlinksNothingEvenWithALocalLimit() throws Exception {
        List<Long> before = localIds();
        PassReport report = offload(VerifyMode.NONE, new LocalRetention.KeepSegments(1));

        assertThat(ManifestStore.read(shard).size()).isEqualTo(before.size() - 1);
        assertThat(localIds()).isEqualTo(before);
        assertThat(report.shards().get(0).unlinked()).isEmpty();
        // a second pass, still unverified, does not unlink on the strength of the first one's entries
        offload(VerifyMode.NONE, new LocalRetention.KeepSegments(1));
        assertThat(localIds()).isEqualTo(before);
    }

    @Test
    void retentionKeepsASegmentWhoseUnprovenCopyWasDamagedAndReportsIt() throws Exception {
        offload(VerifyMode.NONE, new LocalRetention.KeepSegments(Integer.MAX_VALUE));
        List<Long> before = localIds();
        ManifestEntry oldest = ManifestStore.read(shard).entries().get(0);
        try (RandomAccessFile f = new RandomAccessFile(objectFile(oldest).toFile(), "rw")) {
            f.seek(100);
            int b = f.read();
            f.seek(100);
            f.write(b ^ 0x01);
        }

        ShardRetentionResult r = retainTo(1);

        assertThat(r.local().removedSegments()).isEmpty();
        assertThat(localIds()).isEqualTo(before);
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.Kept.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("segment " + oldest.segmentId()).contains("not proven by read-back")
                .contains("kept");
        assertThat(r.problems()).as("a damaged copy fails the pass").singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(RetentionProblem.Kind.COPY_UNPROVEN);
            assertThat(p.segment()).isEqualTo(oldest.segmentId());
        });
        TestData.assertLocalLogOpens(shard, written);
    }

    @Test
    void retentionProvesUndamagedUnprovenCopiesAndRemovesThem() throws Exception {
        offload(VerifyMode.NONE, new LocalRetention.KeepSegments(Integer.MAX_VALUE));
        assertThat(CopyProofs.read(shard).proven(ManifestStore.read(shard).entries().get(0))).isFalse();
        List<Long> before = localIds();

        ShardRetentionResult proving = retainTo(1);

        // Proven now: the proof is where the entry's settle time starts, so its segment goes a pass later.
        assertThat(proving.failure()).isNull();
        assertThat(proving.local().removedSegments()).isEmpty();
        assertThat(proving.local().blockedBy()).containsInstanceOf(RetentionBlock.Kept.class);
        assertThat(((RetentionBlock.Kept) proving.local().blockedBy().orElseThrow()).reason())
                .isEqualTo(dev.felix.offload.copy.LocalRelease.KeptReason.SETTLING);
        assertThat(proving.local().blockedBy().orElseThrow().label()).contains("stays until");
        assertThat(CopyProofs.read(shard).how(ManifestStore.read(shard).entries().get(0))).isEqualTo("read-back");

        ShardRetentionResult r = retainTo(1, dev.felix.offload.copy.LocalRelease.DEFAULT_SETTLE);
        assertThat(r.failure()).isNull();
        assertThat(r.local().removedSegments()).isEqualTo(before.subList(0, before.size() - 1));
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    @Test
    void copiesProvenAtUploadAreNotReadAgainByRetention() throws Exception {
        offload(VerifyMode.READ_BACK, new LocalRetention.KeepSegments(Integer.MAX_VALUE));
        CopyProofs proofs = CopyProofs.read(shard);
        for (ManifestEntry e : ManifestStore.read(shard).entries()) {
            assertThat(proofs.how(e)).isEqualTo("read-back");
        }
        // damage every copy after the proven upload: retention trusts the upload's proof (no second
        // transfer), so it removes them; finding rot since is scrub's job
        for (ManifestEntry e : ManifestStore.read(shard).entries()) {
            try (RandomAccessFile f = new RandomAccessFile(objectFile(e).toFile(), "rw")) {
                f.seek(100);
                int b = f.read();
                f.seek(100);
                f.write(b ^ 0x01);
            }
        }
        List<Long> before = localIds();
        ShardRetentionResult r = retainTo(1);
        assertThat(r.local().removedSegments()).isEqualTo(before.subList(0, before.size() - 1));
    }

    @Test
    void aLostProofsFileOnlyMeansProvingAgain() throws Exception {
        offload(VerifyMode.READ_BACK, new LocalRetention.KeepSegments(Integer.MAX_VALUE));
        Files.write(shard.resolve(CopyProofs.FILE_NAME), "garbage\n".getBytes());
        ManifestEntry oldest = ManifestStore.read(shard).entries().get(0);
        try (RandomAccessFile f = new RandomAccessFile(objectFile(oldest).toFile(), "rw")) {
            f.seek(200);
            int b = f.read();
            f.seek(200);
            f.write(b ^ 0x01);
        }
        List<Long> before = localIds();
        ShardRetentionResult r = retainTo(1);
        assertThat(r.local().removedSegments()).isEmpty();
        assertThat(localIds()).isEqualTo(before);
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.Kept.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("not proven");
    }

    @Test
    void aVerifyingPassProvesAnEntryWithoutAProofBeforeItUnlinksAndKeepsADamagedOne() throws Exception {
        offload(VerifyMode.READ_BACK, new LocalRetention.KeepSegments(Integer.MAX_VALUE));
        Files.delete(shard.resolve(CopyProofs.FILE_NAME));
        List<ManifestEntry> entries = ManifestStore.read(shard).entries();
        ManifestEntry second = entries.get(1);
        try (RandomAccessFile f = new RandomAccessFile(objectFile(second).toFile(), "rw")) {
            f.seek(300);
            int b = f.read();
            f.seek(300);
            f.write(b ^ 0x01);
        }
        List<Long> before = localIds();

        PassReport report = offload(VerifyMode.AUTO, new LocalRetention.KeepSegments(1));

        assertThat(report.shards().get(0).unlinked()).as("the first proves again and goes; the damaged second stays")
                .containsExactly(before.get(0));
        assertThat(localIds()).isEqualTo(before.subList(1, before.size()));
        assertThat(CopyProofs.read(shard).proven(second)).isFalse();
    }
}
