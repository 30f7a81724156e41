package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Remote retention and the deleted-stream clean-up delete only what provably belongs to the shard. */
class KeyOwnershipRetentionTest {

    @TempDir
    Path tmp;

    private Path root;
    private FilesystemStore store;
    private final ManualClock clock = new ManualClock(TestData.FIRST_RECORD.plus(Duration.ofDays(1)),
            java.time.ZoneOffset.UTC);

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private PassReport offloadKeepingTwo() throws IOException {
        OffloadSettings keepTwo = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(2)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        return new OffloadPass(new DataRoot(root), store, keepTwo, StepHook.none(), TestData.ENV,
                d -> OptionalLong.empty()).run(ProgressListener.none());
    }

    private RetentionReport retention(RetentionRules rules) throws IOException {
        return new RetentionPass(new DataRoot(root), store, rules, RetentionPassSettings.defaults().withSweepOrphans(false),
                clock, TestData.ENV, RetentionHook.none()).run(StopSignal.never());
    }

    private static List<String> objectsOf(List<ManifestEntry> entries) {
        List<String> keys = new ArrayList<>();
        for (ManifestEntry e : entries) {
            keys.addAll(TestData.storedKeysOf(e));
        }
        return keys;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            paths.forEach(p -> {
                try {
                    Files.copy(p, to.resolve(from.relativize(p).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** Reproduction 2 of issue 15: {@code cp -a SHARD SHARD.bak}, then a retention override on the copy. */
    @Test
    void retentionOnACopiedShardDirectoryDeletesNothingTheOriginalNeeds() throws Exception {
        Path original = TestData.shardOf(root, "orders", 0);
        List<Record> written = TestData.write(original, 400, Duration.ofSeconds(1), 61);
        assertThat(offloadKeepingTwo().complete()).isTrue();
        List<ManifestEntry> entries = ManifestStore.read(original).entries();
        assertThat(entries).hasSizeGreaterThan(4);
        Path copy = root.resolve(original.getFileName() + ".bak");
        copyTree(original, copy);

        RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory(copy.getFileName().toString(),
                        RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, 0))
                .build();
        RetentionReport report = retention(rules);

        ShardRetentionResult onCopy = report.shards().stream()
                .filter(r -> r.shard().equals(copy.getFileName().toString())).findFirst().orElseThrow();
        assertThat(onCopy.remote().expiredSegments()).isNotEmpty();
        assertThat(onCopy.remote().objectsDeleted()).isZero();
        assertThat(onCopy.remote().objectsKept()).isNotEmpty()
                .allSatisfy((k, why) -> assertThat(why).isEqualTo(KeyOwnership.Refusal.OUTSIDE_SHARD_PREFIX));
        for (String key : objectsOf(entries)) {
            assertThat(store.head(key).size()).as(key).isPositive();
        }
        TestData.assertReadsExactlyFrom(original, written, 0, store);

        // The original's own retention, while the copy still names the objects, keeps them too.
        RetentionRules originalOverride = RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory(original.getFileName().toString(),
                        RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, 0))
                .build();
        // give the copy its manifest back, as the operator's backup had it
        ManifestStore.open(copy).save(ManifestStore.read(original));
        ShardRetentionResult onOriginal = retention(originalOverride).shards().stream()
                .filter(r -> r.shard().equals(original.getFileName().toString())).findFirst().orElseThrow();
        assertThat(onOriginal.remote().expiredSegments()).isNotEmpty();
        assertThat(onOriginal.remote().objectsDeleted()).isZero();
        assertThat(onOriginal.remote().objectsKept().values()).containsOnly(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD);
        for (String key : objectsOf(entries)) {
            assertThat(store.head(key).size()).as(key).isPositive();
        }
    }

    /** Reproduction 1 of issue 15: a stream deleted into .deleted/ and created again under the same name. */
    @Test
    void aStreamCreatedAgainUnderTheSameNameKeepsEveryRecord() throws Exception {
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 400, Duration.ofSeconds(1), 71);
        assertThat(offloadKeepingTwo().complete()).isTrue();
        List<ManifestEntry> oldEntries = ManifestStore.read(shard).entries();
        Files.createDirectories(root.resolve(".deleted"));
        Files.move(shard, root.resolve(".deleted").resolve(shard.getFileName()));
        List<Record> written = TestData.write(shard, 400, Duration.ofSeconds(1), 72);

        PassReport collided = offloadKeepingTwo();
        assertThat(collided.complete()).isFalse();
        assertThat(collided.collisions()).hasSize(1);
        assertThat(ManifestStore.read(shard).entries()).isEmpty();

        RetentionReport report = retention(RetentionRules.builder(RetentionSettings.defaults()).build());
        assertThat(report.deletedStreamDirectoriesFinished()).isEqualTo(1);
        for (String key : objectsOf(oldEntries)) {
            assertThatThrownBy(() -> store.head(key)).isInstanceOf(ObjectNotFoundException.class);
        }

        PassReport again = offloadKeepingTwo();
        assertThat(again.complete()).as(again.toString()).isTrue();
        assertThat(again.segmentsUploaded()).isPositive();
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    /** Should a live shard already name the deleted one's keys, the clean-up leaves them all. */
    @Test
    void theDeletedStreamCleanUpNeverDeletesWhatALiveShardNames() throws Exception {
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 300, Duration.ofSeconds(1), 81);
        assertThat(offloadKeepingTwo().complete()).isTrue();
        Manifest oldManifest = ManifestStore.read(shard);
        Path deleted = root.resolve(".deleted").resolve(shard.getFileName());
        Files.createDirectories(deleted.getParent());
        copyTree(shard, deleted);
        // the live shard of the same name names the very keys (as an upload over them would have had it)

        RetentionReport report = retention(RetentionRules.builder(RetentionSettings.defaults()).build());

        assertThat(report.deletedStreamDirectoriesFinished()).isEqualTo(1);
        assertThat(report.deletedStreams().objectsDeleted()).isZero();
        for (String key : objectsOf(oldManifest.entries())) {
            assertThat(store.head(key).size()).as(key).isPositive();
        }
        assertThat(Files.exists(deleted.resolve(DeletedStreams.DONE_FILE))).isTrue();
    }

    /** A directory holding only a manifest (no segments) still names keys, and they stay. */
    @Test
    void aManifestWithoutSegmentsStillProtectsWhatItNames() throws Exception {
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 300, Duration.ofSeconds(1), 95);
        assertThat(offloadKeepingTwo().complete()).isTrue();
        List<ManifestEntry> entries = ManifestStore.read(shard).entries();
        Path saved = Files.createDirectories(root.resolve("saved-manifest"));
        Files.copy(ManifestStore.fileIn(shard), ManifestStore.fileIn(saved));

        RetentionReport report = retention(RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory(shard.getFileName().toString(),
                        RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, 0))
                .build());

        ShardRetentionResult r = report.shards().get(0);
        assertThat(r.remote().expiredSegments()).isNotEmpty();
        assertThat(r.remote().objectsDeleted()).isZero();
        assertThat(r.remote().objectsKept().values()).containsOnly(KeyOwnership.Refusal.NAMED_BY_ANOTHER_SHARD);
        for (String key : objectsOf(entries)) {
            assertThat(store.head(key).size()).as(key).isPositive();
        }
    }

    /** While a live manifest cannot be read, nothing is deleted: it might name any key. */
    @Test
    void anUnreadableLiveManifestStopsEveryRemoteDelete() throws Exception {
        Path shard = TestData.shardOf(root, "orders", 0);
        Path other = TestData.shardOf(root, "audit", 0);
        TestData.write(shard, 300, Duration.ofSeconds(1), 91);
        TestData.write(other, 100, Duration.ofSeconds(1), 92);
        assertThat(offloadKeepingTwo().complete()).isTrue();
        List<ManifestEntry> entries = ManifestStore.read(shard).entries();
        Files.write(ManifestStore.fileIn(other), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});

        RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory(shard.getFileName().toString(),
                        RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, 0))
                .build();
        RetentionReport report = retention(rules);

        ShardRetentionResult r = report.shards().stream()
                .filter(s -> s.shard().equals(shard.getFileName().toString())).findFirst().orElseThrow();
        assertThat(r.remote().expiredSegments()).isEmpty();
        assertThat(r.remote().blockedBy()).containsInstanceOf(RetentionBlock.LiveManifestUnreadable.class);
        assertThat(r.remote().blockedBy().orElseThrow().label()).contains(other.getFileName().toString()).contains("unreadable");
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(entries);
        for (String key : objectsOf(entries)) {
            assertThat(store.head(key).size()).as(key).isPositive();
        }
    }
}
