package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Single-record reads that each find their start in the index, as a random reader's do, fetch the
 * chunks they touch and nothing ahead, even when one read's record runs on into the next chunk or
 * the next read lands in the chunk after the last one's. A reader that takes one record at a time
 * in order, each read starting where the last stopped, is still read ahead.
 */
class TieredRandomReadTest {

    @TempDir
    Path tmp;

    private Path shard;
    private List<Record> written;
    private FilesystemStore fs;
    private Manifest manifest;

    private void offload() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        fs = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        Map<Path, List<Record>> shards = TestRoots.write(root, 1, 600, 23);
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        new OffloadPass(new DataRoot(root), fs, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        shard = shards.keySet().iterator().next();
        written = shards.get(shard);
        manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).as("objects to read from").isGreaterThan(1);
    }

    /**
     * Reads remote offsets alone, in increasing order, in pairs: the second of a pair about 3.5 KiB
     * after the first (in the same or the next chunk), the next pair some 16 KiB further on.
     * Answers the chunk bytes fetched.
     */
    private long readPairs(ChunkCache chunks, TieredSequentialReadTest.Counting store) throws Exception {
        TieredReader reader = new TieredReader(shard, store, chunks);
        long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;
        java.util.List<Long> offsets = new java.util.ArrayList<>();
        for (long first = 3; first + 15 < localBase; first += 70) {
            offsets.add(first);
            offsets.add(first + 15);
        }
        for (long offset : offsets) {
            TieredRead.Records r = (TieredRead.Records) reader.read(offset, 1, 1 << 20);
            assertThat(r.records()).hasSize(1);
            assertThat(r.records().get(0).remote()).isTrue();
            assertThat(r.records().get(0).record()).isEqualTo(written.get((int) offset));
        }
        Thread.sleep(300); // read-ahead, had any been started, is on the wire by now
        return chunks.bytesFetched();
    }

    @Test
    void readsThatJumpFetchTheChunksTheyTouchAndNothingAhead() throws Exception {
        offload();
        // The second read of a pair often lands in the chunk after the first's, and many reads,
        // starting at an index entry (every KiB here) below their record, cross a chunk boundary.
        TieredSequentialReadTest.Counting bare = new TieredSequentialReadTest.Counting(fs);
        long touched = readPairs(new ChunkCache(bare, 4096, 1 << 20, 0), bare);

        TieredSequentialReadTest.Counting store = new TieredSequentialReadTest.Counting(fs);
        ChunkCache chunks = new ChunkCache(store, 4096, 1 << 20);
        long fetched = readPairs(chunks, store);

        long objectBytes = manifest.entries().stream().mapToLong(ManifestEntry::sizeBytes).sum();
        assertThat(touched).as("the reads leave chunks untouched").isLessThan(objectBytes);
        assertThat(fetched).as("chunk bytes fetched with read-ahead on, against %d with it off", touched)
                .isEqualTo(touched);
        for (ManifestEntry e : manifest.entries()) {
            assertThat(store.getsOf(e.objectKey())).as("GETs of %s", e.objectKey())
                    .isEqualTo(bare.getsOf(e.objectKey()));
        }
    }

    @Test
    void aReaderTakingOneRecordAtATimeInOrderIsReadAhead() throws Exception {
        offload();
        TieredSequentialReadTest.Counting store = new TieredSequentialReadTest.Counting(fs);
        ChunkCache chunks = new ChunkCache(store, 4096, 1 << 20);
        TieredReader reader = new TieredReader(shard, store, chunks);
        long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;
        for (long next = 0; next < localBase; ) {
            TieredRead.Records r = (TieredRead.Records) reader.read(next, 1, 1 << 20);
            assertThat(r.records()).hasSize(1);
            assertThat(r.records().get(0).record()).isEqualTo(written.get((int) next));
            next = r.nextOffset();
        }
        for (ManifestEntry e : manifest.entries()) {
            long chunkCount = (e.sizeBytes() + 4095) / 4096;
            assertThat(store.getsOf(e.objectKey())).as("GETs of %s (%d chunks)", e.objectKey(), chunkCount)
                    .isLessThanOrEqualTo(2 + chunkCount / 2);
        }
        assertThat(store.gets.keySet()).as("only segment objects fetched: no index")
                .allMatch(k -> manifest.entries().stream().anyMatch(e -> e.objectKey().equals(k)));
    }

    /** The daemon shares one reader across its read threads: its counters miss no read. */
    @Test
    void aReaderSharedByThreadsCountsEveryRemoteRead() throws Exception {
        offload();
        TieredReader reader = new TieredReader(shard, fs, new ChunkCache(fs, 4096, 1 << 20));
        long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;
        int threads = 8;
        int readsEach = 400;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        try {
            List<java.util.concurrent.Future<Long>> bytes = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                bytes.add(pool.submit(() -> {
                    start.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    long read = 0;
                    for (int i = 0; i < readsEach; i++) {
                        long offset = (seed * 7919L + i * 31L) % localBase;
                        TieredRead.Records r = (TieredRead.Records) reader.read(offset, 1, 1 << 20);
                        assertThat(r.records().get(0).record()).isEqualTo(written.get((int) offset));
                        read += r.records().get(0).record().encodedLength();
                    }
                    return read;
                }));
            }
            long total = 0;
            for (java.util.concurrent.Future<Long> b : bytes) {
                total += b.get(120, java.util.concurrent.TimeUnit.SECONDS);
            }
            assertThat(reader.remoteReads()).as("remote reads counted").isEqualTo((long) threads * readsEach);
            assertThat(reader.remoteRecordBytes()).as("record bytes served from the store").isEqualTo(total);
        } finally {
            pool.shutdownNow();
        }
    }
}
