package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Two data roots under one node id offload a shard of the same name (other records) into one store:
 * the second's uploads meet the first's objects at the same keys. Shared by the filesystem and the
 * S3 tests, so every store is held to the same outcome.
 */
final class Collisions {

    private Collisions() {
    }

    private static PassReport pass(Path root, ObjectStore store) throws Exception {
        OffloadSettings keepTwo = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(2)).withUnlinkSettle(java.time.Duration.ofMillis(300))
                .withRetries(2, Duration.ofMillis(1));
        return new OffloadPass(new DataRoot(root), store, keepTwo, StepHook.none(), Map.of(NodeId.ENV, "same-node"),
                d -> OptionalLong.empty()).run(ProgressListener.none());
    }

    /** Runs the scenario and checks that nothing of either shard is lost or replaced. */
    static void secondRootNeverReplacesTheFirstRootsObjects(Path tmp, ObjectStore store) throws Exception {
        Path first = Files.createDirectories(tmp.resolve("first"));
        Path second = Files.createDirectories(tmp.resolve("second"));
        Map<Path, List<Record>> firstWritten = TestRoots.write(first, 1, 300, 31);
        Map<Path, List<Record>> secondWritten = TestRoots.write(second, 1, 300, 77);
        Path firstShard = firstWritten.keySet().iterator().next();
        Path secondShard = secondWritten.keySet().iterator().next();
        assertThat(secondShard.getFileName()).isEqualTo(firstShard.getFileName());

        PassReport one = pass(first, store);
        assertThat(one.complete()).as(one.toString()).isTrue();
        List<ManifestEntry> firstEntries = ManifestStore.read(firstShard).entries();
        assertThat(firstEntries).hasSizeGreaterThan(2);

        PassReport two = pass(second, store);
        assertThat(two.complete()).isFalse();
        assertThat(two.collisions()).singleElement().satisfies(c -> {
            ManifestEntry taken = firstEntries.get(0);
            assertThat(c.segmentId()).isEqualTo(taken.segmentId());
            // the index goes up first, so it is the index key that is found taken
            assertThat(c.key()).isIn(taken.objectKey(), SegmentKeys.indexKeyFor(taken.objectKey()));
            assertThat(c.foundCrc32() != c.expectedCrc32() || c.foundSize() != c.expectedSize()).isTrue();
        });
        ShardResult shard = two.shards().get(0);
        assertThat(shard.collision()).isNotNull();
        assertThat(shard.problem()).contains(shard.collision().key()).contains("nothing was deleted");
        assertThat(shard.uploaded()).isEmpty();
        assertThat(shard.unlinked()).as("nothing of the second shard leaves its disk").isEmpty();
        assertThat(ManifestStore.read(secondShard).entries()).isEmpty();

        // The first root's objects are its own bytes still, and its records all read back.
        TestRoots.assertEveryOffsetReadsBack(firstWritten, store);
        // So do the second's, all from local disk.
        TestRoots.assertEveryOffsetReadsBack(secondWritten, store);

        // Once the first root's objects are gone (its owner cleaned up), the second's pass goes through.
        List<String> keys = new ArrayList<>();
        for (ManifestEntry e : firstEntries) {
            keys.add(e.objectKey());
            keys.add(SegmentKeys.indexKeyFor(e.objectKey()));
        }
        store.deleteAll(keys);
        PassReport three = pass(second, store);
        assertThat(three.complete()).as(three.toString()).isTrue();
        assertThat(three.collisions()).isEmpty();
        TestRoots.assertEveryOffsetReadsBack(secondWritten, store);
    }
}
