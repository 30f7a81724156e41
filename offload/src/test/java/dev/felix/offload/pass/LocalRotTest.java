package dev.felix.offload.pass;

import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.fs.FilesystemStore;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rot in a sealed local segment whose copy was proven at upload: the damaged range is read from the
 * copy, and the records say they came from the store. Damage with no copy is still the answer.
 */
class LocalRotTest {
    @TempDir
    Path tmp;

    @Test
    void aDamagedSealedSegmentIsServedFromItsProvenCopy() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 300, 31);
        Path shard = written.keySet().iterator().next();
        List<Record> expected = written.get(shard);
        try (ObjectStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            PassReport report = new OffloadPass(new DataRoot(root), store,
                    OffloadSettings.defaults().withRetries(3, Duration.ofMillis(5)), StepHook.none(),
                    Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
            assertThat(report.complete()).as(report.toString()).isTrue();
            List<SegmentFile> segments = SegmentFile.list(shard);
            assertThat(segments.size()).as("every segment still local").isGreaterThan(2);
            assertThat(ManifestStore.read(shard).entries()).hasSize(segments.size() - 1);

            flipMiddleByte(segments.get(0).log());
            TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 8192, 1 << 20));
            List<TieredRead.SourcedRecord> seen = new ArrayList<>();
            long next = 0;
            for (int guard = 0; guard < 10_000 && seen.size() < expected.size(); guard++) {
                TieredRead.Records r = (TieredRead.Records) reader.read(next, 11, 4000);
                assertThat(r.records()).as("progress at %d", next).isNotEmpty();
                seen.addAll(r.records());
                next = r.nextOffset();
            }
            assertThat(seen).extracting(TieredRead.SourcedRecord::record).isEqualTo(expected);
            long firstLocal = new dev.felix.offload.log.ShardReader(shard).firstOffset().orElseThrow();
            long segment0Last = ManifestStore.read(shard).oldestEntry().orElseThrow().lastOffset();
            assertThat(seen.stream().filter(TieredRead.SourcedRecord::remote).map(sr -> sr.record().offset()).toList())
                    .as("the damaged segment's records, and only those, from the store")
                    .isNotEmpty().allMatch(o -> o >= firstLocal && o <= segment0Last);
            assertThat(reader.localFallbacks()).isPositive();

            // The active segment has no copy: its damage is the answer.
            SegmentFile active = segments.get(segments.size() - 1);
            flipMiddleByte(active.log());
            long activeBase = ManifestStore.read(shard).newestEntry().orElseThrow().lastOffset() + 1;
            assertThatThrownBy(() -> {
                long at = activeBase;
                for (int guard = 0; guard < 10_000; guard++) {
                    TieredRead.Records r = (TieredRead.Records) reader.read(at, 50, 1 << 20);
                    if (r.records().isEmpty()) {
                        return;
                    }
                    at = r.nextOffset();
                }
            }).isInstanceOf(CorruptionException.class);
        }
    }

    private static void flipMiddleByte(Path file) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long at = ch.size() / 2;
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x20));
            one.rewind();
            ch.write(one, at);
        }
    }
}
