package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Remote retention and the orphan sweep against S3Proxy, through both clients. */
class RetentionOnS3Test {

    @TempDir
    Path tmp;

    record Backend(String name, S3Server server, boolean minioClient) {
        ObjectStore open(String bucket) {
            var settings = server.settings(bucket).prefix("tiered").build();
            return minioClient ? MinioWire.store(settings) : AwsSdkWire.store(settings);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> backends() {
        return Stream.of(
                Arguments.of(new Backend("SDK on S3Proxy", S3Servers.s3proxy(), false)),
                Arguments.of(new Backend("MinIO client on S3Proxy", S3Servers.s3proxy(), true)));
    }

    private final ManualClock clock = new ManualClock(TestData.FIRST_RECORD.plus(Duration.ofHours(6)),
            ZoneOffset.UTC);
    private final SegmentKeys keys = new SegmentKeys("", TestData.NODE);

    private static List<String> objectsOf(List<ManifestEntry> entries) {
        List<String> out = new ArrayList<>();
        for (ManifestEntry e : entries) {
            out.addAll(TestData.storedKeysOf(e));
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aCrashAfterTheManifestLeavesOrphansThatTheSweepRemovesAndOtherNodesKeysStay(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path shard = TestData.shardOf(root, "orders", 0);
        List<Record> written = TestData.write(shard, 300, Duration.ofMinutes(1), 31);
        try (ObjectStore store = backend.open(backend.server().createBucket("retention"))) {
            TestData.offload(root, store);
            Manifest before = ManifestStore.read(shard);
            SegmentKeys otherNode = new SegmentKeys("", "node-b");
            String theirs = otherNode.segmentKey(shard.getFileName().toString(), 0, 0);
            store.put(theirs, UploadBody.ofBytes(new byte[] {7}), PutOptions.defaults());
            store.put(SegmentKeys.indexKeyFor(theirs), UploadBody.ofBytes(new byte[] {8}), PutOptions.defaults());
            TreeSet<String> ours = TestData.keys(store, keys.nodePrefix());
            RetentionHook crash = (step, s, detail) -> {
                if (step == RetentionStep.MANIFEST_SAVED) {
                    throw new IOException("simulated crash after " + step);
                }
            };

            ShardRetentionResult crashed = new ShardRetention(shard, store,
                    new RetentionSettings(UNLIMITED, UNLIMITED, UNLIMITED, Duration.ofHours(3).toMillis()), clock, crash, 2,
                    TestData.ownership(), TestData.live(shard)).journaling(ExpiryJournal.load(root))
                    .run(StopSignal.never());

            assertThat(crashed.failure()).contains("simulated crash");
            Manifest after = ManifestStore.read(shard);
            int expired = before.size() - after.size();
            assertThat(expired).isPositive().isLessThan(before.size());
            assertThat(TestData.keys(store, keys.nodePrefix())).as("nothing deleted yet").isEqualTo(ours);
            TestData.assertEveryEntryHasItsObject(shard, store);
            TestData.assertReadsExactlyFrom(shard, written, after.oldestEntry().orElseThrow().baseOffset(), store);

            // The expired entries' objects are named by nothing now but retention's journal, which the sweep
            // leaves to retention; the next retention pass deletes them (they were expired: no grace needed).
            List<String> expiredObjects = objectsOf(before.entries().subList(0, expired));
            assertThat(ExpiryJournal.load(root).keys().keySet()).containsExactlyInAnyOrderElementsOf(expiredObjects);
            OrphanSweepReport sweep = new OrphanSweep(new DataRoot(root), store, keys, clock,
                    OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none()).run(StopSignal.never());
            assertThat(sweep.found()).as("the journal's keys are retention's to finish").isEmpty();
            assertThat(sweep.held()).isEmpty();
            RetentionReport next = new RetentionPass(new DataRoot(root), store,
                    RetentionRules.builder(RetentionSettings.defaults()).build(),
                    RetentionPassSettings.defaults().withSweepOrphans(false), clock, TestData.ENV, RetentionHook.none())
                    .run(StopSignal.never());
            assertThat(next.succeeded()).as(next.failures().toString()).isTrue();
            assertThat(ExpiryJournal.load(root).keys()).isEmpty();
            assertThat(root.resolve(ExpiryJournal.FILE_NAME)).doesNotExist();

            TreeSet<String> left = TestData.keys(store, keys.nodePrefix());
            assertThat(left).containsExactlyInAnyOrderElementsOf(objectsOf(after.entries()));
            assertThat(store.head(theirs).size()).isEqualTo(1);
            assertThat(store.head(SegmentKeys.indexKeyFor(theirs)).size()).isEqualTo(1);
            TestData.assertReadsExactlyFrom(shard, written, after.oldestEntry().orElseThrow().baseOffset(), store);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aRetentionPassExpiresByTimeAndBytesAndFinishesDeletedStreams(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path byTime = TestData.shardOf(root, "by-time", 0);
        Path bySize = TestData.shardOf(root, "by-size", 0);
        Path gone = TestData.shardOf(root, "gone", 0);
        List<Record> timeWritten = TestData.write(byTime, 300, Duration.ofMinutes(1), 41);
        List<Record> sizeWritten = TestData.write(bySize, 300, Duration.ofMinutes(1), 42);
        TestData.write(gone, 120, Duration.ofMinutes(1), 43);
        try (ObjectStore store = backend.open(backend.server().createBucket("pass"))) {
            TestData.offload(root, store);
            List<String> goneObjects = objectsOf(ManifestStore.read(gone).entries());
            Files.createDirectories(root.resolve(".deleted"));
            Files.move(gone, root.resolve(".deleted").resolve(gone.getFileName()));
            // An upload's leftover of offsets the shard still holds (the newest records stay under 3 hours).
            String orphan = keys.segmentKey(byTime.getFileName().toString(), 290, 999);
            store.put(orphan, UploadBody.ofBytes(new byte[] {1, 2}), PutOptions.defaults());
            RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                    .forStreams("acme/default/by-time", RetentionOverride.none().with(RetentionSettings.RETENTION_MS,
                            Duration.ofHours(3).toMillis()))
                    .forShardDirectory(bySize.getFileName().toString(),
                            RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, 40_000))
                    .build();

            RetentionReport report = new RetentionPass(new DataRoot(root), store, rules,
                    RetentionPassSettings.defaults().withDeleteBatchSize(3)
                            .withOrphanSweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO)),
                    clock, TestData.ENV, RetentionHook.none()).run(StopSignal.never());

            assertThat(report.succeeded()).as(report.failures().toString()).isTrue();
            assertThat(report.remoteSegmentsDeleted()).isPositive();
            assertThat(report.deletedStreamDirectoriesFinished()).isEqualTo(1);
            assertThat(report.orphansDeleted()).isEqualTo(1);
            for (String k : goneObjects) {
                assertThatThrownBy(() -> store.head(k)).isInstanceOf(ObjectNotFoundException.class);
            }
            long cutoff = TestData.micros(clock.instant().minus(Duration.ofHours(3)));
            Manifest time = ManifestStore.read(byTime);
            assertThat(time.entries()).allSatisfy(e -> assertThat(e.newestTimestampMicros()).isGreaterThanOrEqualTo(cutoff));
            ShardRetentionResult size = report.shards().stream()
                    .filter(r -> r.shard().equals(bySize.getFileName().toString())).findFirst().orElseThrow();
            assertThat(size.remote().totalBytesAfter()).isLessThanOrEqualTo(40_000);
            TreeSet<String> left = TestData.keys(store, keys.nodePrefix());
            List<String> named = new ArrayList<>(objectsOf(time.entries()));
            named.addAll(objectsOf(ManifestStore.read(bySize).entries()));
            assertThat(left).containsExactlyInAnyOrderElementsOf(named);
            TestData.assertReadsExactlyFrom(byTime, timeWritten, time.oldestEntry().orElseThrow().baseOffset(), store);
            Manifest sizeManifest = ManifestStore.read(bySize);
            long sizeFirst = sizeManifest.oldestEntry().map(ManifestEntry::baseOffset)
                    .orElseGet(() -> localFirst(bySize));
            TestData.assertReadsExactlyFrom(bySize, sizeWritten, sizeFirst, store);
        }
    }

    private static long localFirst(Path shard) {
        try (var log = dev.felix.offload.log.ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
            return log.firstOffset();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void aDryRunSweepOnlyReports(Backend backend) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 120, Duration.ofMinutes(1), 51);
        try (ObjectStore store = backend.open(backend.server().createBucket("dry"))) {
            TestData.offload(root, store);
            String orphan = keys.segmentKey(shard.getFileName().toString(), 100, 999);
            store.put(orphan, UploadBody.ofBytes(new byte[] {1}), PutOptions.defaults());
            TreeSet<String> before = TestData.keys(store, "");

            OrphanSweepReport r = new OrphanSweep(new DataRoot(root), store, keys, clock,
                    OrphanSweepSettings.defaults().withGrace(Duration.ZERO).withDryRun(true), RetentionHook.none())
                    .run(StopSignal.never());

            assertThat(r.found()).containsExactly(orphan);
            assertThat(r.eligible()).containsExactly(orphan);
            assertThat(r.deleted()).isEmpty();
            assertThat(TestData.keys(store, "")).isEqualTo(before);
            assertThat(root.resolve("offload.orphans")).doesNotExist();
        }
    }
}
