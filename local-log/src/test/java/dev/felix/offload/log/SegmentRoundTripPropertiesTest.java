package dev.felix.offload.log;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.SegmentBytes.Outcome;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property: a segment of random records written with {@link SegmentWriter} reads back identically
 * with {@code SegmentScanner}, whole records and headers only, and its index points at real records.
 * jqwik has no {@code @TempDir}, so each try makes and removes its own temporary directory.
 */
class SegmentRoundTripPropertiesTest {

    /** A record without its offset, which the segment assigns. */
    private record Spec(RecordKind kind, long timestamp, BatchTag tag, byte[] payload, long generation) {
        Record at(long offset) {
            return switch (kind) {
                case PLAIN -> Record.plain(offset, timestamp, payload);
                case BATCH_OPEN -> Record.batchOpen(offset, timestamp, tag, payload);
                case BATCH_CONTINUE -> Record.batchContinue(offset, timestamp, payload);
                case GENERATION_START -> Record.generationStart(offset, timestamp, generation);
            };
        }
    }

    @Provide
    static Arbitrary<List<Spec>> specs() {
        Arbitrary<RecordKind> kinds = Arbitraries.of(RecordKind.class);
        Arbitrary<BatchTag> tags = Combinators.combine(Arbitraries.longs(), Arbitraries.longs(),
                Arbitraries.longs().between(0, 0xFFFF_FFFFL)).as(BatchTag::new);
        Arbitrary<byte[]> payloads = Arbitraries.bytes().array(byte[].class).ofMaxSize(3000);
        return Combinators.combine(kinds, Arbitraries.longs(), tags, payloads, Arbitraries.longs())
                .as(Spec::new).list().ofMaxSize(40);
    }

    @Property(tries = 120)
    void writtenSegmentReadsBackIdentically(@ForAll("specs") List<Spec> specs,
                                            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long base,
                                            @ForAll @IntRange(min = 1, max = 8192) int spacing,
                                            @ForAll boolean v4) throws IOException, CorruptionException {
        Path dir = Files.createTempDirectory("segment-roundtrip");
        try {
            SegmentHeader header = v4 ? SegmentHeader.v4(base, 42) : SegmentHeader.v3(base, 42);
            List<Record> written = new ArrayList<>();
            SegmentFile file = SegmentFile.in(dir, 3);
            SegmentIndex index;
            try (SegmentWriter w = SegmentWriter.create(file, header, spacing)) {
                for (Spec s : specs) {
                    if (!header.allows(s.kind())) {
                        continue;
                    }
                    Record r = s.at(base + written.size());
                    w.append(r);
                    written.add(r);
                }
                index = w.index();
                w.writeIndex();
            }

            Outcome<Record> full = SegmentBytes.readRecords(file.log(), "prop", 3);
            assertThat(full.failure()).isNull();
            assertThat(full.header()).isEqualTo(header);
            assertThat(full.items()).containsExactlyElementsOf(written);
            assertThat(full.endPosition()).isEqualTo(Files.size(file.log()));

            Outcome<RecordHeader> quick = SegmentBytes.readHeaders(file.log(), "prop", 3);
            assertThat(quick.failure()).isNull();
            assertThat(quick.positions()).isEqualTo(full.positions());
            for (int i = 0; i < written.size(); i++) {
                Record r = written.get(i);
                RecordHeader h = quick.items().get(i);
                assertThat(h.offset()).isEqualTo(r.offset());
                assertThat(h.kind()).isEqualTo(r.kind());
                assertThat(h.timestampMicros()).isEqualTo(r.timestampMicros());
                assertThat(h.tag()).isEqualTo(r.tag());
                assertThat(h.totalLength()).isEqualTo(r.encodedLength());
            }

            SegmentScan scan = SegmentScan.of(file.log(), "prop", 3, ScanDepth.RECORDS);
            assertThat(scan.isClean()).isTrue();
            assertThat(scan.recordCount()).isEqualTo(written.size());
            assertThat(scan.nextOffset()).isEqualTo(base + written.size());
            assertThat(scan.validEnd()).isEqualTo(Files.size(file.log()));
            if (!written.isEmpty()) {
                assertThat(scan.oldestTimestamp()).isEqualTo(written.get(0).timestampMicros());
                assertThat(scan.newestTimestamp()).isEqualTo(written.get(written.size() - 1).timestampMicros());
            }

            // Every index entry names a real record boundary; the first is the first record.
            assertThat(index.baseOffset()).isEqualTo(base);
            if (written.isEmpty()) {
                assertThat(index.size()).isZero();
            }
            for (int i = 0; i < index.size(); i++) {
                int recordIndex = (int) (index.offsetAt(i) - base);
                assertThat(full.positions().get(recordIndex)).isEqualTo(index.positionAt(i));
            }
            if (!written.isEmpty()) {
                assertThat(index.offsetAt(0)).isEqualTo(base);
                assertThat(index.positionAt(0)).isEqualTo(32);
                for (int i = 0; i < written.size(); i++) {
                    long seek = index.seekPosition(base + i);
                    assertThat(seek).isBetween(32L, full.positions().get(i));
                    assertThat(full.positions().get(i) - seek).as("an entry at least every %d bytes", spacing)
                            .isLessThan(spacing);
                }
            }
            SegmentIndex onDisk = SegmentIndex.read(file.index(), "prop", 3);
            assertThat(onDisk.encode()).containsExactly(index.encode());
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
