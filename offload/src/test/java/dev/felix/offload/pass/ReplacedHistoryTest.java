package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.fs.FilesystemStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker resets a shard (the spec's order: the manifest's entries dropped first, then the log) and
 * writes a new history whose records have the old ones' sizes, so its segments roll at the same byte
 * counts and its objects get the same keys and sizes. A reader that served the old history, with
 * its caches warm, must answer the new records from then on.
 */
class ReplacedHistoryTest {
    private static final int RECORDS = 300;

    @TempDir
    Path tmp;

    @Test
    void aReaderWithWarmCachesServesTheNewHistoryAfterAResetUnderTheSameKeysAndSizes() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path shard = root.resolve(new ShardKey("acme", "default", "reset", 0).directoryName());
        try (ObjectStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            List<Record> old = writeHistory(shard, 1);
            offload(root, store);
            List<ManifestEntry> oldEntries = ManifestStore.read(shard).entries();
            assertThat(oldEntries).hasSizeGreaterThan(2);

            ChunkCache cache = new ChunkCache(store, 8192, 1 << 20);
            TieredReader reader = new TieredReader(shard, store, cache);
            assertThat(readAll(reader)).isEqualTo(old);

            // The reset: entries dropped first, then the log; the old objects go (what the sweep does to them).
            ManifestStore.open(shard).save(Manifest.empty());
            try (Stream<Path> files = Files.list(shard)) {
                for (Path f : files.filter(f -> !f.equals(ManifestStore.fileIn(shard))).toList()) {
                    Files.delete(f);
                }
            }
            for (ManifestEntry e : oldEntries) {
                store.delete(e.objectKey());
                store.delete(SegmentKeys.indexKeyFor(e.objectKey()));
            }
            List<Record> fresh = writeHistory(shard, 2);
            offload(root, store);
            List<ManifestEntry> newEntries = ManifestStore.read(shard).entries();

            // What makes the case: the same keys and sizes, other bytes.
            assertThat(newEntries).extracting(ManifestEntry::objectKey)
                    .containsExactlyElementsOf(oldEntries.stream().map(ManifestEntry::objectKey).toList());
            assertThat(newEntries).extracting(ManifestEntry::sizeBytes)
                    .containsExactlyElementsOf(oldEntries.stream().map(ManifestEntry::sizeBytes).toList());
            assertThat(newEntries.get(0).objectCrc32()).isNotEqualTo(oldEntries.get(0).objectCrc32());
            assertThat(fresh).isNotEqualTo(old);

            assertThat(readAll(reader)).as("the same reader and cache after the reset").isEqualTo(fresh);
            TieredReader another = new TieredReader(shard, store, cache);
            assertThat(readAll(another)).as("a new reader on the shared cache").isEqualTo(fresh);
        }
    }

    /** A history of fixed-size records whose payload bytes depend on {@code seed}. */
    private static List<Record> writeHistory(Path shard, long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        List<Record> written = new ArrayList<>();
        try (ShardLog log = ShardLog.open(shard, TestRoots.SMALL_SEGMENTS)) {
            for (int i = 0; i < RECORDS; i++) {
                byte[] payload = new byte[200];
                random.nextBytes(payload);
                long offset = log.append(1000L + i, payload);
                written.add(Record.plain(offset, 1000L + i, payload));
            }
        }
        return written;
    }

    private static void offload(Path root, ObjectStore store) throws Exception {
        PassReport report = new OffloadPass(new DataRoot(root), store,
                OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300)).withRetries(3, Duration.ofMillis(5)),
                StepHook.none(), Map.of(NodeId.ENV, "n1"), d -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).as(report.toString()).isTrue();
    }

    private static List<Record> readAll(TieredReader reader) throws Exception {
        List<Record> seen = new ArrayList<>();
        long next = 0;
        for (int guard = 0; guard < 10_000 && seen.size() < RECORDS; guard++) {
            TieredRead r = reader.read(next, 13, 5000);
            assertThat(r).as("read at %d", next).isInstanceOf(TieredRead.Records.class);
            TieredRead.Records records = (TieredRead.Records) r;
            assertThat(records.records()).as("progress at %d", next).isNotEmpty();
            records.records().forEach(sr -> seen.add(sr.record()));
            next = records.nextOffset();
        }
        return seen;
    }
}
