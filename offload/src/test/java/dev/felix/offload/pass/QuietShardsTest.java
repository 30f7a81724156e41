package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** A quiet offload pass of the daemon: shards found with nothing to do are skipped while they look the same. */
@org.junit.jupiter.api.parallel.Isolated("counts the manifests this process decodes")
class QuietShardsTest {

    @TempDir
    Path tmp;

    private static OffloadSettings settings(LocalRetention local) {
        return OffloadSettings.defaults().withLocalRetention(local).withUnlinkSettle(Duration.ZERO)
                .withRetries(3, Duration.ofMillis(1));
    }

    private static PassReport pass(Path root, FilesystemStore store, OffloadSettings settings, QuietShards memo)
            throws IOException {
        return new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).remembering(memo).run(ProgressListener.none());
    }

    /** Dates every file and directory under {@code root} a minute back, as an idle broker leaves them. */
    private static void idle(Path root) throws IOException {
        FileTime minuteAgo = FileTime.from(Instant.now().minusSeconds(60));
        List<Path> all = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(root)) {
            walk.forEach(all::add);
        }
        java.util.Collections.reverse(all); // children before their directory
        for (Path p : all) {
            Files.setLastModifiedTime(p, minuteAgo);
        }
    }

    @Test
    void aQuietPassDecodesNoManifestAndAChangedShardIsOffloadedAgain() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        List<Path> shards = new ArrayList<>(TestRoots.write(root, 3, 300, 5).keySet());
        OffloadSettings keepAll = settings(new LocalRetention.KeepAll());
        QuietShards memo = new QuietShards();

        assertThat(pass(root, store, keepAll, memo).segmentsUploaded()).isPositive();
        idle(root);
        PassReport second = pass(root, store, keepAll, memo); // finds nothing to do: the shards are noted quiet
        assertThat(second.segmentsUploaded()).isZero();
        assertThat(memo.size()).isEqualTo(3);

        long decodes = ManifestStore.decodes();
        PassReport quiet = pass(root, store, keepAll, memo);
        assertThat(quiet.complete()).isTrue();
        assertThat(quiet.shards()).hasSize(3);
        assertThat(ManifestStore.decodes() - decodes).as("manifests decoded by a quiet pass").isZero();

        // The broker writes on: a new sealed segment changes the directory, and the next pass offloads it.
        Path busy = shards.get(1);
        int before = SegmentFile.list(busy).size();
        try (ShardLog log = ShardLog.open(busy, TestRoots.SMALL_SEGMENTS)) {
            for (int i = 0; i < 200; i++) {
                log.append(5000L + i, new byte[300]);
            }
        }
        assertThat(SegmentFile.list(busy).size()).isGreaterThan(before);
        idle(root);
        PassReport after = pass(root, store, keepAll, memo);
        assertThat(after.segmentsUploaded()).isPositive();
        for (ShardResult r : after.shards()) {
            assertThat(r.uploaded().isEmpty()).as(r.shard()).isEqualTo(!r.shard().equals(busy.getFileName().toString()));
        }
    }

    @Test
    void anotherLocalRetentionForgetsTheQuietShards() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        TestRoots.write(root, 1, 300, 9);
        QuietShards memo = new QuietShards();
        pass(root, store, settings(new LocalRetention.KeepAll()), memo);
        idle(root);
        pass(root, store, settings(new LocalRetention.KeepAll()), memo);
        assertThat(memo.size()).isEqualTo(1);
        // Keeping one segment from now on: the memo found the shard quiet under another local retention,
        // so the pass looks at it and unlinks.
        PassReport trimming = pass(root, store, settings(new LocalRetention.KeepSegments(1)), memo);
        assertThat(trimming.shards().get(0).unlinked()).isNotEmpty();
    }
}
