package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectDeleter;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.TransientStoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Local and remote retention of one shard against the filesystem store. */
class ShardRetentionTest {

    /** 300 records a minute apart: five hours, about five segments of 16 KiB. */
    private static final int RECORDS = 300;
    private static final Duration STEP = Duration.ofMinutes(1);

    @TempDir
    Path tmp;

    private Path root;
    private Path shard;
    private FilesystemStore store;
    private List<Record> written;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        shard = TestData.shardOf(root, "orders", 0);
        written = TestData.write(shard, RECORDS, STEP, 7);
        assertThat(SegmentFile.list(shard)).hasSizeGreaterThanOrEqualTo(4);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private static Clock at(Duration afterFirstRecord) {
        return Clock.fixed(TestData.FIRST_RECORD.plus(afterFirstRecord), ZoneOffset.UTC);
    }

    private ShardRetentionResult retain(RetentionSettings settings, Clock clock) throws IOException {
        return new ShardRetention(shard, store, settings, clock, RetentionHook.none(), 1000, TestData.ownership(), TestData.live(shard))
                .run(StopSignal.never());
    }

    private static RetentionSettings settings(long localBytes, long localMs, long bytes, long ms) {
        return new RetentionSettings(localBytes, localMs, bytes, ms);
    }

    private List<Long> localIds() throws IOException {
        return SegmentFile.list(shard).stream().map(SegmentFile::id).toList();
    }

