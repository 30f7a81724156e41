package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one seek-and-scan over a byte source held in memory: an entry is used but never trusted, a
 * record that fails is refetched once from a source that may have damaged it on the way and never
 * from one that cannot, a torn tail stays told apart from damage, and a length is bounded before
 * anything is read for it.
 */
class IndexedScanTest {

    private static final CorruptionSite SITE = new CorruptionSite("shard-a", 3, 0);

    @TempDir
    Path dir;
    private DamageFixture fixture;

    @BeforeEach
    void write() throws IOException {
        fixture = DamageFixture.write(dir);
    }

    /** Segment bytes in memory; it notes every range asked for, and may damage one byte on its first read. */
    private static final class MemorySource implements SegmentSource {
        final byte[] bytes;
        final long size;
        final boolean canRefetch;
        final List<long[]> reads = new ArrayList<>();
        long damagedByte = -1;
        int damagedReadsLeft;
        int refetches;

        MemorySource(byte[] bytes, long size, boolean canRefetch) {
            this.bytes = bytes;
            this.size = size;
            this.canRefetch = canRefetch;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public ByteBuffer read(long position, int length) {
            assertThat(position + length).as("a read inside the size").isLessThanOrEqualTo(size);
            reads.add(new long[] {position, length});
            byte[] out = Arrays.copyOfRange(bytes, (int) position, (int) position + length);
            if (damagedReadsLeft > 0 && damagedByte >= position && damagedByte < position + length) {
                damagedReadsLeft--;
                out[(int) (damagedByte - position)] ^= 0x10;
            }
            return ByteBuffer.wrap(out);
        }

        @Override
        public boolean refetch(CorruptionException failure) {
            refetches++;
            return canRefetch;
        }

        /** The lowest position read past the segment header, or -1. */
        long lowestRecordRead() {
            return reads.stream().mapToLong(r -> r[0]).filter(p -> p >= SegmentHeader.LENGTH).min().orElse(-1);
        }
    }

    private static final class ListSink implements IndexedScan.Sink {
        final List<Record> records = new ArrayList<>();
        final int maxRecords;
        final long maxBytes;
        long bytes;

        ListSink(int maxRecords, long maxBytes) {
            this.maxRecords = maxRecords;
            this.maxBytes = maxBytes;
        }

        @Override
        public boolean full() {
            return records.size() >= maxRecords;
        }

        @Override
        public boolean fits(RecordHeader h) {
            return records.isEmpty() || bytes + h.totalLength() <= maxBytes;
        }

        @Override
        public void take(Record record, long end) {
            records.add(record);
            bytes += record.encodedLength();
        }

        List<Long> offsets() {
            return records.stream().map(Record::offset).toList();
        }
    }

    private final List<IndexedScan.Entry> distrusted = new ArrayList<>();

    private IndexedScan.Outcome scan(MemorySource source, IndexedScan.Entry entry, long want, ListSink sink)
            throws IOException, CorruptionException {
        return IndexedScan.read(() -> SegmentScanner.over(source, SITE), entry, want, sink,
                (bad, why) -> distrusted.add(bad));
    }

    private MemorySource whole(boolean canRefetch) {
        return new MemorySource(fixture.bytes, fixture.bytes.length, canRefetch);
    }

    private static final long BASE = DamageFixture.BASE;

    @Test
    void aGoodEntryIsWhereTheScanStartsAndItsRecordsAreTheOnesWanted() throws Exception {
        MemorySource source = whole(false);
        ListSink sink = new ListSink(100, Long.MAX_VALUE);

        IndexedScan.Outcome outcome = scan(source, new IndexedScan.Entry(BASE + 3, fixture.boundaries[3]), BASE + 4, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 4, BASE + 5);
        assertThat(outcome).isEqualTo(new IndexedScan.Outcome(false, BASE + 6));
        assertThat(source.lowestRecordRead()).isEqualTo(fixture.boundaries[3]);
        assertThat(distrusted).isEmpty();
    }

    @Test
    void anEntryIntoTheMiddleOfARecordIsDistrustedAndTheSegmentScannedFromItsStart() throws Exception {
        MemorySource source = whole(false);
        ListSink sink = new ListSink(100, Long.MAX_VALUE);
        IndexedScan.Entry lying = new IndexedScan.Entry(BASE + 3, fixture.boundaries[3] + 5);

        scan(source, lying, BASE + 2, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 2, BASE + 3, BASE + 4, BASE + 5);
        assertThat(distrusted).containsExactly(lying);
        assertThat(source.lowestRecordRead()).isEqualTo(SegmentHeader.LENGTH);
    }

    @Test
    void anEntryNamingTheWrongOffsetIsDistrustedToo() throws Exception {
        ListSink sink = new ListSink(100, Long.MAX_VALUE);
        IndexedScan.Entry lying = new IndexedScan.Entry(BASE + 1, fixture.boundaries[3]);

        scan(whole(false), lying, BASE + 3, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 3, BASE + 4, BASE + 5);
        assertThat(distrusted).containsExactly(lying);
    }

