package dev.felix.offload.pass;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pass's pipeline over real stores (the filesystem store) with a wrapper that holds chosen
 * puts on latches: commits stay oldest first whatever order uploads end in, the bytes in flight
 * never pass their bound, and a failed older segment lets no younger one be recorded. Nothing here
 * depends on timing: every order is forced by a latch (a wait longer than 30 s fails the test).
 */
class PipelinedOffloadTest {

    @TempDir
    Path tmp;

    private Path root;
    private FilesystemStore fs;

    private void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        fs = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    /** Writes a shard of {@code records} records of {@code payload} bytes into segments of {@code segmentBytes}. */
    private Map<Path, List<Record>> shard(int number, int segmentBytes, int records, int payload) throws Exception {
        Path dir = root.resolve(new ShardKey("acme", "default", "orders", number).directoryName());
        ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(segmentBytes).withIndexSpacingBytes(4096)
                .withFsyncPolicy(FsyncPolicy.none());
        SplittableRandom random = new SplittableRandom(number * 7919L);
        List<Record> list = new ArrayList<>();
        try (ShardLog log = ShardLog.open(dir, config)) {
            for (int i = 0; i < records; i++) {
                byte[] bytes = new byte[payload];
                random.nextBytes(bytes);
                long offset = log.append(1000L + i, bytes);
                list.add(Record.plain(offset, 1000L + i, bytes));
            }
        }
        Map<Path, List<Record>> out = new LinkedHashMap<>();
        out.put(dir, list);
        return out;
    }

    private static OffloadSettings settings() {
        return OffloadSettings.defaults().withRetries(3, Duration.ofMillis(1));
    }

    private PassReport pass(ObjectStore store, OffloadSettings settings, StepHook hook) throws Exception {
        return new OffloadPass(new DataRoot(root), store, settings, hook, Map.of(NodeId.ENV, "node-a"),
                d -> OptionalLong.empty()).run(ProgressListener.none());
    }

    private static boolean oldest(String key) {
        return key.contains("/00000000000000000000-");
    }