    @Test
    void localBytesLimitRemovesOffloadedSegmentsOldestFirstAndTheLogStillOpens() throws Exception {
        TestData.offload(root, store);
        List<Long> before = localIds();
        long bytesBefore = TestData.localBytes(shard);
        long limit = 40_000;

        ShardRetentionResult r = retain(settings(limit, UNLIMITED, UNLIMITED, UNLIMITED), at(Duration.ZERO));

        assertThat(r.failure()).isNull();
        List<Long> after = localIds();
        assertThat(r.local().removedSegments()).isNotEmpty()
                .isEqualTo(before.subList(0, before.size() - after.size()));
        assertThat(after).isEqualTo(before.subList(before.size() - after.size(), before.size()));
        long bytesAfter = TestData.localBytes(shard);
        assertThat(bytesAfter).isLessThanOrEqualTo(limit).isEqualTo(r.local().localBytesAfter());
        assertThat(r.local().removedBytes()).isEqualTo(bytesBefore - bytesAfter);
        // Removing one more segment would not have been needed: the limit was not undercut by a whole segment.
        SegmentFile lastRemoved = SegmentFile.in(shard, r.local().removedSegments().get(r.local().removedSegments().size() - 1));
        assertThat(lastRemoved.log()).doesNotExist();
        assertThat(lastRemoved.index()).doesNotExist();
        assertThat(r.remote().expiredSegments()).isEmpty();
        assertThat(ManifestStore.read(shard).size()).isEqualTo(before.size() - 1);
        TestData.assertLocalLogOpens(shard, written);
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    @Test
    void aPassWithNothingToExpireLeavesTheShardDirectoryAsItWas() throws Exception {
        // Limits a fleet sets, far enough out that nothing goes: each segment's largest timestamp is looked at.
        TestData.offload(root, store);
        RetentionSettings far = settings(UNLIMITED, Duration.ofDays(30).toMillis(), UNLIMITED, Duration.ofDays(30).toMillis());
        ShardRetentionResult first = retain(far, at(Duration.ofDays(1)));
        assertThat(first.failure()).isNull();
        assertThat(first.local().removedSegments()).isEmpty();
        assertThat(first.remote().expiredSegments()).isEmpty();
        Path timestamps = shard.resolve(dev.felix.offload.copy.LargestTimestamps.FILE_NAME);
        assertThat(timestamps).exists();
        Object fileBefore = Files.readAttributes(timestamps, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        java.nio.file.attribute.FileTime dirBefore = Files.getLastModifiedTime(shard);

        ShardRetentionResult second = retain(far, at(Duration.ofDays(1)));

        assertThat(second.failure()).isNull();
        // Nothing rewritten: a replaced file would make the directory, and so the shard, look changed to
        // the offload pass's and the survey's memos at every retention pass.
        assertThat(Files.readAttributes(timestamps, java.nio.file.attribute.BasicFileAttributes.class).fileKey())
                .as("the largest-timestamps file, not replaced").isEqualTo(fileBefore);
        assertThat(Files.getLastModifiedTime(shard)).isEqualTo(dirBefore);
    }

    @Test
    void anEmptySealedSegmentNeverBlocksLocalRetention() throws Exception {
        // A roll of an empty active segment: two segments at the log's end offset, the first left empty.
        dev.felix.offload.log.SegmentInfo active;
        try (dev.felix.offload.log.ShardLog log = dev.felix.offload.log.ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
            active = log.segments().get(log.segments().size() - 1);
        }
        long emptyId = active.file().id() + 1;
        for (long id = emptyId; id <= emptyId + 1; id++) {
            try (dev.felix.offload.log.SegmentWriter w = dev.felix.offload.log.SegmentWriter.create(SegmentFile.in(shard, id),
                    new dev.felix.offload.log.format.SegmentHeader(3, active.nextOffset(), 1000L), 1024)) {
                w.sync();
            }
        }
        List<Record> all = new java.util.ArrayList<>(written);
        all.addAll(TestData.write(shard, 200, STEP, 8));
        TestData.offload(root, store);
        assertThat(ManifestStore.read(shard).entries()).noneMatch(e -> e.segmentId() == emptyId);
        List<Long> before = localIds();
        assertThat(before).contains(emptyId);

        ShardRetentionResult r = retain(settings(1, UNLIMITED, UNLIMITED, UNLIMITED), at(Duration.ZERO));

        assertThat(r.failure()).isNull();
        assertThat(r.local().removedSegments()).contains(emptyId);
        assertThat(localIds()).as("everything but the active segment went").containsExactly(before.get(before.size() - 1));
        TestData.assertLocalLogOpens(shard, all);
        TestData.assertReadsExactlyFrom(shard, all, 0, store);
    }

    @Test
    void localTimeLimitJudgesEachSegmentByItsNewestRecord() throws Exception {
        TestData.offload(root, store);
        Manifest manifest = ManifestStore.read(shard);
        // Now is five hours after the first record; keep two hours locally.
        Instant now = TestData.FIRST_RECORD.plus(Duration.ofHours(5));
        long cutoff = TestData.micros(now.minus(Duration.ofHours(2)));

        ShardRetentionResult r = retain(settings(UNLIMITED, Duration.ofHours(2).toMillis(), UNLIMITED, UNLIMITED),
                Clock.fixed(now, ZoneOffset.UTC));

        assertThat(r.failure()).isNull();
        List<Long> expectedGone = manifest.entries().stream().filter(e -> e.newestTimestampMicros() < cutoff)
                .map(ManifestEntry::segmentId).toList();
        assertThat(expectedGone).as("the data spans the cutoff").isNotEmpty().hasSizeLessThan(manifest.size());
        assertThat(r.local().removedSegments()).isEqualTo(expectedGone);
        assertThat(localIds()).doesNotContainAnyElementsOf(expectedGone);
        TestData.assertLocalLogOpens(shard, written);
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    @Test
    void aShardUnderGroupsHandedOverAsADirectoryIsNamedAsTheDataRootNamesIt() throws Exception {
        Path group = Files.createDirectories(root.resolve("groups")).resolve(shard.getFileName().toString());
        Files.move(shard, group);

        ShardRetentionResult r = new ShardRetention(group, store, settings(0, 0, UNLIMITED, UNLIMITED), at(Duration.ofDays(30)),
                RetentionHook.none(), 1000, TestData.ownership(), TestData.live(group)).run(StopSignal.never());

        assertThat(r.shard()).isEqualTo("groups/" + shard.getFileName());
    }

    @Test
    void withOffloadOffNothingLocalIsRemoved() throws Exception {
        List<Long> before = localIds();

        ShardRetentionResult r = retain(settings(0, 0, UNLIMITED, UNLIMITED), at(Duration.ofDays(30)));

        assertThat(r.failure()).isNull();
        assertThat(r.local().removedSegments()).isEmpty();
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.NotOffloaded.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("not offloaded");
        assertThat(localIds()).isEqualTo(before);
        assertThat(ManifestStore.fileIn(shard)).doesNotExist();
    }

    @Test
    void localRetentionStopsAtTheFirstSegmentNotYetOffloaded() throws Exception {
        // Only records below offset 150 are committed, so only segments wholly below it are offloaded.
        TestData.offload(root, store, dir -> OptionalLong.of(150));
        Manifest manifest = ManifestStore.read(shard);
        assertThat(manifest.size()).isPositive().isLessThan(localIds().size() - 1);

        ShardRetentionResult r = retain(settings(0, UNLIMITED, UNLIMITED, UNLIMITED), at(Duration.ZERO));

        assertThat(r.local().removedSegments())
                .isEqualTo(manifest.entries().stream().map(ManifestEntry::segmentId).toList());
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.NotOffloaded.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("not offloaded yet");
        TestData.assertLocalLogOpens(shard, written);
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    @Test
    void aSegmentWhoseLocalBytesDifferFromItsEntryStaysAndSoDoEveryNewerOne() throws Exception {
        TestData.offload(root, store);
        ManifestStore manifests = ManifestStore.open(shard);
        List<ManifestEntry> entries = new ArrayList<>(manifests.manifest().entries());
        ManifestEntry second = entries.get(1);
        entries.set(1, new ManifestEntry(second.segmentId(), second.baseOffset(), second.lastOffset(), second.sizeBytes(),
                second.oldestTimestampMicros(), second.newestTimestampMicros(), second.objectCrc32() ^ 1,
                second.objectKey()));
        manifests.save(Manifest.of(entries));
        List<Long> before = localIds();

        ShardRetentionResult r = retain(settings(0, UNLIMITED, UNLIMITED, UNLIMITED), at(Duration.ZERO));

        assertThat(r.local().removedSegments()).containsExactly(before.get(0));
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.Kept.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("crc32");
        assertThat(localIds()).isEqualTo(before.subList(1, before.size()));
    }

    @Test
    void theActiveSegmentIsNeverRemoved() throws Exception {
        TestData.offload(root, store);
        List<Long> before = localIds();

        ShardRetentionResult r = retain(settings(0, 0, UNLIMITED, UNLIMITED), at(Duration.ofDays(365)));

        assertThat(r.local().removedSegments()).hasSize(before.size() - 1);
        assertThat(localIds()).containsExactly(before.get(before.size() - 1));
        TestData.assertLocalLogOpens(shard, written);
        TestData.assertReadsExactlyFrom(shard, written, 0, store);
    }

    @Test
    void remoteTimeLimitExpiresOldEntriesAndDeletesTheirSegmentsAndIndexes() throws Exception {
        TestData.offload(root, store);
        Manifest before = ManifestStore.read(shard);
        Instant now = TestData.FIRST_RECORD.plus(Duration.ofHours(6));
        long cutoff = TestData.micros(now.minus(Duration.ofHours(3)));
        List<ManifestEntry> expiring = before.entries().stream().filter(e -> e.newestTimestampMicros() < cutoff).toList();
        assertThat(expiring).isNotEmpty().hasSizeLessThan(before.size());
        for (ManifestEntry e : expiring) {
            for (String key : TestData.storedKeysOf(e)) {
                assertThat(store.head(key).size()).isPositive();
            }
        }

        // Only retention.ms: the local limit follows it, so the expired segments leave local disk first.
        ShardRetentionResult r = retain(settings(UNLIMITED, UNLIMITED, UNLIMITED, Duration.ofHours(3).toMillis()),
                Clock.fixed(now, ZoneOffset.UTC));

        assertThat(r.failure()).isNull();
        assertThat(r.local().removedSegments()).isEqualTo(expiring.stream().map(ManifestEntry::segmentId).toList());
        assertThat(r.remote().expiredSegments()).isEqualTo(r.local().removedSegments());
        assertThat(r.remote().expiredBytes()).isEqualTo(expiring.stream().mapToLong(ManifestEntry::sizeBytes).sum());
        assertThat(r.remote().objectsDeleted()).isEqualTo(expiring.stream().mapToInt(e -> TestData.storedKeysOf(e).size()).sum());
        Manifest after = ManifestStore.read(shard);
        assertThat(after.entries()).isEqualTo(before.entries().subList(expiring.size(), before.size()));
        for (ManifestEntry e : expiring) {
            for (String key : TestData.storedKeysOf(e)) {
                assertThatThrownBy(() -> store.head(key)).isInstanceOf(ObjectNotFoundException.class);
            }
        }
        TestData.assertEveryEntryHasItsObject(shard, store);
        TestData.assertReadsExactlyFrom(shard, written, after.oldestEntry().orElseThrow().baseOffset(), store);
    }

    @Test
    void remoteBytesLimitCountsLocalAndRemoteBytesOnce() throws Exception {
        TestData.offload(root, store);
        Manifest before = ManifestStore.read(shard);
        long limit = 45_000;

        ShardRetentionResult r = retain(settings(UNLIMITED, UNLIMITED, limit, UNLIMITED), at(Duration.ZERO));

        assertThat(r.failure()).isNull();
        int expired = r.remote().expiredSegments().size();
        assertThat(expired).isPositive();
        assertThat(r.remote().expiredSegments())
                .isEqualTo(before.entries().subList(0, expired).stream().map(ManifestEntry::segmentId).toList());
        Manifest after = ManifestStore.read(shard);
        assertThat(after.entries()).isEqualTo(before.entries().subList(expired, before.size()));
        long total = shardBytes(after);
        assertThat(r.remote().totalBytesAfter()).isEqualTo(total).isLessThanOrEqualTo(limit);
        // Expiring one entry fewer would have left the shard above the limit.
        assertThat(total + before.entries().get(expired - 1).sizeBytes()).isGreaterThan(limit);
        TestData.assertEveryEntryHasItsObject(shard, store);
        TestData.assertLocalLogOpens(shard, written);
        TestData.assertReadsExactlyFrom(shard, written, firstReadable(after), store);
    }

    /** Remote entries plus local segments without an entry. */
    private long shardBytes(Manifest manifest) throws IOException {
        long total = manifest.totals().bytes();
        for (SegmentFile f : SegmentFile.list(shard)) {
            if (manifest.entries().stream().noneMatch(e -> e.segmentId() == f.id())) {
                total += Files.size(f.log());
            }
        }
        return total;
    }

    private long firstReadable(Manifest manifest) throws Exception {
        if (manifest.oldestEntry().isPresent()) {
            return manifest.oldestEntry().get().baseOffset();
        }
        try (var log = dev.felix.offload.log.ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
            return log.firstOffset();
        }
    }

    @Test
    void anEntryWhoseSegmentIsStillLocalIsNeverExpired() throws Exception {
        TestData.offload(root, store);
        Manifest before = ManifestStore.read(shard);
        ShardRetention retention = new ShardRetention(shard, store, settings(UNLIMITED, UNLIMITED, 0, 0),
                at(Duration.ofDays(30)), RetentionHook.none(), 1000, TestData.ownership(), TestData.live(shard));

        // Remote retention alone, with every offloaded segment still on local disk.
        RemoteRetentionResult r = retention.applyRemote(ManifestStore.open(shard), StopSignal.never());

        assertThat(r.expiredSegments()).isEmpty();
        assertThat(r.blockedBy()).containsInstanceOf(RetentionBlock.StillLocal.class);
        assertThat(r.blockedBy().orElseThrow().label()).contains("still on local disk");
        assertThat(ManifestStore.read(shard)).isEqualTo(before);
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void aCrashBetweenTheManifestAndTheDeletesLeavesOrphansNeverAnEntryWithoutItsObject() throws Exception {
        TestData.offload(root, store);
        Manifest before = ManifestStore.read(shard);
        String prefix = new SegmentKeys("", TestData.NODE).nodePrefix();
        var keysBefore = TestData.keys(store, prefix);
        RetentionHook crash = (step, s, detail) -> {
            if (step == RetentionStep.MANIFEST_SAVED) {
                throw new IOException("simulated crash after " + step);
            }
        };

        ShardRetentionResult r = new ShardRetention(shard, store, settings(UNLIMITED, UNLIMITED, 30_000, UNLIMITED),
                at(Duration.ZERO), crash, 1000, TestData.ownership(), TestData.live(shard))
                .journaling(ExpiryJournal.load(root)).run(StopSignal.never());

        assertThat(r.failure()).contains("simulated crash");
        Manifest after = ManifestStore.read(shard);
        assertThat(after.size()).isPositive().isLessThan(before.size());
        assertThat(TestData.keys(store, prefix)).as("nothing deleted yet").isEqualTo(keysBefore);
        TestData.assertEveryEntryHasItsObject(shard, store);
        TestData.assertReadsExactlyFrom(shard, written, firstReadable(after), store);

        // Retention's journal names exactly the expired entries' objects; the sweep leaves them to the
        // next retention pass, which deletes them.
        List<String> expiredKeys = new ArrayList<>();
        for (ManifestEntry e : before.entries().subList(0, before.size() - after.size())) {
            expiredKeys.addAll(TestData.storedKeysOf(e));
        }
        assertThat(ExpiryJournal.load(root).keys().keySet()).containsExactlyInAnyOrderElementsOf(expiredKeys);
        OrphanSweepReport sweep = new OrphanSweep(new DataRoot(root), store, new SegmentKeys("", TestData.NODE),
                at(Duration.ZERO), OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none())
                .run(StopSignal.never());
        assertThat(sweep.found()).isEmpty();
        assertThat(sweep.held()).isEmpty();
        RetentionReport next = new RetentionPass(new DataRoot(root), store,
                RetentionRules.builder(RetentionSettings.defaults()).build(),
                RetentionPassSettings.defaults().withSweepOrphans(false), at(Duration.ZERO), TestData.ENV,
                RetentionHook.none()).run(StopSignal.never());
        assertThat(next.succeeded()).as(next.failures().toString()).isTrue();
        assertThat(ExpiryJournal.load(root).keys()).isEmpty();
        var keysAfter = TestData.keys(store, prefix);
        assertThat(keysAfter).doesNotContainAnyElementsOf(expiredKeys).hasSize(keysBefore.size() - expiredKeys.size());
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void aCrashBetweenDeleteBatchesLeavesOnlyOrphansBehind() throws Exception {
        TestData.offload(root, store);
        AtomicInteger batches = new AtomicInteger();
        RetentionHook crash = (step, s, detail) -> {
            if (step == RetentionStep.OBJECT_BATCH_DELETED && batches.incrementAndGet() == 2) {
                throw new IOException("simulated crash after the second batch");
            }
        };

        ShardRetentionResult r = new ShardRetention(shard, store, settings(UNLIMITED, UNLIMITED, 0, UNLIMITED),
                at(Duration.ZERO), crash, 1, TestData.ownership(), TestData.live(shard)).run(StopSignal.never());

        assertThat(r.failure()).contains("simulated crash");
        assertThat(batches.get()).isEqualTo(2);
        TestData.assertEveryEntryHasItsObject(shard, store);
        // A later pass has nothing more to expire: what is left behind is for the sweep.
        ShardRetentionResult again = retain(settings(UNLIMITED, UNLIMITED, 0, UNLIMITED), at(Duration.ZERO));
        assertThat(again.failure()).isNull();
        assertThat(again.remote().expiredSegments()).isEmpty();
    }

    @Test
    void aStoreThatFailsToDeleteLeavesOrphansAndReportsThem() throws Exception {
        TestData.offload(root, store);
        Manifest before = ManifestStore.read(shard);
        ObjectDeleter failing = new ObjectDeleter() {
            @Override
            public void delete(String key) throws StoreException {
                throw new TransientStoreException("store unavailable", key, null, null);
            }

            @Override
            public void deleteAll(Collection<String> keys) throws StoreException {
                throw new TransientStoreException("store unavailable", null, null, null);
            }
        };

        ShardRetentionResult r = new ShardRetention(shard, failing, settings(UNLIMITED, UNLIMITED, 0, UNLIMITED),
                at(Duration.ZERO), RetentionHook.none(), 1000, TestData.ownership(), TestData.live(shard)).run(StopSignal.never());

        assertThat(r.failed()).isTrue();
        assertThat(r.failure()).contains("left to the orphan sweep").contains("store unavailable");
        int expired = r.remote().expiredSegments().size();
        assertThat(expired).isPositive();
        assertThat(r.remote().objectsLeft()).hasSize(before.entries().subList(0, expired).stream()
                .mapToInt(e -> TestData.storedKeysOf(e).size()).sum());
        assertThat(r.remote().objectsDeleted()).isZero();
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(before.entries().subList(expired, before.size()));
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void aStopRequestEndsBetweenBatchesWithEverythingWhole() throws Exception {
        TestData.offload(root, store);
        AtomicInteger batches = new AtomicInteger();
        RetentionHook count = (step, s, detail) -> {
            if (step == RetentionStep.OBJECT_BATCH_DELETED) {
                batches.incrementAndGet();
            }
        };

        ShardRetentionResult r = new ShardRetention(shard, store, settings(UNLIMITED, UNLIMITED, 0, UNLIMITED),
                at(Duration.ZERO), count, 1, TestData.ownership(), TestData.live(shard)).run(() -> batches.get() >= 1);

        assertThat(r.failure()).as("a stop is not a failure").isNull();
        assertThat(r.remote().deleteProblem()).isEqualTo(new DeleteShortfall.Stopped());
        assertThat(r.remote().objectsDeleted()).isEqualTo(1);
        assertThat(r.remote().objectsLeft()).isNotEmpty();
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void anUnreadableManifestStopsRetentionOfThatShard() throws Exception {
        TestData.offload(root, store);
        byte[] bytes = Files.readAllBytes(ManifestStore.fileIn(shard));
        bytes[bytes.length - 1] ^= 0x10;
        Files.write(ManifestStore.fileIn(shard), bytes);
        List<Long> before = localIds();

        ShardRetentionResult r = retain(settings(0, 0, 0, 0), at(Duration.ofDays(30)));

        assertThat(r.failure()).contains("manifest unreadable");
        assertThat(localIds()).isEqualTo(before);
        assertThat(Files.readAllBytes(ManifestStore.fileIn(shard))).isEqualTo(bytes);
    }
}