    @Test
    void anEntryOutsideTheRecordsIsNotUsedAtAll() throws Exception {
        MemorySource source = whole(false);
        ListSink sink = new ListSink(100, Long.MAX_VALUE);

        scan(source, new IndexedScan.Entry(BASE + 5, fixture.bytes.length), BASE + 5, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 5);
        assertThat(source.lowestRecordRead()).isEqualTo(SegmentHeader.LENGTH);
        assertThat(distrusted).isEmpty();
    }

    @Test
    void bytesDamagedOnTheirWayAreFetchedOnceMoreAndThenServeTheRecord() throws Exception {
        MemorySource source = whole(true);
        source.damagedByte = fixture.boundaries[2] + 50; // in the batch-open record's payload
        source.damagedReadsLeft = 1;
        ListSink sink = new ListSink(100, Long.MAX_VALUE);

        scan(source, new IndexedScan.Entry(BASE + 1, fixture.boundaries[1]), BASE + 1, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 1, BASE + 2, BASE + 3, BASE + 4, BASE + 5);
        assertThat(source.refetches).isEqualTo(1);
        assertThat(distrusted).isEmpty();
    }

    @Test
    void damageThatStaysIsThrownAfterOneRefetchNamingTheRecord() throws Exception {
        MemorySource source = whole(true);
        source.damagedByte = fixture.boundaries[2] + 50; // in the batch-open record's payload
        source.damagedReadsLeft = Integer.MAX_VALUE;
        ListSink sink = new ListSink(100, Long.MAX_VALUE);

        assertThatThrownBy(() -> scan(source, IndexedScan.Entry.NONE, BASE, sink))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM);
                    assertThat(e.site()).isEqualTo(SITE.at(fixture.boundaries[2]));
                });
        assertThat(source.refetches).isEqualTo(1);
        assertThat(sink.offsets()).containsExactly(BASE, BASE + 1);
    }

    @Test
    void aSourceThatCannotReadOtherBytesIsNotReadAgain() throws Exception {
        MemorySource source = whole(false);
        source.damagedByte = fixture.boundaries[2] + 50; // in the batch-open record's payload
        source.damagedReadsLeft = 1;

        assertThatThrownBy(() -> scan(source, IndexedScan.Entry.NONE, BASE, new ListSink(100, Long.MAX_VALUE)))
                .isInstanceOfSatisfying(CorruptionException.class,
                        e -> assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM));
        assertThat(source.refetches).isEqualTo(1);
        assertThat(source.reads.stream().filter(r -> r[0] == fixture.boundaries[2]))
                .as("the damaged record's header and body, each read once").hasSize(2);
    }

    @Test
    void aTornTailIsTruncatedNotDamageAndTheRecordsBeforeItAreKept() throws Exception {
        MemorySource source = new MemorySource(fixture.bytes, fixture.boundaries[5] - 3, false);
        ListSink sink = new ListSink(100, Long.MAX_VALUE);

        assertThatThrownBy(() -> scan(source, IndexedScan.Entry.NONE, BASE + 3, sink))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
                    assertThat(e.site().position()).isEqualTo(fixture.boundaries[4]);
                });
        assertThat(sink.offsets()).containsExactly(BASE + 3);
    }

    @Test
    void aRecordThatDoesNotFitStopsTheScanBeforeItsPayloadIsRead() throws Exception {
        MemorySource source = whole(false);
        ListSink sink = new ListSink(100, fixture.boundaries[3] - fixture.boundaries[2]);

        IndexedScan.Outcome outcome = scan(source, IndexedScan.Entry.NONE, BASE + 2, sink);

        assertThat(sink.offsets()).containsExactly(BASE + 2);
        assertThat(outcome).isEqualTo(new IndexedScan.Outcome(true, BASE + 3));
        assertThat(source.reads.stream().filter(r -> r[0] == fixture.boundaries[3]))
                .as("only the refused record's header").hasSize(1);
    }

    @Test
    void aLengthOverTheLimitIsRefusedBeforeAnythingIsReadForIt() throws Exception {
        byte[] bytes = SegmentBytes.concat(SegmentBytes.header(3, 10),
                SegmentBytes.rawRecord(RecordCodec.MAX_PAYLOAD_BYTES + 1, 10, 1, null, new byte[16]));
        MemorySource source = new MemorySource(bytes, bytes.length, true);

        assertThatThrownBy(() -> scan(source, IndexedScan.Entry.NONE, 10, new ListSink(100, Long.MAX_VALUE)))
                .isInstanceOfSatisfying(CorruptionException.class,
                        e -> assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_TOO_LARGE));
        assertThat(source.reads).allMatch(r -> r[1] <= RecordCodec.MAX_HEADER_LENGTH);
    }
}
