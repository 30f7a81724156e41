package dev.felix.offload.retention;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.copy.StopSignal;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.copy.LargestTimestamps;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the local side is wrong: a rotted sealed segment whose copy is proven, one that scans clean
 * with other bytes than its entry, and record timestamps that step back or lie ahead of the clock.
 */
class LocalWrongTest {

    @TempDir
    Path tmp;
    Path root;
    Path shard;
    FilesystemStore store;

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        shard = TestData.shardOf(root, "orders", 0);
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private ShardRetentionResult retain(RetentionSettings settings, Instant now) throws Exception {
        return new ShardRetention(shard, store, settings, Clock.fixed(now, ZoneOffset.UTC), RetentionHook.none(), 1000,
                TestData.ownership(), TestData.live(shard)).run(StopSignal.never());
    }

    @Test
    void aRottedSegmentGoesOnceItsCopyReverifiesAndThePassReportsIt() throws Exception {
        List<Record> written = TestData.write(shard, 200, Duration.ofSeconds(1), 3);
        TestData.offload(root, store);
        SegmentFile first = SegmentFile.list(shard).get(0);
        long at = Files.size(first.log()) / 2;
        flip(first.log(), at);

        ShardRetentionResult r = retain(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED), TestData.FIRST_RECORD);

        assertThat(r.local().removedSegments()).as("the rot goes, and so do the clean ones above it").startsWith(0L);
        assertThat(SegmentFile.list(shard)).as("only the active segment is left").hasSize(1);
        assertThat(Files.exists(first.log())).isFalse();
        assertThat(r.problems()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(RetentionProblem.Kind.LOCAL_DAMAGED);
            assertThat(p.segment()).isZero();
            assertThat(p.byteAt()).isBetween(32L, at);
            assertThat(p.detail()).contains("re-verified").contains("read-back");
        });
        RetentionReport report = new RetentionReport(TestData.NODE, List.of(r), DeletedStreamsReport.nothing(),
                java.util.Optional.empty(), false, Duration.ZERO);
        assertThat(report.succeeded()).as("the pass reports the damage").isFalse();
        assertThat(report.failures()).containsKey(r.shard());
        // Every record still reads, those of the rotted segment from its copy.
        TestData.assertReadsExactlyFrom(shard, written, 0, store);

        ShardRetentionResult again = retain(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED), TestData.FIRST_RECORD);
        assertThat(again.problems()).as("nothing left to report").isEmpty();
    }

    @Test
    void aRottedSegmentWhoseCopyRottedTooStays() throws Exception {
        TestData.write(shard, 200, Duration.ofSeconds(1), 3);
        TestData.offload(root, store);
        SegmentFile first = SegmentFile.list(shard).get(0);
        flip(first.log(), Files.size(first.log()) / 2);
        ManifestEntry entry = ManifestStore.read(shard).oldestEntry().orElseThrow();
        Path object = tmp.resolve("store").resolve(entry.objectKey());
        flip(object, 40);

        ShardRetentionResult r = retain(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED), TestData.FIRST_RECORD);

        assertThat(r.local().removedSegments()).isEmpty();
        assertThat(Files.exists(first.log())).isTrue();
        assertThat(r.problems()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(RetentionProblem.Kind.LOCAL_DAMAGED);
            assertThat(p.detail()).contains("kept").contains("no longer matches its entry");
        });
    }

    @Test
    void aCleanSegmentWithOtherBytesIsKeptAndItsFirstDifferingByteNamed() throws Exception {
        TestData.write(shard, 200, Duration.ofSeconds(1), 3);
        TestData.offload(root, store);
        SegmentFile first = SegmentFile.list(shard).get(0);
        byte[] before = Files.readAllBytes(first.log());
        // Other valid bytes at the same offsets: the same records with one payload byte changed, written
        // through the log so every checksum holds.
        Path other = TestData.shardOf(Files.createDirectories(tmp.resolve("other")), "orders", 0);
        List<Record> records = recordsOf(shard, first);
        try (ShardLog log = ShardLog.open(other, TestData.SMALL_SEGMENTS)) {
            for (int i = 0; i < records.size(); i++) {
                byte[] payload = records.get(i).payload().clone();
                if (i == 3 && payload.length > 0) {
                    payload[0] ^= 1;
                }
                log.append(records.get(i).timestampMicros(), payload);
            }
        }
        byte[] replaced = Arrays.copyOf(Files.readAllBytes(SegmentFile.list(other).get(0).log()), before.length);
        long expectedAt = Arrays.mismatch(before, replaced);
        assertThat(expectedAt).isPositive();
        Files.write(first.log(), replaced);

        ShardRetentionResult r = retain(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED), TestData.FIRST_RECORD);

        assertThat(r.local().removedSegments()).as("ambiguous: nothing goes").isEmpty();
        assertThat(r.local().blockedBy()).containsInstanceOf(RetentionBlock.Kept.class);
        assertThat(r.local().blockedBy().orElseThrow().label()).contains("valid bytes");
        assertThat(r.problems()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(RetentionProblem.Kind.LOCAL_MISMATCH);
            assertThat(p.segment()).isZero();
            assertThat(p.byteAt()).isEqualTo(expectedAt);
        });
    }

    @Test
    void timeRetentionJudgesASegmentByItsLargestTimestampLocallyAndRemotely() throws Exception {
        // Segment 0's first records are 10 days old, the rest 30 days old (a clock that stepped back).
        Instant now = Instant.parse("2030-03-01T00:00:00Z");
        long young = TestData.micros(now.minus(Duration.ofDays(10)));
        long old = TestData.micros(now.minus(Duration.ofDays(30)));
        writeWithTimestamps(300, i -> i < 10 ? young + i : old + i);
        TestData.offload(root, store);
        List<SegmentFile> segments = SegmentFile.list(shard);
        assertThat(segments.size()).isGreaterThan(2);
        long days20 = Duration.ofDays(20).toMillis();

        ShardRetentionResult r = retain(new RetentionSettings(UNLIMITED, days20, UNLIMITED, days20), now);
        assertThat(r.local().removedSegments()).as("segment 0 is inside the limit and holds the rest back").isEmpty();
        assertThat(r.remote().expiredSegments()).isEmpty();

        // Remotely too, with the local copies gone and the side file lost: it is rebuilt from the objects.
        retain(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED), now);
        assertThat(SegmentFile.list(shard)).hasSize(1);
        Files.delete(shard.resolve(LargestTimestamps.FILE_NAME));
        r = retain(new RetentionSettings(UNLIMITED, UNLIMITED, UNLIMITED, days20), now);
        assertThat(r.remote().expiredSegments()).isEmpty();
        ManifestEntry oldest = ManifestStore.read(shard).oldestEntry().orElseThrow();
        assertThat(oldest.segmentId()).isZero();
        assertThat(oldest.newestTimestampMicros()).as("the manifest keeps the last record's").isLessThan(young);
        assertThat(LargestTimestamps.load(shard).of(oldest)).hasValue(young + 9);

        // Once segment 0's largest is past the limit, everything goes, oldest first.
        r = retain(new RetentionSettings(UNLIMITED, UNLIMITED, UNLIMITED, days20), now.plus(Duration.ofDays(11)));
        assertThat(r.remote().expiredSegments()).startsWith(0L).hasSize(segments.size() - 1);
        assertThat(r.problems()).isEmpty();
    }

    @Test
    void aSegmentAheadOfTheClockIsKeptAndReported() throws Exception {
        Instant now = Instant.parse("2030-03-01T00:00:00Z");
        long old = TestData.micros(now.minus(Duration.ofDays(30)));
        long ahead = TestData.micros(now.plus(Duration.ofDays(365)));
        writeWithTimestamps(300, i -> i == 5 ? ahead : old + i);
        TestData.offload(root, store);
        long days20 = Duration.ofDays(20).toMillis();

        ShardRetentionResult r = retain(new RetentionSettings(UNLIMITED, days20, UNLIMITED, days20), now);

        assertThat(r.local().removedSegments()).isEmpty();
        assertThat(r.remote().expiredSegments()).isEmpty();
        assertThat(r.problems()).singleElement().satisfies(p -> {
            assertThat(p.kind()).isEqualTo(RetentionProblem.Kind.FUTURE_TIMESTAMP);
            assertThat(p.segment()).isZero();
        });
    }

    private void writeWithTimestamps(int records, java.util.function.IntToLongFunction ts) throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        try (ShardLog log = ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
            for (int i = 0; i < records; i++) {
                byte[] payload = new byte[200];
                random.nextBytes(payload);
                log.append(ts.applyAsLong(i), payload);
            }
        }
    }

    private static List<Record> recordsOf(Path shardDir, SegmentFile f) throws Exception {
        List<Record> out = new ArrayList<>();
        try (var scanner = dev.felix.offload.log.format.SegmentScanner.open(f.log(), "s", f.id(), ScanDepth.RECORDS)) {
            for (Record r = scanner.nextRecord(); r != null; r = scanner.nextRecord()) {
                out.add(r);
            }
        }
        return out;
    }

    private static void flip(Path file, long at) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x20));
            one.rewind();
            ch.write(one, at);
        }
    }
}
