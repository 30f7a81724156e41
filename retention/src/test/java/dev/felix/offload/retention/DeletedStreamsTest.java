package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.LiveKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DeletedStreamsTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path deletedDir;
    private FilesystemStore store;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        deletedDir = root.resolve(".deleted");
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /** Writes and offloads a shard, then moves it under .deleted/ as the broker does; answers its manifest. */
    private Manifest offloadedThenDeleted(String stream) throws Exception {
        Path shard = TestData.shardOf(root, stream, 0);
        TestData.write(shard, 200, Duration.ofSeconds(1), stream.hashCode());
        TestData.offload(root, store);
        Manifest manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).isPositive();
        Files.createDirectories(deletedDir);
        Files.move(shard, deletedDir.resolve(shard.getFileName()));
        return manifest;
    }

    private static List<String> objectsOf(Manifest manifest) {
        List<String> keys = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            keys.addAll(TestData.storedKeysOf(e));
        }
        return keys;
    }

    private DeletedStreamsReport run(RetentionHook hook) throws IOException {
        return new DeletedStreams(new DataRoot(root), store, hook, 3, TestData.ownership(),
                LiveKeys.read(new DataRoot(root))).run(StopSignal.never());
    }

    @Test
    void aDeletedShardsObjectsGoAndTheDirectoryIsLeftMarkedDoneForTheBroker() throws Exception {
        Manifest manifest = offloadedThenDeleted("orders");
        Path kept = TestData.shardOf(root, "payments", 0);
        TestData.write(kept, 200, Duration.ofSeconds(1), 9);
        TestData.offload(root, store);
        List<String> objects = objectsOf(manifest);
        for (String k : objects) {
            assertThat(store.head(k).size()).isPositive();
        }

        DeletedStreamsReport r = run(RetentionHook.none());

        assertThat(r.failures()).isEmpty();
        assertThat(r.directoriesFinished()).containsExactly(TestData.shardOf(root, "orders", 0).getFileName().toString());
        assertThat(r.objectsDeleted()).isEqualTo(objects.size());
        for (String k : objects) {
            assertThatThrownBy(() -> store.head(k)).isInstanceOf(ObjectNotFoundException.class);
        }
        Path dir = deletedDir.resolve(TestData.shardOf(root, "orders", 0).getFileName());
        assertThat(dir).as("the broker removes the directory").isDirectory();
        assertThat(dir.resolve(DeletedStreams.DONE_FILE)).exists();
        assertThat(ManifestStore.fileIn(dir)).doesNotExist();
        TestData.assertEveryEntryHasItsObject(kept, store);
        assertThat(run(RetentionHook.none())).as("a second run has nothing left to do").isEqualTo(DeletedStreamsReport.nothing());
    }

    @Test
    void aDeletedShardWithoutAManifestIsLeftAlone() throws Exception {
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 50, Duration.ofSeconds(1), 1);
        Files.createDirectories(deletedDir);
        Files.move(shard, deletedDir.resolve(shard.getFileName()));
        Files.createDirectories(deletedDir.resolve("nested-leftover").resolve("deeper"));
        Files.writeString(deletedDir.resolve("nested-leftover").resolve("deeper").resolve("f"), "x");

        DeletedStreamsReport r = run(RetentionHook.none());

        assertThat(r).isEqualTo(DeletedStreamsReport.nothing());
        assertThat(deletedDir.resolve(shard.getFileName())).isDirectory();
        assertThat(deletedDir.resolve("nested-leftover").resolve("deeper").resolve("f")).exists();
    }

    @Test
    void anUnreadableManifestKeepsTheDirectory() throws Exception {
        Manifest manifest = offloadedThenDeleted("orders");
        Path dir = deletedDir.resolve(TestData.shardOf(root, "orders", 0).getFileName());
        Files.write(ManifestStore.fileIn(dir), new byte[] {1, 2, 3});

        DeletedStreamsReport r = run(RetentionHook.none());

        assertThat(r.failures()).containsOnlyKeys(dir.getFileName().toString());
        assertThat(r.failures().values()).allSatisfy(v -> assertThat(v).contains("manifest unreadable"));
        assertThat(dir).isDirectory();
        for (String k : objectsOf(manifest)) {
            assertThat(store.head(k).size()).isPositive();
        }
    }

    @Test
    void aCrashAtAnyStepIsFinishedByTheNextRun() throws Exception {
        for (RetentionStep crashAt : List.of(RetentionStep.OBJECT_BATCH_DELETED, RetentionStep.DELETED_SHARD_OBJECTS_DELETED,
                RetentionStep.DELETED_SHARD_MANIFEST_REMOVED)) {
            Manifest manifest = offloadedThenDeleted("orders-" + crashAt.ordinal());
            Path dir = deletedDir.resolve(TestData.shardOf(root, "orders-" + crashAt.ordinal(), 0).getFileName());
            RetentionHook crash = (step, shard, detail) -> {
                if (step == crashAt) {
                    throw new IOException("simulated crash at " + step);
                }
            };

            DeletedStreamsReport crashed = run(crash);

            assertThat(crashed.failures()).as("%s", crashAt).containsKey(dir.getFileName().toString());
            assertThat(dir).as("the directory outlives a crash at %s", crashAt).isDirectory();
            if (crashAt != RetentionStep.DELETED_SHARD_MANIFEST_REMOVED) {
                assertThat(ManifestStore.fileIn(dir)).as("the manifest goes last").exists();
            }

            DeletedStreamsReport again = run(RetentionHook.none());

            assertThat(again.failures()).isEmpty();
            if (crashAt != RetentionStep.DELETED_SHARD_MANIFEST_REMOVED) {
                assertThat(again.directoriesFinished()).contains(dir.getFileName().toString());
            } // else the crash came after the last step: the first run had finished the work
            assertThat(dir.resolve(DeletedStreams.DONE_FILE)).exists();
            assertThat(ManifestStore.fileIn(dir)).doesNotExist();
            for (String k : objectsOf(manifest)) {
                assertThatThrownBy(() -> store.head(k)).as(k).isInstanceOf(ObjectNotFoundException.class);
            }
        }
    }

    @Test
    void withoutADeletedDirectoryThereIsNothingToDo() throws Exception {
        assertThat(run(RetentionHook.none())).isEqualTo(DeletedStreamsReport.nothing());
    }

    @Test
    void deletedShardsUnderGroupsAndDeadLettersAreFinishedLikeTopLevelOnesAndNeverListedAsShards() throws Exception {
        Path top = TestData.shardOf(root, "orders", 0);
        Path group = root.resolve("groups").resolve(top.getFileName().toString().replace("orders", "grp"));
        Path dlq = root.resolve("dead-letters").resolve(top.getFileName().toString().replace("orders", "dlq"));
        for (Path p : List.of(group, dlq)) {
            Files.createDirectories(p.getParent());
            TestData.write(p, 200, Duration.ofSeconds(1), p.hashCode());
        }
        TestData.offload(root, store);
        Manifest groupManifest = ManifestStore.read(group);
        Manifest dlqManifest = ManifestStore.read(dlq);
        assertThat(groupManifest.entries().get(0).objectKey()).contains("/groups/" + group.getFileName() + "/");
        for (Path p : List.of(group, dlq)) {
            Path deleted = Files.createDirectories(p.getParent().resolve(".deleted"));
            Files.move(p, deleted.resolve(p.getFileName()));
        }
        Files.createDirectories(root.resolve("caches").resolve(".deleted").resolve("c"));
        Files.createDirectories(root.resolve("groups").resolve(".streams"));
        assertThat(new DataRoot(root).list().shards()).as(".deleted/ and .streams/ of containers are never shards")
                .isEmpty();

        DeletedStreamsReport r = run(RetentionHook.none());

        assertThat(r.failures()).isEmpty();
        assertThat(r.directoriesFinished()).containsExactly("dead-letters/" + dlq.getFileName(),
                "groups/" + group.getFileName());
        for (Manifest m : List.of(groupManifest, dlqManifest)) {
            for (String k : objectsOf(m)) {
                assertThatThrownBy(() -> store.head(k)).isInstanceOf(ObjectNotFoundException.class);
            }
        }
        Path deletedGroup = root.resolve("groups").resolve(".deleted").resolve(group.getFileName());
        assertThat(deletedGroup.resolve(DeletedStreams.DONE_FILE)).exists();
        assertThat(ManifestStore.fileIn(deletedGroup)).doesNotExist();
        assertThat(run(RetentionHook.none())).isEqualTo(DeletedStreamsReport.nothing());
    }
}
