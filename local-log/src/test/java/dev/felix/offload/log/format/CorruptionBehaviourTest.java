package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import dev.felix.offload.log.SegmentBytes.Outcome;
import dev.felix.offload.log.SegmentFile;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.CRC32;

import static dev.felix.offload.log.SegmentBytes.BIT_CONTINUE;
import static dev.felix.offload.log.SegmentBytes.BIT_GENERATION;
import static dev.felix.offload.log.SegmentBytes.BIT_OPEN;
import static dev.felix.offload.log.SegmentBytes.INDEX_MAGIC;
import static dev.felix.offload.log.SegmentBytes.SEGMENT_MAGIC;
import static dev.felix.offload.log.SegmentBytes.concat;
import static dev.felix.offload.log.SegmentBytes.crc32;
import static dev.felix.offload.log.SegmentBytes.header;
import static dev.felix.offload.log.SegmentBytes.plain;
import static dev.felix.offload.log.SegmentBytes.rawRecord;
import static dev.felix.offload.log.SegmentBytes.tag;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * One test per row of the spec's "Compatibility and corruption behaviour" table, for segments and
 * indexes, plus the version rules for marks and generation-start records, the torn final index entry
 * and {@link SegmentIndex#seekPosition}. Every failure is checked for kind and full site (shard,
 * segment id, byte position); checksum failures also for the stored and computed CRC values.
 */
class CorruptionBehaviourTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";
    private static final long SEGMENT_ID = 5;
    private static final long TS = 1_700_000_000_500_000L;

    @TempDir
    Path tmp;

    private static byte[] payload(int i) {
        return ("order-" + i + ":{\"sku\":\"A-00" + i + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** Three valid plain records 0, 1, 2 after a v3 header with base 0. */
    private static byte[][] threeRecords() {
        return new byte[][] {plain(0, TS, payload(0)), plain(1, TS + 1, payload(1)), plain(2, TS + 2, payload(2))};
    }

    private Path write(byte[] bytes) throws IOException {
        return SegmentBytes.writeSegment(tmp.resolve(SHARD), SEGMENT_ID, bytes);
    }

    private Outcome<Record> verify(byte[] bytes) throws IOException {
        return SegmentBytes.readRecords(write(bytes), SHARD, SEGMENT_ID);
    }

    private Outcome<RecordHeader> headersOnly(byte[] bytes) throws IOException {
        return SegmentBytes.readHeaders(write(bytes), SHARD, SEGMENT_ID);
    }

    private static CorruptionSite site(long position) {
        return new CorruptionSite(SHARD, SEGMENT_ID, position);
    }

    private static void assertNoValues(CorruptionException e) {
        assertThat(e.needed()).isEqualTo(-1);
        assertThat(e.available()).isEqualTo(-1);
        assertThat(e.storedChecksum()).isEqualTo(-1);
        assertThat(e.computedChecksum()).isEqualTo(-1);
    }

    private static void assertChecksumValues(CorruptionException e, int stored, int computed) {
        assertThat(stored).as("test set-up: the CRCs must differ").isNotEqualTo(computed);
        assertThat(e.storedChecksum()).isEqualTo(Integer.toUnsignedLong(stored));
        assertThat(e.computedChecksum()).isEqualTo(Integer.toUnsignedLong(computed));
        assertThat(e.getMessage().toLowerCase())
                .contains(String.format("%08x", stored))
                .contains(String.format("%08x", computed));
        assertThat(e.needed()).isEqualTo(-1);
        assertThat(e.available()).isEqualTo(-1);
    }

    /** Both modes fail with the same kind at the same site, having returned {@code before} records. */
    private void assertBothModesFail(byte[] bytes, CorruptionKind kind, long position, int before) throws IOException {
        Outcome<Record> full = verify(bytes);
        assertThat(full.failure()).as("verify mode").isNotNull();
        assertThat(full.failure().kind()).isEqualTo(kind);
        assertThat(full.failure().site()).isEqualTo(site(position));
        assertThat(full.items()).hasSize(before);
        Outcome<RecordHeader> quick = headersOnly(bytes);
        assertThat(quick.failure()).as("headers-only mode").isNotNull();
        assertThat(quick.failure().kind()).isEqualTo(kind);
        assertThat(quick.failure().site()).isEqualTo(site(position));
        assertThat(quick.items()).hasSize(before);
    }

    @Nested
    class SegmentHeaderRows {

        @ParameterizedTest(name = "magic {0}")
        @ValueSource(ints = {INDEX_MAGIC, 0x464C5831 /* FLX1, felix-wire */, 0, 0x474C5346 /* byte-swapped */})
        void unknownMagicIsSegmentMagicAtByte0(int magic) throws IOException {
            byte[] bytes = concat(header(magic, 3, 0, 0, TS), threeRecords()[0]);
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_MAGIC);
            assertThat(e.site()).isEqualTo(site(0));
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.SEGMENT_MAGIC, 0, 0);
        }

        @ParameterizedTest(name = "version {0}")
        @ValueSource(ints = {0, 1, 5, 9, 0x0300, 0xFFFF})
        void unknownVersionIsSegmentVersionNamingTheVersionFound(int version) throws IOException {
            byte[] bytes = concat(header(SEGMENT_MAGIC, version, 0, 0, TS), threeRecords()[0]);
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_VERSION);
            assertThat(e.site()).isEqualTo(site(0));
            assertThat(e.getMessage()).contains("version " + version);
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.SEGMENT_VERSION, 0, 0);
        }

        @Test
        void version1IsRejectedEvenWhenItsBytesWouldNotCarryAHeaderCrc() throws IOException {
            // A v1 header need not have its CRC at byte 24: the version decides first.
            byte[] bytes = header(SEGMENT_MAGIC, 1, 0, 0, TS);
            Arrays.fill(bytes, 24, 32, (byte) 0x5A);
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_VERSION);
            assertThat(e.getMessage()).contains("version 1");
        }

        @ParameterizedTest(name = "flags {0}")
        @ValueSource(ints = {0x0001, 0x0002, 0x8000, 0xFFFF})
        void nonZeroFlagsAreSegmentFlagsEvenWithAValidCrc(int flags) throws IOException {
            byte[] bytes = concat(header(SEGMENT_MAGIC, 3, flags, 0, TS), threeRecords()[0]);
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_FLAGS);
            assertThat(e.site()).isEqualTo(site(0));
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.SEGMENT_FLAGS, 0, 0);
        }

        @Test
        void badHeaderCrcIsSegmentHeaderChecksumWithStoredAndComputedValues() throws IOException {
            byte[] good = SegmentHeader.v3(1, 2).encode();
            byte[] bad = good.clone();
            bad[15] ^= 0x01; // base_offset 1 -> 0
            byte[] bytes = concat(bad, plain(0, TS, payload(0)));
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_HEADER_CHECKSUM);
            assertThat(e.site()).isEqualTo(site(0));
            assertChecksumValues(e, 0xADEB65E9, crc32(bad, 0, 24));
            assertBothModesFail(bytes, CorruptionKind.SEGMENT_HEADER_CHECKSUM, 0, 0);
        }

        @Test
        void corruptedStoredHeaderCrcIsSegmentHeaderChecksum() throws IOException {
            byte[] bad = SegmentHeader.v4(1, 2).encode();
            bad[27] ^= (byte) 0x80;
            CorruptionException e = verify(bad).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_HEADER_CHECKSUM);
            assertChecksumValues(e, 0xE7D5EEA2 ^ 0x80, 0xE7D5EEA2);
        }

        @ParameterizedTest(name = "{0} bytes")
        @ValueSource(ints = {0, 1, 20, 31})
        void shortHeaderIsTruncatedWithNeeded32AndTheBytesAvailable(int size) throws IOException {
            byte[] bytes = Arrays.copyOf(SegmentHeader.v3(0, 2).encode(), size);
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.site()).isEqualTo(site(0));
            assertThat(e.needed()).isEqualTo(32);
            assertThat(e.available()).isEqualTo(size);
            assertThat(e.storedChecksum()).isEqualTo(-1);
            assertThat(e.getMessage()).contains("32").contains(Integer.toString(size));
            assertBothModesFail(bytes, CorruptionKind.TRUNCATED, 0, 0);
        }
    }

    @Nested
    class RecordRows {

        @Test
        void shortRecordHeaderIsTruncatedNeeding28() throws IOException {
            byte[][] r = threeRecords();
            byte[] bytes = concat(header(3, 0), r[0], Arrays.copyOf(r[1], 10));
            long at = 32 + r[0].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.site()).isEqualTo(site(at));
            assertThat(e.needed()).isEqualTo(28);
            assertThat(e.available()).isEqualTo(10);
            assertBothModesFail(bytes, CorruptionKind.TRUNCATED, at, 1);
        }

        @Test
        void shortPayloadIsTruncatedNeedingTheWholeRecord() throws IOException {
            byte[][] r = threeRecords();
            byte[] bytes = concat(header(3, 0), r[0], r[1], Arrays.copyOf(r[2], r[2].length - 3));
            long at = 32 + r[0].length + r[1].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.site()).isEqualTo(site(at));
            assertThat(e.needed()).isEqualTo(r[2].length);
            assertThat(e.available()).isEqualTo(r[2].length - 3);
            assertBothModesFail(bytes, CorruptionKind.TRUNCATED, at, 2);
        }

        @Test
        void tornBatchTagIsTruncatedNeedingTheWholeRecord() throws IOException {
            byte[] p = "batch".getBytes(StandardCharsets.UTF_8);
            byte[] open = rawRecord(BIT_OPEN | p.length, 1, TS, tag(42, 7, 2), p);
            byte[] bytes = concat(header(3, 0), threeRecords()[0], Arrays.copyOf(open, 28 + 5));
            long at = 32 + threeRecords()[0].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.site()).isEqualTo(site(at));
            assertThat(e.needed()).isEqualTo(48 + p.length);
            assertThat(e.available()).isEqualTo(33);
            assertBothModesFail(bytes, CorruptionKind.TRUNCATED, at, 1);
        }

        @Test
        void badRecordHeaderCrcIsRecordHeaderChecksumWithStoredAndComputedValues() throws IOException {
            byte[][] r = threeRecords();
            byte[] damaged = r[1].clone();
            damaged[11] ^= 0x04; // inside the offset field
            byte[] bytes = concat(header(3, 0), r[0], damaged, r[2]);
            long at = 32 + r[0].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_HEADER_CHECKSUM);
            assertThat(e.site()).isEqualTo(site(at));
            int stored = ByteBuffer.wrap(r[1]).getInt(20);
            assertChecksumValues(e, stored, crc32(damaged, 0, 20));
            assertBothModesFail(bytes, CorruptionKind.RECORD_HEADER_CHECKSUM, at, 1);
        }

        @Test
        void lengthBitFlipIsRecordHeaderChecksumNotTruncated() throws IOException {
            // The case the header CRC exists for: a longer length looks like an unfinished write.
            byte[][] r = threeRecords();
            byte[] damaged = r[2].clone();
            damaged[1] ^= 0x10; // payload_len += 1 MiB: past the end of the file
            byte[] bytes = concat(header(3, 0), r[0], r[1], damaged);
            assertBothModesFail(bytes, CorruptionKind.RECORD_HEADER_CHECKSUM, 32 + r[0].length + r[1].length, 2);
        }

        @Test
        void badRecordCrcIsRecordChecksumWithStoredAndComputedValues() throws IOException {
            byte[][] r = threeRecords();
            byte[] damaged = r[1].clone();
            damaged[30] ^= 0x01; // payload byte
            byte[] bytes = concat(header(3, 0), r[0], damaged, r[2]);
            long at = 32 + r[0].length;
            Outcome<Record> out = verify(bytes);
            CorruptionException e = out.failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_CHECKSUM);
            assertThat(e.site()).isEqualTo(site(at));
            assertThat(out.items()).hasSize(1);
            CRC32 crc = new CRC32();
            crc.update(damaged, 0, 24);
            crc.update(damaged, 28, damaged.length - 28);
            assertChecksumValues(e, ByteBuffer.wrap(r[1]).getInt(24), (int) crc.getValue());
            assertThat(out.endPosition()).as("stays at the end of the last valid record").isEqualTo(at);
        }

        @Test
        void recordChecksumIsNotSeenInHeadersOnlyMode() throws IOException {
            byte[][] r = threeRecords();
            byte[] damaged = r[1].clone();
            damaged[30] ^= 0x01;
            Outcome<RecordHeader> quick = headersOnly(concat(header(3, 0), r[0], damaged, r[2]));
            assertThat(quick.clean()).isTrue();
            assertThat(quick.items()).hasSize(3);
        }

        @ParameterizedTest(name = "kind bits {0}")
        @ValueSource(ints = {BIT_OPEN | BIT_CONTINUE, BIT_CONTINUE | BIT_GENERATION, BIT_OPEN | BIT_GENERATION,
                BIT_OPEN | BIT_CONTINUE | BIT_GENERATION})
        void moreThanOneKindBitIsRecordFlagsEvenInAV4Segment(int bits) throws IOException {
            byte[][] r = threeRecords();
            byte[] p = new byte[8];
            byte[] bad = rawRecord(bits | p.length, 1, TS, (bits & BIT_OPEN) != 0 ? tag(1, 1, 1) : null, p);
            byte[] bytes = concat(header(4, 0), r[0], bad, plain(2, TS, payload(2)));
            long at = 32 + r[0].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_FLAGS);
            assertThat(e.site()).isEqualTo(site(at));
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.RECORD_FLAGS, at, 1);
        }

        @ParameterizedTest(name = "payload_len {0}")
        @ValueSource(ints = {RecordCodec.MAX_PAYLOAD_BYTES + 1, 1 << 28, (1 << 29) - 1})
        void payloadLenOverTheLimitIsRecordTooLargeWithoutThePayloadPresent(int length) throws IOException {
            byte[][] r = threeRecords();
            byte[] big = rawRecord(length, 1, TS, null, new byte[0]); // only the 28 header bytes
            byte[] bytes = concat(header(3, 0), r[0], big);
            long at = 32 + r[0].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).as("not Truncated: the limit is checked first").isEqualTo(CorruptionKind.RECORD_TOO_LARGE);
            assertThat(e.site()).isEqualTo(site(at));
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.RECORD_TOO_LARGE, at, 1);
        }

        @Test
        void payloadLenExactlyAtTheLimitIsNotTooLarge() throws IOException {
            byte[] atLimit = rawRecord(RecordCodec.MAX_PAYLOAD_BYTES, 0, TS, null, new byte[0]);
            CorruptionException e = verify(concat(header(3, 0), atLimit)).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.needed()).isEqualTo(28L + RecordCodec.MAX_PAYLOAD_BYTES);
            assertThat(e.available()).isEqualTo(28);
        }

        @Test
        void offsetGapWithinASegmentIsOffsetOutOfOrder() throws IOException {
            byte[][] r = threeRecords();
            byte[] skipped = plain(3, TS, payload(3)); // offset 2 missing
            byte[] bytes = concat(header(3, 0), r[0], r[1], skipped);
            long at = 32 + r[0].length + r[1].length;
            CorruptionException e = verify(bytes).failure();
            assertThat(e.kind()).isEqualTo(CorruptionKind.OFFSET_OUT_OF_ORDER);
            assertThat(e.site()).isEqualTo(site(at));
            assertNoValues(e);
            assertBothModesFail(bytes, CorruptionKind.OFFSET_OUT_OF_ORDER, at, 2);
        }

        @Test
        void repeatedOffsetIsOffsetOutOfOrder() throws IOException {
            byte[][] r = threeRecords();
            byte[] bytes = concat(header(3, 0), r[0], r[1], plain(1, TS, payload(1)));
            assertBothModesFail(bytes, CorruptionKind.OFFSET_OUT_OF_ORDER, 32 + r[0].length + r[1].length, 2);
        }

        @Test
        void firstRecordNotAtTheHeadersBaseOffsetIsOffsetOutOfOrder() throws IOException {
            byte[] bytes = concat(header(3, 1000), plain(999, TS, payload(0)));
            assertBothModesFail(bytes, CorruptionKind.OFFSET_OUT_OF_ORDER, 32, 0);
        }
    }

    @Nested
    class KindsAndSegmentVersions {

        @ParameterizedTest(name = "kind bit {0}")
        @ValueSource(ints = {BIT_OPEN, BIT_CONTINUE})
        void producerMarksInAV2SegmentAreRecordFlags(int bit) throws IOException {
            byte[][] r = threeRecords();
            byte[] p = "mark".getBytes(StandardCharsets.UTF_8);
            byte[] marked = rawRecord(bit | p.length, 1, TS, bit == BIT_OPEN ? tag(42, 0, 1) : null, p);
            byte[] bytes = concat(header(2, 0), r[0], marked);
            assertBothModesFail(bytes, CorruptionKind.RECORD_FLAGS, 32 + r[0].length, 1);
        }

        @ParameterizedTest(name = "v{0}")
        @ValueSource(ints = {2, 3})
        void generationStartBeforeV4IsRecordFlags(int version) throws IOException {
            byte[] gen = rawRecord(BIT_GENERATION | 8, 0, TS, null, ByteBuffer.allocate(8).putLong(3).array());
            byte[] bytes = concat(header(version, 0), gen);
            assertBothModesFail(bytes, CorruptionKind.RECORD_FLAGS, 32, 0);
        }

        @Test
        void generationStartInV4Reads() throws IOException {
            byte[] gen = rawRecord(BIT_GENERATION | 8, 0, TS, null, ByteBuffer.allocate(8).putLong(3).array());
            Outcome<Record> out = verify(concat(header(4, 0), gen));
            assertThat(out.clean()).isTrue();
            assertThat(out.items()).containsExactly(Record.generationStart(0, TS, 3));
            assertThat(out.items().get(0).generation()).isEqualTo(3);
        }

        @Test
        void marksInV3Read() throws IOException {
            byte[] p = "b".getBytes(StandardCharsets.UTF_8);
            byte[] bytes = concat(header(3, 0), rawRecord(BIT_OPEN | 1, 0, TS, tag(-1L, Long.MIN_VALUE, -1), p),
                    rawRecord(BIT_CONTINUE | 1, 1, TS, null, p));
            Outcome<Record> out = verify(bytes);
            assertThat(out.clean()).isTrue();
            assertThat(out.items()).containsExactly(
                    Record.batchOpen(0, TS, new BatchTag(-1L, Long.MIN_VALUE, 0xFFFF_FFFFL), p),
                    Record.batchContinue(1, TS, p));
        }

        @Test
        void v2SegmentWithPlainRecordsReadsInBothModes() throws IOException {
            byte[][] r = threeRecords();
            byte[] bytes = concat(header(2, 0), r[0], r[1], r[2]);
            Outcome<Record> out = verify(bytes);
            assertThat(out.clean()).isTrue();
            assertThat(out.header().version()).isEqualTo(2);
            assertThat(out.items()).containsExactly(
                    Record.plain(0, TS, payload(0)), Record.plain(1, TS + 1, payload(1)), Record.plain(2, TS + 2, payload(2)));
            assertThat(out.endPosition()).isEqualTo(bytes.length);
            Outcome<RecordHeader> quick = headersOnly(bytes);
            assertThat(quick.clean()).isTrue();
            assertThat(quick.positions()).isEqualTo(out.positions());
        }

        @Test
        void emptyV2SegmentIsCleanWithNoRecords() throws IOException {
            Outcome<Record> out = verify(header(2, 77));
            assertThat(out.clean()).isTrue();
            assertThat(out.items()).isEmpty();
            assertThat(out.header().baseOffset()).isEqualTo(77);
        }
    }

    @Nested
    class IndexRows {

        private Path writeIndex(byte[] bytes) throws IOException {
            Path dir = Files.createDirectories(tmp.resolve(SHARD));
            Path file = dir.resolve(SegmentFile.indexName(SEGMENT_ID));
            Files.write(file, bytes);
            return file;
        }

        private byte[] index(int magic, int version, int flags, long base, long[][] entries) {
            ByteBuffer b = ByteBuffer.allocate(24 + 16 * entries.length);
            b.putInt(magic).putShort((short) version).putShort((short) flags).putLong(base).putLong(0);
            for (long[] e : entries) {
                b.putLong(e[0]).putLong(e[1]);
            }
            return b.array();
        }

        private CorruptionException readFails(byte[] bytes) throws IOException {
            Path file = writeIndex(bytes);
            return catchThrowableOfType(CorruptionException.class, () -> SegmentIndex.read(file, SHARD, SEGMENT_ID));
        }

        /** Shard, segment id and byte 0; the site may also name the index file. */
        private void assertIndexSite(CorruptionException e) {
            assertThat(e.site().shard()).isEqualTo(SHARD);
            assertThat(e.site().segmentId()).isEqualTo(SEGMENT_ID);
            assertThat(e.site().position()).isZero();
        }

        private static final long[][] ENTRIES = {{0, 32}, {35, 4162}, {70, 8292}};

        @ParameterizedTest(name = "magic {0}")
        @ValueSource(ints = {SEGMENT_MAGIC, 0, 0x464C5831})
        void unknownIndexMagicIsIndexMagic(int magic) throws IOException {
            CorruptionException e = readFails(index(magic, 3, 0, 0, ENTRIES));
            assertThat(e).isNotNull();
            assertThat(e.kind()).isEqualTo(CorruptionKind.INDEX_MAGIC);
            assertIndexSite(e);
        }

        @ParameterizedTest(name = "version {0}")
        @ValueSource(ints = {0, 1, 5, 9, 0xFFFF})
        void unknownIndexVersionIsIndexVersion(int version) throws IOException {
            CorruptionException e = readFails(index(INDEX_MAGIC, version, 0, 0, ENTRIES));
            assertThat(e).isNotNull();
            assertThat(e.kind()).isEqualTo(CorruptionKind.INDEX_VERSION);
            assertIndexSite(e);
            assertThat(e.getMessage()).contains("version " + version);
        }

        @ParameterizedTest(name = "flags {0}")
        @ValueSource(ints = {1, 0x8000})
        void nonZeroIndexFlagsAreSegmentFlags(int flags) throws IOException {
            // The spec has no IndexFlags kind; the reference implementation also reports SegmentFlags.
            CorruptionException e = readFails(index(INDEX_MAGIC, 3, flags, 0, ENTRIES));
            assertThat(e).isNotNull();
            assertThat(e.kind()).isEqualTo(CorruptionKind.SEGMENT_FLAGS);
            assertIndexSite(e);
        }

        @ParameterizedTest(name = "{0} bytes")
        @ValueSource(ints = {0, 10, 23})
        void indexShorterThanItsHeaderIsTruncated(int size) throws IOException {
            CorruptionException e = readFails(Arrays.copyOf(index(INDEX_MAGIC, 3, 0, 0, ENTRIES), size));
            assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
            assertThat(e.needed()).isEqualTo(24);
            assertThat(e.available()).isEqualTo(size);
            assertIndexSite(e);
        }

        @ParameterizedTest(name = "index v{0}")
        @ValueSource(ints = {2, 3, 4})
        void indexVersions2To4ReadWithTheSameLayout(int version) throws Exception {
            SegmentIndex idx = SegmentIndex.read(writeIndex(index(INDEX_MAGIC, version, 0, 9, ENTRIES)), SHARD, SEGMENT_ID);
            assertThat(idx.version()).isEqualTo(version);
            assertThat(idx.baseOffset()).isEqualTo(9);
            assertThat(idx.size()).isEqualTo(3);
            for (int i = 0; i < 3; i++) {
                assertThat(idx.offsetAt(i)).isEqualTo(ENTRIES[i][0]);
                assertThat(idx.positionAt(i)).isEqualTo(ENTRIES[i][1]);
            }
        }

        @ParameterizedTest(name = "{0} torn bytes")
        @ValueSource(ints = {1, 8, 15})
        void tornFinalIndexEntryIsDropped(int torn) throws Exception {
            byte[] whole = index(INDEX_MAGIC, 3, 0, 0, new long[][] {{0, 32}, {35, 4162}, {70, 8292}, {105, 12422}});
            byte[] bytes = Arrays.copyOf(whole, whole.length - 16 + torn);
            SegmentIndex idx = SegmentIndex.read(writeIndex(bytes), SHARD, SEGMENT_ID);
            assertThat(idx.size()).isEqualTo(3);
            assertThat(idx.offsetAt(2)).isEqualTo(70);
            assertThat(idx.positionAt(2)).isEqualTo(8292);
        }

        @Test
        void headerOnlyIndexHasNoEntriesAndSeeksToMinusOne() throws Exception {
            SegmentIndex idx = SegmentIndex.read(writeIndex(index(INDEX_MAGIC, 3, 0, 5, new long[0][])), SHARD, SEGMENT_ID);
            assertThat(idx.size()).isZero();
            assertThat(idx.seekPosition(5)).isEqualTo(-1);
        }

        @Test
        void encodeWritesVersion3AndTheSpecLayout() {
            byte[] bytes = SegmentIndex.of(7, new long[] {7, 40}, new long[] {32, 5000}).encode();
            ByteBuffer b = ByteBuffer.wrap(bytes);
            assertThat(bytes).hasSize(24 + 32);
            assertThat(b.getInt(0)).isEqualTo(INDEX_MAGIC);
            assertThat(b.getShort(4)).isEqualTo((short) 3);
            assertThat(b.getShort(6)).isZero();
            assertThat(b.getLong(8)).isEqualTo(7);
            assertThat(b.getLong(16)).isZero();
            assertThat(b.getLong(24)).isEqualTo(7);
            assertThat(b.getLong(32)).isEqualTo(32);
            assertThat(b.getLong(40)).isEqualTo(40);
            assertThat(b.getLong(48)).isEqualTo(5000);
        }
    }

    @Nested
    class SeekPosition {

        private final SegmentIndex index = SegmentIndex.of(100, new long[] {100, 135, 170}, new long[] {32, 4162, 8292});

        @Test
        void belowTheFirstEntryIsMinusOne() {
            assertThat(index.seekPosition(99)).isEqualTo(-1);
            assertThat(index.seekPosition(0)).isEqualTo(-1);
        }

        @Test
        void exactHitIsThatEntrysPosition() {
            assertThat(index.seekPosition(100)).isEqualTo(32);
            assertThat(index.seekPosition(135)).isEqualTo(4162);
            assertThat(index.seekPosition(170)).isEqualTo(8292);
        }

        @Test
        void betweenEntriesIsThePositionOfTheEntryBelow() {
            assertThat(index.seekPosition(101)).isEqualTo(32);
            assertThat(index.seekPosition(134)).isEqualTo(32);
            assertThat(index.seekPosition(136)).isEqualTo(4162);
            assertThat(index.seekPosition(169)).isEqualTo(4162);
        }

        @Test
        void pastTheLastEntryIsTheLastPosition() {
            assertThat(index.seekPosition(171)).isEqualTo(8292);
            assertThat(index.seekPosition(Long.MAX_VALUE)).isEqualTo(8292);
        }

        @Test
        void indexOfNonAscendingOffsetsIsRefused() {
            assertThatThrownBy(() -> SegmentIndex.of(0, new long[] {0, 5, 5}, new long[] {32, 64, 96}))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
