package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.recovery.RecoveryOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardLogTest {

    private static final ShardLogConfig SMALL = ShardLogConfig.defaults().withSegmentSizeBytes(1024)
            .withIndexSpacingBytes(128);

    @TempDir
    Path root;

    private Path shard() {
        return root.resolve(new ShardKey("acme", "default", "orders", 0).directoryName());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] payload(long offset, int size) {
        byte[] b = new byte[size];
        new SplittableRandom(offset).nextBytes(b);
        return b;
    }

    private static List<Record> readAll(ShardLog log, long from) throws Exception {
        List<Record> out = new ArrayList<>();
        long next = from;
        while (true) {
            ReadResult r = log.read(next, 1000, 1 << 20);
            assertThat(r).isInstanceOf(ReadResult.Records.class);
            ReadResult.Records records = (ReadResult.Records) r;
            if (records.records().isEmpty()) {
                return out;
            }
            out.addAll(records.records());
            next = records.nextOffset();
        }
    }

    @Test
    void appendsAndReadsBackAcrossSegments() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 200; i++) {
                assertThat(log.append(1000 + i, payload(i, 40))).isEqualTo(i);
            }
            assertThat(log.segments()).hasSizeGreaterThan(5);
            List<Record> all = readAll(log, 0);
            assertThat(all).hasSize(200);
            for (int i = 0; i < 200; i++) {
                assertThat(all.get(i)).isEqualTo(Record.plain(i, 1000 + i, payload(i, 40)));
            }
            // A read from the middle of a segment returns the asked offset first, crossing boundaries.
            ReadResult.Records mid = (ReadResult.Records) log.read(77, 50, Long.MAX_VALUE);
            assertThat(mid.records()).extracting(Record::offset).containsExactlyElementsOf(
                    java.util.stream.LongStream.range(77, 127).boxed().toList());
            assertThat(mid.nextOffset()).isEqualTo(127);
        }
        // Reopened, the same records are there and appends continue.
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThat(log.nextOffset()).isEqualTo(200);
            assertThat(log.append(5, bytes("more"))).isEqualTo(200);
            assertThat(readAll(log, 195)).extracting(Record::offset).containsExactly(195L, 196L, 197L, 198L, 199L, 200L);
        }
    }

    @Test
    void rollsExactlyAtTheSegmentSize() throws Exception {
        int recordSize = RecordCodec.encodedLength(RecordKind.PLAIN, 100);
        long size = SegmentHeader.LENGTH + 3L * recordSize; // exactly three records fit
        try (ShardLog log = ShardLog.open(shard(), SMALL.withSegmentSizeBytes(size))) {
            for (int i = 0; i < 3; i++) {
                log.append(i, payload(i, 100));
            }
            assertThat(log.segments()).hasSize(1);
            assertThat(log.segments().get(0).size()).isEqualTo(size);
            log.append(3, payload(3, 100));
            assertThat(log.segments()).hasSize(2);
            assertThat(log.segments().get(1).baseOffset()).isEqualTo(3);
            assertThat(log.segments().get(0).active()).isFalse();
        }
    }

    @Test
    void anOversizedRecordGetsASegmentOfItsOwn() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            log.append(1, bytes("small"));
            log.append(2, payload(1, 5000)); // larger than the 1 KiB segment size
            log.append(3, bytes("after"));
            List<SegmentInfo> segments = log.segments();
            assertThat(segments).hasSize(3);
            assertThat(segments.get(1).recordCount()).isEqualTo(1);
            assertThat(segments.get(1).baseOffset()).isEqualTo(1);
            assertThat(readAll(log, 0)).extracting(r -> r.payload().length).containsExactly(5, 5000, 5);
        }
    }

    @Test
    void refusesAPayloadOverTheLimitBeforeWritingAnything() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            log.append(1, bytes("a"));
            long sizeBefore = Files.size(log.segments().get(0).file().log());
            assertThatThrownBy(() -> log.append(2, new byte[RecordCodec.MAX_PAYLOAD_BYTES + 1]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("over the limit");
            assertThat(Files.size(log.segments().get(0).file().log())).isEqualTo(sizeBefore);
            assertThat(log.nextOffset()).isEqualTo(1);
        }
    }

    @Test
    void batchesCarryTheirTagAndContinueMarks() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            log.append(1, bytes("plain"));
            long first = log.appendBatch(42, 7, 2, List.of(bytes("a"), bytes("b"), bytes("c")));
            assertThat(first).isEqualTo(1);
            List<Record> all = readAll(log, 0);
            assertThat(all).extracting(Record::kind).containsExactly(RecordKind.PLAIN, RecordKind.BATCH_OPEN,
                    RecordKind.BATCH_CONTINUE, RecordKind.BATCH_CONTINUE);
            assertThat(all.get(1).tag().producerId()).isEqualTo(42);
            assertThat(all.get(1).tag().sequence()).isEqualTo(7);
            assertThat(all.get(1).tag().recordCount()).isEqualTo(3);
        }
    }

    @Test
    void generationStartNeedsTheFleetToHaveFinalizedIt() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThatThrownBy(() -> log.appendGenerationStart(3, 1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not finalized");
        }
    }

    @Test
    void generationStartRollsOntoV4AndLaterSegmentsStayV4() throws Exception {
        ShardLogConfig config = SMALL.withGenerationStartFinalized(true);
        try (ShardLog log = ShardLog.open(shard(), config)) {
            log.append(1, bytes("before"));
            assertThat(log.segments().get(0).version()).isEqualTo(3);
            assertThat(log.appendGenerationStart(5, 2)).isEqualTo(1);
            assertThat(log.segments()).extracting(SegmentInfo::version).containsExactly(3, 4);
            for (int i = 0; i < 40; i++) {
                log.append(3 + i, payload(i, 60));
            }
            assertThat(log.segments().size()).isGreaterThan(3);
            assertThat(log.segments().subList(1, log.segments().size())).allMatch(s -> s.version() == 4);
            Record gen = readAll(log, 1).get(0);
            assertThat(gen.kind()).isEqualTo(RecordKind.GENERATION_START);
            assertThat(gen.generation()).isEqualTo(5);
        }
    }

    @Test
    void anEmptyActiveSegmentIsReplacedInPlaceWhenTheVersionMustRise() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL.withGenerationStartFinalized(true))) {
            log.appendGenerationStart(1, 1);
            assertThat(log.segments()).hasSize(1);
            assertThat(log.segments().get(0).version()).isEqualTo(4);
            assertThat(log.segments().get(0).file().id()).isZero();
        }
    }

    @Test
    void aV2ActiveSegmentTakesPlainRecordsAndRollsBeforeTheFirstMark() throws Exception {
        Path dir = Files.createDirectories(shard());
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 0), new SegmentHeader(2, 0, 0), 128)) {
            w.append(Record.plain(0, 1, bytes("old")));
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.append(2, bytes("plain in v2"));
            assertThat(log.segments()).extracting(SegmentInfo::version).containsExactly(2);
            log.appendBatch(9, 0, 3, List.of(bytes("marked")));
            assertThat(log.segments()).extracting(SegmentInfo::version).containsExactly(2, 3);
            assertThat(log.segments().get(1).baseOffset()).isEqualTo(2);
        }
    }

    @Test
    void aV3ActiveSegmentRollsBeforeAGenerationStart() throws Exception {
        Path dir = Files.createDirectories(shard());
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 0), SegmentHeader.v3(0, 0), 128)) {
            w.append(Record.plain(0, 1, bytes("v3")));
        }
        try (ShardLog log = ShardLog.open(dir, SMALL.withGenerationStartFinalized(true))) {
            log.appendGenerationStart(2, 2);
            assertThat(log.segments()).extracting(SegmentInfo::version).containsExactly(3, 4);
        }
    }

    @Test
    void aTornAppendIsCutBackToTheWholePrefix() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 25; trial++) {
            Path dir = root.resolve("torn-" + trial);
            List<Record> written = new ArrayList<>();
            try (ShardLog log = ShardLog.open(dir, SMALL)) {
                for (int i = 0; i < 30; i++) {
                    byte[] p = payload(trial * 100 + i, random.nextInt(80));
                    log.append(i, p);
                    written.add(Record.plain(i, i, p));
                }
            }
            SegmentFile active = SegmentFile.list(dir).get(SegmentFile.list(dir).size() - 1);
            long size = Files.size(active.log());
            long cut = SegmentHeader.LENGTH + 1 + random.nextLong(size - SegmentHeader.LENGTH - 1);
            try (FileChannel ch = FileChannel.open(active.log(), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            try (ShardLog log = ShardLog.open(dir, SMALL)) {
                List<Record> back = readAll(log, 0);
                assertThat(back).isEqualTo(written.subList(0, back.size()));
                assertThat(log.nextOffset()).isEqualTo(back.size());
                assertThat(Files.size(active.log())).isLessThanOrEqualTo(cut);
                // The log goes on from the clean prefix.
                assertThat(log.append(99, bytes("next"))).isEqualTo(back.size());
            }
        }
    }

    @Test
    void checksumDamageAtTheTailNeedsTheOptIn() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            log.append(1, bytes("one"));
            log.append(2, bytes("two"));
        }
        Path segment = SegmentFile.in(shard(), 0).log();
        byte[] content = Files.readAllBytes(segment);
        content[content.length - 1] ^= 0x01; // the last payload byte
        Files.write(segment, content);
        assertThatThrownBy(() -> ShardLog.open(shard(), SMALL)).isInstanceOf(CorruptionException.class)
                .satisfies(e -> assertThat(((CorruptionException) e).kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM));
        assertThat(Files.readAllBytes(segment)).as("a refused open changes nothing").isEqualTo(content);
        try (ShardLog log = ShardLog.open(shard(), SMALL.withRecovery(new RecoveryOptions(true)))) {
            assertThat(log.nextOffset()).isEqualTo(1);
        }
    }

    @Test
    void damageInAnOlderSegmentFailsTheOpenWithItsSite() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 60; i++) {
                log.append(i, payload(i, 50));
            }
        }
        Path first = SegmentFile.in(shard(), 0).log();
        byte[] content = Files.readAllBytes(first);
        content[SegmentHeader.LENGTH + 2] ^= 0x40; // the first record's length field
        Files.write(first, content);
        assertThatThrownBy(() -> ShardLog.open(shard(), SMALL.withRecovery(new RecoveryOptions(true))))
                .isInstanceOf(CorruptionException.class)
                .satisfies(e -> {
                    CorruptionException c = (CorruptionException) e;
                    assertThat(c.kind()).isEqualTo(CorruptionKind.RECORD_HEADER_CHECKSUM);
                    assertThat(c.site().segmentId()).isZero();
                    assertThat(c.site().position()).isEqualTo(SegmentHeader.LENGTH);
                });
    }

    @Test
    void segmentsAreOrderedByTheNumberInTheirNames() throws Exception {
        Path dir = Files.createDirectories(shard());
        long next = 0;
        for (long id : new long[] {9, 10, 100}) {
            try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, id), SegmentHeader.v3(next, 0), 128)) {
                for (int i = 0; i < 3; i++) {
                    w.append(Record.plain(next, next, bytes("r" + next)));
                    next++;
                }
            }
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.segments()).extracting(s -> s.file().id()).containsExactly(9L, 10L, 100L);
            assertThat(readAll(log, 0)).extracting(Record::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
            log.append(1, bytes("x"));
            log.flush();
        }
    }

    @Test
    void nonContiguousSegmentsAreAnErrorNamingBothFiles() throws Exception {
        Path dir = Files.createDirectories(shard());
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 0), SegmentHeader.v3(0, 0), 128)) {
            w.append(Record.plain(0, 0, bytes("a")));
            w.append(Record.plain(1, 0, bytes("b")));
        }
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 1), SegmentHeader.v3(5, 0), 128)) {
            w.append(Record.plain(5, 0, bytes("gap")));
        }
        assertThatThrownBy(() -> ShardLog.open(dir, SMALL)).isInstanceOf(CorruptionException.class)
                .hasMessageContaining("00000000000000000000.log")
                .hasMessageContaining("segment 1")
                .satisfies(e -> assertThat(((CorruptionException) e).kind()).isEqualTo(CorruptionKind.OFFSET_OUT_OF_ORDER));
    }

    @Test
    void aShardWhoseHistoryBeginsLaterReadsTrimmedBelowIt() throws Exception {
        Path dir = Files.createDirectories(shard());
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, 3), SegmentHeader.v3(500, 0), 128)) {
            w.append(Record.plain(500, 0, bytes("first kept")));
        }
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.firstOffset()).isEqualTo(500);
            assertThat(log.read(499, 10, 1000)).isEqualTo(new ReadResult.Trimmed(500));
            assertThat(log.read(0, 10, 1000)).isEqualTo(new ReadResult.Trimmed(500));
            assertThat(((ReadResult.Records) log.read(500, 10, 1000)).records()).hasSize(1);
            assertThat(((ReadResult.Records) log.read(501, 10, 1000)).records()).isEmpty();
        }
    }

    @Test
    void missingOrGarbageIndexesAreRebuilt() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 100; i++) {
                log.append(i, payload(i, 30));
            }
        }
        List<SegmentFile> files = SegmentFile.list(shard());
        SegmentIndex original = SegmentIndex.read(files.get(0).index(), "s", 0);
        Files.delete(files.get(0).index());
        Files.write(files.get(1).index(), bytes("this is not an index file at all"));
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThat(readAll(log, 0)).hasSize(100);
        }
        SegmentIndex rebuilt = SegmentIndex.read(files.get(0).index(), "s", 0);
        assertThat(rebuilt.encode()).isEqualTo(original.encode());
        assertThat(SegmentIndex.read(files.get(1).index(), "s", 1).size()).isPositive();
    }

    @Test
    void aLyingIndexEntryFallsBackToAScanFromTheStart() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL.withSegmentSizeBytes(1 << 20))) {
            for (int i = 0; i < 100; i++) {
                log.append(i, payload(i, 30));
            }
        }
        SegmentFile file = SegmentFile.list(shard()).get(0);
        SegmentIndex index = SegmentIndex.read(file.index(), "s", 0);
        long[] offsets = new long[index.size()];
        long[] positions = new long[index.size()];
        for (int i = 0; i < index.size(); i++) {
            offsets[i] = index.offsetAt(i);
            positions[i] = index.positionAt(i) + (i > 0 ? 3 : 0); // every entry but the first points mid-record
        }
        // Sealed only when another segment follows; add one so the lying index is loaded, not rebuilt.
        try (ShardLog log = ShardLog.open(shard(), SMALL.withSegmentSizeBytes(64))) {
            log.append(1, bytes("roll"));
        }
        Files.write(file.index(), SegmentIndex.of(index.baseOffset(), offsets, positions).encode());
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            ReadResult.Records r = (ReadResult.Records) log.read(90, 5, Long.MAX_VALUE);
            assertThat(r.records()).extracting(Record::offset).containsExactly(90L, 91L, 92L, 93L, 94L);
        }
    }

    @Test
    void maxBytesLimitsAReadButTheFirstRecordAlwaysComes() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 10; i++) {
                log.append(i, payload(i, 100));
            }
            int one = RecordCodec.encodedLength(RecordKind.PLAIN, 100);
            assertThat(((ReadResult.Records) log.read(0, 100, 1)).records()).hasSize(1);
            assertThat(((ReadResult.Records) log.read(0, 100, 3L * one)).records()).hasSize(3);
            assertThat(((ReadResult.Records) log.read(0, 100, 3L * one + 1)).records()).hasSize(3);
            assertThat(((ReadResult.Records) log.read(0, 2, Long.MAX_VALUE)).records()).hasSize(2);
        }
    }

    @Test
    void deleteSegmentsBelowRemovesWholeSealedSegmentsOnly() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 100; i++) {
                log.append(i, payload(i, 50));
            }
            List<SegmentInfo> before = log.segments();
            long cutInsideSecond = before.get(1).baseOffset() + 1;
            List<SegmentFile> removed = log.deleteSegmentsBelow(cutInsideSecond);
            assertThat(removed).containsExactly(before.get(0).file());
            assertThat(Files.exists(before.get(0).file().log())).isFalse();
            assertThat(Files.exists(before.get(0).file().index())).isFalse();
            assertThat(log.firstOffset()).isEqualTo(before.get(1).baseOffset());
            assertThat(log.read(0, 1, 100)).isEqualTo(new ReadResult.Trimmed(before.get(1).baseOffset()));

            log.deleteSegmentsBelow(Long.MAX_VALUE);
            assertThat(log.segments()).hasSize(1);
            assertThat(log.segments().get(0).active()).isTrue();
            assertThat(readAll(log, log.firstOffset())).isNotEmpty();
        }
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThat(log.nextOffset()).isEqualTo(100);
        }
    }

    @Test
    void truncateCutsTheHoldingSegmentAndDeletesLaterOnes() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 100; i++) {
                log.append(i, payload(i, 50));
            }
            int segmentsBefore = log.segments().size();
            log.truncate(37);
            assertThat(log.nextOffset()).isEqualTo(37);
            assertThat(log.segments().size()).isLessThan(segmentsBefore);
            assertThat(readAll(log, 0)).extracting(Record::offset).hasSize(37).last().isEqualTo(36L);
            assertThat(log.append(1, bytes("new 37"))).isEqualTo(37);
            log.truncate(1000); // past the end: nothing happens
            assertThat(log.nextOffset()).isEqualTo(38);
        }
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            List<Record> all = readAll(log, 0);
            assertThat(all).hasSize(38);
            assertThat(all.get(37).payload()).isEqualTo(bytes("new 37"));
        }
        assertThat(ShardLogTestSupport.fsckVerdict(shard())).isEqualTo("ok");
    }

    @Test
    void resetStartsAnEmptyLogAtAPlacedBaseWithANewSegmentId() throws Exception {
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 50; i++) {
                log.append(i, payload(i, 50));
            }
            long lastId = log.segments().get(log.segments().size() - 1).file().id();
            log.reset(1_000_000);
            assertThat(log.segments()).hasSize(1);
            assertThat(log.segments().get(0).file().id()).isEqualTo(lastId + 1);
            assertThat(log.firstOffset()).isEqualTo(1_000_000);
            assertThat(log.append(1, bytes("x"))).isEqualTo(1_000_000);
        }
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThat(log.firstOffset()).isEqualTo(1_000_000);
            assertThat(log.nextOffset()).isEqualTo(1_000_001);
        }
    }

    @Test
    void aSegmentCreationCutShortLeavesOnlyATemporaryThatIsIgnoredAndReplaced() throws Exception {
        long nextId;
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            for (int i = 0; i < 10; i++) {
                log.append(i, payload(i, 90));
            }
            nextId = log.segments().get(log.segments().size() - 1).file().id() + 1;
        }
        // A process killed while creating the next segment: its header half written, never moved into place.
        Path temp = shard().resolve(SegmentFile.logName(nextId) + DurableFiles.TEMP_SUFFIX);
        Files.write(temp, new byte[] {0x46, 0x4C});
        assertThat(ShardLogTestSupport.fsckVerdict(shard())).isEqualTo("ok");
        try (ShardLog log = ShardLog.open(shard(), SMALL)) {
            assertThat(log.nextOffset()).isEqualTo(10);
            for (int i = 10; i < 40; i++) {
                log.append(i, payload(i, 90)); // rolls, creating segment nextId over the leftover
            }
            assertThat(log.segments()).extracting(s -> s.file().id()).contains(nextId);
        }
        assertThat(temp).doesNotExist();
        assertThat(ShardLogTestSupport.fsckVerdict(shard())).isEqualTo("ok");
    }

    @Test
    void aBlankFirstSegmentIsDeletedAndTheLogStartsEmpty() throws Exception {
        Path dir = Files.createDirectories(shard());
        Files.write(dir.resolve(SegmentFile.logName(0)), new byte[SegmentHeader.LENGTH]);
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            assertThat(log.nextOffset()).isZero();
            assertThat(log.append(1, bytes("first"))).isZero();
        }
    }

    @Test
    void aConcurrentReaderSeesOnlyWholeRecordsInOrder() throws Exception {
        int total = 3000;
        try (ShardLog log = ShardLog.open(shard(), SMALL.withSegmentSizeBytes(16 * 1024)
                .withFsyncPolicy(FsyncPolicy.none()))) {
            AtomicBoolean done = new AtomicBoolean();
            CountDownLatch started = new CountDownLatch(1);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<Long> reader = pool.submit(() -> {
                    long next = 0;
                    started.countDown();
                    while (next < total) {
                        ReadResult.Records r = (ReadResult.Records) log.read(next, 100, 1 << 16);
                        for (Record rec : r.records()) {
                            assertThat(rec.offset()).isEqualTo(next);
                            assertThat(rec.payload()).isEqualTo(payload(rec.offset(), (int) (rec.offset() % 200)));
                            next++;
                        }
                        if (r.records().isEmpty() && done.get() && next >= log.nextOffset()) {
                            break;
                        }
                    }
                    return next;
                });
                started.await();
                for (int i = 0; i < total; i++) {
                    log.append(i, payload(i, i % 200));
                }
                done.set(true);
                assertThat(reader.get(60, TimeUnit.SECONDS)).isEqualTo(total);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void periodicAndNoFsyncPoliciesKeepEveryRecordAcrossACleanClose() throws Exception {
        for (FsyncPolicy policy : List.of(FsyncPolicy.periodic(Duration.ofMillis(5)), FsyncPolicy.none())) {
            Path dir = root.resolve(policy.getClass().getSimpleName());
            try (ShardLog log = ShardLog.open(dir, SMALL.withFsyncPolicy(policy))) {
                for (int i = 0; i < 50; i++) {
                    log.append(i, payload(i, 20));
                }
            }
            try (ShardLog log = ShardLog.open(dir, SMALL)) {
                assertThat(readAll(log, 0)).hasSize(50);
            }
        }
    }

    @Test
    void aClosedLogRefusesWork() throws Exception {
        ShardLog log = ShardLog.open(shard(), SMALL);
        log.close();
        assertThatThrownBy(() -> log.append(1, bytes("x"))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> log.read(0, 1, 1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void writtenShardsPassTheFullInspection() throws IOException, CorruptionException {
        try (ShardLog log = ShardLog.open(shard(), SMALL.withGenerationStartFinalized(true))) {
            for (int i = 0; i < 30; i++) {
                log.append(i, payload(i, 70));
                if (i % 7 == 0) {
                    log.appendBatch(i, i, i, List.of(payload(i, 10), payload(i + 1, 10)));
                }
            }
            log.appendGenerationStart(9, 99);
            log.append(100, bytes("after generation start"));
        }
        assertThat(ShardLogTestSupport.fsckVerdict(shard())).isEqualTo("ok");
    }
}
