package dev.felix.offload.log;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardReaderTest {

    private static final ShardLogConfig SMALL = ShardLogConfig.defaults().withSegmentSizeBytes(2048)
            .withIndexSpacingBytes(256);

    @TempDir
    Path dir;

    private static byte[] payload(long offset) {
        byte[] b = new byte[(int) (offset % 97)];
        new SplittableRandom(offset).nextBytes(b);
        return b;
    }

    private List<Record> readAll(ShardReader reader, long from, int batch) throws Exception {
        List<Record> out = new ArrayList<>();
        long next = from;
        while (true) {
            ReadResult.Records r = (ReadResult.Records) reader.read(next, batch, 1 << 20);
            if (r.records().isEmpty()) {
                return out;
            }
            out.addAll(r.records());
            next = r.nextOffset();
        }
    }

    private void write(int records) throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            for (int i = 0; i < records; i++) {
                log.append(i, payload(i));
            }
        }
    }

    @Test
    void readsWhatTheLogWroteFromEveryOffset() throws Exception {
        write(300);
        ShardReader reader = new ShardReader(dir);
        List<Record> all = readAll(reader, 0, 17);
        assertThat(all).hasSize(300);
        for (int i = 0; i < 300; i++) {
            assertThat(all.get(i)).isEqualTo(Record.plain(i, i, payload(i)));
        }
        for (long o = 0; o < 300; o += 13) {
            ReadResult.Records r = (ReadResult.Records) reader.read(o, 1, Long.MAX_VALUE);
            assertThat(r.records()).singleElement().extracting(Record::offset).isEqualTo(o);
        }
    }

    @Test
    void everyByteLimitGivesAContiguousRunFromTheOffsetAskedFor() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            SplittableRandom random = new SplittableRandom(17);
            for (int i = 0; i < 120; i++) {
                log.append(i, new byte[random.nextInt(3) == 0 ? 1500 : 10]); // big and small records, many segments
            }
            ShardReader reader = new ShardReader(dir);
            for (long from = 0; from < 120; from += 7) {
                for (long maxBytes : new long[] {1, 50, 100, 1600, 3000, 10_000}) {
                    for (ReadResult result : List.of(reader.read(from, 40, maxBytes), log.read(from, 40, maxBytes))) {
                        List<Record> got = ((ReadResult.Records) result).records();
                        assertThat(got).isNotEmpty();
                        for (int k = 0; k < got.size(); k++) {
                            assertThat(got.get(k).offset()).as("from %d, limit %d", from, maxBytes).isEqualTo(from + k);
                        }
                        long bytes = got.stream().mapToLong(Record::encodedLength).sum();
                        assertThat(got.size() == 1 || bytes <= maxBytes).isTrue();
                    }
                }
            }
        }
    }

    @Test
    void aRecordOverTheByteLimitEndsTheReadEvenWhenTheNextSegmentsFirstWouldFit() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            log.append(0, new byte[10]);    // 38 bytes
            log.append(1, new byte[1500]);  // 1528 bytes, same segment
            log.append(2, new byte[500]);   // does not fit the 2048-byte segment: starts the next one
            assertThat(log.segments().get(1).baseOffset()).isEqualTo(2);
            for (ReadResult result : List.of(new ShardReader(dir).read(0, 10, 600), log.read(0, 10, 600))) {
                assertThat(((ReadResult.Records) result).records()).extracting(Record::offset).containsExactly(0L);
                assertThat(((ReadResult.Records) result).nextOffset()).isEqualTo(1);
            }
        }
    }

    @Test
    void aTornTailOfTheNewestSegmentIsTheEndNotAnError() throws Exception {
        write(100);
        List<SegmentFile> files = SegmentFile.list(dir);
        Path newest = files.get(files.size() - 1).log();
        try (FileChannel ch = FileChannel.open(newest, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - 3);
        }
        List<Record> all = readAll(new ShardReader(dir), 0, 50);
        assertThat(all).hasSize(99);
        assertThat(Files.size(newest)).as("a reader never repairs").isPositive();
    }

    @Test
    void damageInASealedSegmentIsTyped() throws Exception {
        write(100);
        Path first = SegmentFile.list(dir).get(0).log();
        byte[] bytes = Files.readAllBytes(first);
        bytes[bytes.length - 1] ^= 1;
        Files.write(first, bytes);
        assertThatThrownBy(() -> readAll(new ShardReader(dir), 0, 1000)).isInstanceOf(CorruptionException.class)
                .satisfies(e -> assertThat(((CorruptionException) e).kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM));
    }

    @Test
    void belowTheFirstSegmentIsTrimmedAndALyingIndexIsIgnored() throws Exception {
        write(200);
        List<SegmentFile> files = SegmentFile.list(dir);
        long secondBase;
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            secondBase = log.segments().get(1).baseOffset();
            log.deleteSegmentsBelow(secondBase);
        }
        SegmentFile second = files.get(1);
        SegmentIndex index = SegmentIndex.read(second.index(), "s", second.id());
        long[] offsets = new long[index.size()];
        long[] positions = new long[index.size()];
        for (int i = 0; i < index.size(); i++) {
            offsets[i] = index.offsetAt(i);
            positions[i] = index.positionAt(i) + (i > 0 ? 5 : 0);
        }
        Files.write(second.index(), SegmentIndex.of(index.baseOffset(), offsets, positions).encode());
        ShardReader reader = new ShardReader(dir);
        assertThat(reader.read(0, 1, 100)).isEqualTo(new ReadResult.Trimmed(secondBase));
        assertThat(readAll(reader, secondBase, 7)).hasSize((int) (200 - secondBase));
    }

    @Test
    void readsWhileAnotherWriterAppends() throws Exception {
        try (ShardLog log = ShardLog.open(dir, SMALL.withFsyncPolicy(FsyncPolicy.none()))) {
            ShardReader reader = new ShardReader(dir);
            long next = 0;
            for (int i = 0; i < 500; i++) {
                log.append(i, payload(i));
                if (i % 10 == 0) {
                    ReadResult.Records r = (ReadResult.Records) reader.read(next, 1000, 1 << 20);
                    for (Record rec : r.records()) {
                        assertThat(rec.offset()).isEqualTo(next++);
                    }
                }
            }
            assertThat(next).isGreaterThan(400);
        }
    }
}