    /** A gate holding each of the first {@code n} segment puts until {@code n} are under way at once. */
    private static GatedStore.Gate firstHeldTogether(GatedStore[] store, int n) {
        java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
        return key -> {
            if (seen.incrementAndGet() <= n) {
                try {
                    store[0].awaitPutsUnderWay(n);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        };
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertThat(latch.await(30, TimeUnit.SECONDS)).as(what).isTrue();
    }

    @Test
    void aYoungerUploadThatEndsFirstIsRecordedOnlyAfterEveryOlderOne() throws Exception {
        setUp();
        Map<Path, List<Record>> written = shard(0, 16 * 1024, 200, 300);
        Path dir = written.keySet().iterator().next();
        List<SegmentFile> segments = SegmentFile.list(dir);
        assertThat(segments).hasSizeGreaterThanOrEqualTo(4);
        long younger = segments.get(1).id();
        CountDownLatch youngerVerified = new CountDownLatch(1);
        CountDownLatch releaseOldest = new CountDownLatch(1);
        GatedStore store = new GatedStore(fs).gate(key -> {
            if (oldest(key)) {
                try {
                    await(releaseOldest, "the test releases the oldest segment's put");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        });
        List<Long> recordedOrder = new CopyOnWriteArrayList<>();
        List<List<Long>> manifestAtEachRecord = new CopyOnWriteArrayList<>();
        StepHook hook = (step, s, id) -> {
            if (step == OffloadStep.VERIFIED && id == younger) {
                youngerVerified.countDown();
            }
            if (step == OffloadStep.RECORDED) {
                recordedOrder.add(id);
                try {
                    manifestAtEachRecord.add(ids(ManifestStore.read(dir)));
                } catch (dev.felix.offload.log.format.CorruptionException e) {
                    throw new java.io.IOException(e);
                }
            }
        };
        CompletableFuture<PassReport> running = CompletableFuture.supplyAsync(() -> {
            try {
                return pass(store, settings().withParallelism(1), hook);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });

        await(youngerVerified, "the second segment is uploaded and verified while the oldest is held");
        assertThat(ManifestStore.read(dir).isEmpty()).as("nothing recorded while the oldest is not").isTrue();
        assertThat(recordedOrder).isEmpty();
        releaseOldest.countDown();
        PassReport report = running.get(60, TimeUnit.SECONDS);

        assertThat(report.complete()).as(report.toString()).isTrue();
        List<Long> sealed = segments.subList(0, segments.size() - 1).stream().map(SegmentFile::id).toList();
        assertThat(recordedOrder).containsExactlyElementsOf(sealed);
        // Segments whose uploads ended together are recorded in one manifest write; either way the
        // manifest only ever holds an unbroken run from the oldest, and holds each segment by its RECORDED.
        for (int i = 0; i < recordedOrder.size(); i++) {
            List<Long> held = manifestAtEachRecord.get(i);
            assertThat(held).as("the manifest as segment %d was recorded", recordedOrder.get(i))
                    .hasSizeGreaterThanOrEqualTo(i + 1)
                    .containsExactlyElementsOf(sealed.subList(0, held.size()));
        }
        assertThat(manifestAtEachRecord.get(0)).as("segment 1 ended before segment 0: one write records both")
                .contains(younger);
        assertThat(store.mostPuts()).as("the younger put ran while the oldest was held").isGreaterThanOrEqualTo(2);
        TestRoots.assertEveryOffsetReadsBack(written, fs);
    }

    @Test
    void everyRecordingOfAPassAddsItsEntriesToTheLargestTimestampsFile() throws Exception {
        setUp();
        // small segments, so that the pass records them in several batches
        Path dir = shard(1, 1024, 200 * 8, 100).keySet().iterator().next();
        PassReport report = pass(fs, settings(), StepHook.none());
        assertThat(report.complete()).isTrue();

        List<ManifestEntry> entries = ManifestStore.read(dir).entries();
        assertThat(entries).hasSizeGreaterThan(2 * ShardPipeline.RECORD_BATCH);
        dev.felix.offload.copy.LargestTimestamps side = dev.felix.offload.copy.LargestTimestamps.load(dir);
        for (ManifestEntry e : entries) {
            // timestamps only grow in this shard: a segment's largest is its newest
            assertThat(side.of(e)).as("segment %s", e.segmentId()).hasValue(e.newestTimestampMicros());
        }
    }

    @Test
    void segmentsOfOneShardUploadAtOnceAtParallelismOne() throws Exception {
        setUp();
        Map<Path, List<Record>> written = shard(0, 64 * 1024, 300, 1000);
        assertThat(SegmentFile.list(written.keySet().iterator().next())).hasSizeGreaterThan(3);
        GatedStore[] store = new GatedStore[1];
        store[0] = new GatedStore(fs).gate(firstHeldTogether(store, 3));
        PassReport report = pass(store[0], settings().withParallelism(1), StepHook.none());
        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(store[0].mostPuts()).isGreaterThanOrEqualTo(3);
        TestRoots.assertEveryOffsetReadsBack(written, fs);
    }

    @Test
    void theBytesInFlightNeverPassTheirBoundAcrossShards() throws Exception {
        setUp();
        long bound = 1L << 20;
        Map<Path, List<Record>> written = new LinkedHashMap<>();
        written.putAll(shard(0, 300 * 1024, 1000, 3000)); // about ten segments of 300 KiB: three fit in the bound
        written.putAll(shard(1, 300 * 1024, 1000, 3000));
        GatedStore[] store = new GatedStore[1];
        // Three segments fill the bound: the first three puts are held until all three are under way.
        store[0] = new GatedStore(fs).gate(firstHeldTogether(store, 3));
        PassReport report = pass(store[0], settings().withMaxBytesInFlight(bound), StepHook.none());
        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(report.segmentsUploaded()).isGreaterThanOrEqualTo(16);
        assertThat(store[0].mostPuts()).isEqualTo(3);
        assertThat(store[0].mostBytes()).isLessThanOrEqualTo(bound).isGreaterThan(2 * 300 * 1024);
        TestRoots.assertEveryOffsetReadsBack(written, fs);
    }

    @Test
    void aSegmentLargerThanTheBoundRunsAlone() throws Exception {
        setUp();
        long bound = 1L << 20;
        Map<Path, List<Record>> written = new LinkedHashMap<>();
        written.putAll(shard(0, (3 << 20) / 2, 1000, 4000)); // segments of 1.5 MiB
        written.putAll(shard(1, 128 * 1024, 500, 2000));
        Path large = written.keySet().iterator().next();
        GatedStore store = new GatedStore(fs);
        PassReport report = pass(store, settings().withMaxBytesInFlight(bound), StepHook.none());
        assertThat(report.complete()).as(report.toString()).isTrue();
        List<ManifestEntry> entries = ManifestStore.read(large).entries();
        assertThat(entries).hasSizeGreaterThanOrEqualTo(2).allSatisfy(e -> {
            assertThat(e.sizeBytes()).isGreaterThan(bound);
            assertThat(store.ranBesideAnother(e.objectKey())).as("%s ran beside another upload", e.objectKey()).isFalse();
        });
        TestRoots.assertEveryOffsetReadsBack(written, fs);
    }

    /** How the oldest segment's put fails, once the second segment's copy is verified. */
    private enum OlderFailure { STORE_FAILURE, VERIFICATION, COLLISION }

    private ShardResult olderFails(OlderFailure how) throws Exception {
        setUp();
        Map<Path, List<Record>> written = shard(0, 16 * 1024, 200, 300);
        Path dir = written.keySet().iterator().next();
        List<SegmentFile> segments = SegmentFile.list(dir);
        assertThat(segments).hasSizeGreaterThanOrEqualTo(4);
        List<Long> sealed = segments.subList(0, segments.size() - 1).stream().map(SegmentFile::id).toList();
        CountDownLatch youngerVerified = new CountDownLatch(sealed.size() - 1);
        ObjectStore under = how == OlderFailure.VERIFICATION ? new CorruptingStore(fs, PipelinedOffloadTest::oldest) : fs;
        if (how == OlderFailure.COLLISION) {
            // Another object already at the oldest segment's key.
            String key = new dev.felix.offload.root.SegmentKeys("", "node-a").segmentKey(dir.getFileName().toString(), 0,
                    segments.get(0).id());
            fs.put(key, UploadBody.ofBytes(new byte[] {1, 2, 3}), PutOptions.defaults());
        }
        GatedStore store = new GatedStore(under).gate(key -> {
            if (oldest(key)) {
                try {
                    await(youngerVerified, "every younger segment is verified before the oldest's put goes on");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                if (how == OlderFailure.STORE_FAILURE) {
                    throw new TransientStoreException("simulated: connection reset", key, null, null);
                }
            }
        });
        List<Long> recorded = new CopyOnWriteArrayList<>();
        StepHook hook = (step, s, id) -> {
            if (step == OffloadStep.VERIFIED && id != sealed.get(0)) {
                youngerVerified.countDown();
            }
            if (step == OffloadStep.RECORDED) {
                recorded.add(id);
            }
        };
        PassReport report = pass(store, settings().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300)), hook);

        assertThat(report.complete()).isFalse();
        assertThat(recorded).as("no younger segment recorded").isEmpty();
        assertThat(ManifestStore.read(dir).isEmpty()).isTrue();
        assertThat(SegmentFile.list(dir)).as("nothing unlinked").hasSize(segments.size());
        // The younger copies are in the store, named by no manifest: orphans, or adopted by the next pass.
        for (SegmentFile f : segments.subList(1, segments.size() - 1)) {
            String key = new dev.felix.offload.root.SegmentKeys("", "node-a").segmentKey(dir.getFileName().toString(),
                    baseOf(f), f.id());
            assertThat(fs.head(key).size()).isPositive();
        }
        ShardResult shard = report.shards().get(0);
        assertThat(shard.pending()).isEqualTo(sealed.size());
        assertThat(shard.uploaded()).isEmpty();
        return shard;
    }

    private static long baseOf(SegmentFile f) {
        try {
            return dev.felix.offload.log.format.SegmentScan.of(f.log(), "s", f.id(), ScanDepth.RECORDS).baseOffset();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void anOlderStoreFailureRecordsNoYoungerSegment() throws Exception {
        ShardResult shard = olderFails(OlderFailure.STORE_FAILURE);
        assertThat(shard.stop()).isInstanceOf(ShardStop.Failed.class);
        assertThat(shard.problem()).startsWith("store failure on segment " + SegmentFile.list(shard0()).get(0).id())
                .contains("simulated: connection reset");
        // The next pass, the store answering again, records everything (adopting the younger copies).
        PassReport again = pass(fs, settings(), StepHook.none());
        assertThat(again.complete()).as(again.toString()).isTrue();
    }

    @Test
    void anOlderVerificationFailureRecordsNoYoungerSegment() throws Exception {
        ShardResult shard = olderFails(OlderFailure.VERIFICATION);
        assertThat(shard.stop()).isEqualTo(new ShardStop.VerificationFailed(SegmentFile.list(shard0()).get(0).id(), 3));
        assertThat(shard.problem()).contains("failed verification 3 times");
    }

    @Test
    void anOlderCollisionRecordsNoYoungerSegment() throws Exception {
        ShardResult shard = olderFails(OlderFailure.COLLISION);
        assertThat(shard.stop()).isInstanceOf(ShardStop.Collision.class);
        assertThat(shard.collision()).isNotNull();
        assertThat(shard.collision().segmentId()).isEqualTo(SegmentFile.list(shard0()).get(0).id());
    }

    /**
     * The oldest upload throws (a crash after INDEX_UPLOADED) while the shard is still handing out
     * segments, a younger one already ended: nothing younger may be recorded, or the manifest skips
     * the oldest for good. The order is forced by the bound: two small segments fit in 1 MiB, the
     * third waits for the second to give its bytes back (so the second has ended once the third's
     * upload begins), and the fourth, larger than the bound, is granted only once nothing else is in
     * flight, so the shard is still in send() when the oldest's failure reaches its commit.
     */
    @Test
    void anOlderUploadThatThrowsWhileSegmentsAreStillHandedOutRecordsNoYoungerSegment() throws Exception {
        setUp();
        long bound = 1L << 20;
        Path dir = root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
        ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(400 * 1024).withIndexSpacingBytes(4096)
                .withFsyncPolicy(FsyncPolicy.none());
        SplittableRandom random = new SplittableRandom(18);
        List<Record> list = new ArrayList<>();
        try (ShardLog log = ShardLog.open(dir, config)) {
            for (int i = 0; i < 430; i++) {
                // a record over the segment size gets a segment of its own: the fourth, larger than the bound
                byte[] bytes = new byte[i == 280 ? (3 << 20) / 2 : 4000];
                random.nextBytes(bytes);
                long offset = log.append(1000L + i, bytes);
                list.add(Record.plain(offset, 1000L + i, bytes));
            }
        }
        Map<Path, List<Record>> written = Map.of(dir, list);
        List<SegmentFile> segments = SegmentFile.list(dir);
        assertThat(segments).hasSize(6);
        long[] size = new long[segments.size()];
        for (int i = 0; i < size.length; i++) {
            size[i] = Files.size(segments.get(i).log());
        }
        assertThat(size[0] + size[1]).as("the two oldest fit in flight together").isLessThanOrEqualTo(bound);
        assertThat(size[0] + size[1] + size[2]).as("the third waits for the second").isGreaterThan(bound);
        assertThat(size[3]).as("the fourth runs alone").isGreaterThan(bound);
        List<Long> sealed = segments.subList(0, segments.size() - 1).stream().map(SegmentFile::id).toList();
        long failing = sealed.get(0);
        long third = sealed.get(2);

        CountDownLatch thirdUnderWay = new CountDownLatch(1);
        List<Long> recorded = new CopyOnWriteArrayList<>();
        StepHook hook = (step, s, id) -> {
            if (step == OffloadStep.INDEX_UPLOADED && id == third) {
                thirdUnderWay.countDown();
            }
            if (step == OffloadStep.INDEX_UPLOADED && id == failing) {
                try {
                    await(thirdUnderWay, "the third segment's upload begins while the oldest is held");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                throw new java.io.IOException("simulated crash after INDEX_UPLOADED of the oldest segment");
            }
            if (step == OffloadStep.RECORDED) {
                recorded.add(id);
            }
        };
        OffloadSettings settings = settings().withMaxBytesInFlight(bound)
                .withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300));
        PassReport broken = pass(fs, settings, hook);

        assertThat(broken.complete()).isFalse();
        assertThat(broken.shards().get(0).problem()).contains("simulated crash");
        assertThat(ids(ManifestStore.read(dir))).as("no entry younger than the failed oldest segment").isEmpty();
        assertThat(recorded).isEmpty();
        assertThat(Files.exists(segments.get(0).log())).as("the failed segment is still local").isTrue();

        PassReport resumed = pass(fs, settings, StepHook.none());
        assertThat(resumed.complete()).as(resumed.toString()).isTrue();
        assertThat(ids(ManifestStore.read(dir))).as("every sealed segment, oldest first, none skipped")
                .containsExactlyElementsOf(sealed);
        TestRoots.assertEveryOffsetReadsBack(written, fs);
    }

    private Path shard0() {
        return root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
    }

    private static List<Long> ids(Manifest m) {
        return m.entries().stream().map(ManifestEntry::segmentId).toList();
    }
}
