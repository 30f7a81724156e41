package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentBytes;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Property tests: every record kind survives {@link RecordCodec} encode → decodeHeader → decodeBody. */
class RecordCodecPropertiesTest {

    private static final CorruptionSite SITE = new CorruptionSite("prop", 1, 0);

    @Provide
    static Arbitrary<Record> anyRecord() {
        Arbitrary<Long> offsets = Arbitraries.longs(); // edge cases include 0, ±1, MIN and MAX
        Arbitrary<Long> timestamps = Arbitraries.longs();
        Arbitrary<byte[]> payloads = Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(4096);
        Arbitrary<BatchTag> tags = Combinators.combine(Arbitraries.longs(), Arbitraries.longs(),
                Arbitraries.longs().between(0, 0xFFFF_FFFFL)).as(BatchTag::new);
        Arbitrary<Record> plain = Combinators.combine(offsets, timestamps, payloads).as(Record::plain);
        Arbitrary<Record> open = Combinators.combine(offsets, timestamps, tags, payloads).as(Record::batchOpen);
        Arbitrary<Record> cont = Combinators.combine(offsets, timestamps, payloads).as(Record::batchContinue);
        Arbitrary<Record> gen = Combinators.combine(offsets, timestamps, Arbitraries.longs()).as(Record::generationStart);
        return Arbitraries.oneOf(plain, open, cont, gen);
    }

    @Property(tries = 500)
    void everyKindRoundTripsThroughTheCodec(@ForAll("anyRecord") Record record,
                                            @ForAll @IntRange(min = 32, max = 1 << 30) int position) throws Exception {
        byte[] bytes = RecordCodec.encode(record);
        assertThat(bytes).hasSize(record.encodedLength());
        assertThat(bytes.length).isEqualTo(28 + (record.kind().hasTag() ? 20 : 0) + record.payload().length);

        RecordHeader h = RecordCodec.decodeHeader(ByteBuffer.wrap(bytes), position, SegmentHeader.VERSION_4, SITE);
        assertThat(h.position()).isEqualTo(position);
        assertThat(h.kind()).isEqualTo(record.kind());
        assertThat(h.offset()).isEqualTo(record.offset());
        assertThat(h.timestampMicros()).isEqualTo(record.timestampMicros());
        assertThat(h.payloadLength()).isEqualTo(record.payload().length);
        assertThat(h.tag()).isEqualTo(record.tag());
        assertThat(h.totalLength()).isEqualTo(bytes.length);
        assertThat(h.end()).isEqualTo(position + bytes.length);

        Record decoded = RecordCodec.decodeBody(h, ByteBuffer.wrap(bytes), SITE);
        assertThat(decoded).isEqualTo(record);
        if (record.kind() == RecordKind.GENERATION_START) {
            assertThat(decoded.generation()).isEqualTo(record.generation());
        }
    }

    @Property(tries = 300)
    void aRecordDecodedFromBytesThatStayIsAViewOfThemThatEncodesAndWritesTheStoredBytes(
            @ForAll("anyRecord") Record record, @ForAll @Size(max = 64) byte[] before,
            @ForAll @Size(max = 64) byte[] after) throws Exception {
        byte[] bytes = RecordCodec.encode(record);
        byte[] array = new byte[before.length + bytes.length + after.length];
        System.arraycopy(before, 0, array, 0, before.length);
        System.arraycopy(bytes, 0, array, before.length, bytes.length);
        System.arraycopy(after, 0, array, before.length + bytes.length, after.length);
        // a slice, as a chunk view is: its position 0 is not the array's
        ByteBuffer slice = ByteBuffer.wrap(array, before.length, bytes.length).slice();
        RecordHeader h = RecordCodec.decodeHeader(slice.duplicate(), 32, SegmentHeader.VERSION_4, SITE);

        Record view = RecordCodec.decodeBody(h, slice.duplicate(), SITE, true);
        assertThat(view).isEqualTo(record).hasSameHashCodeAs(record);
        assertThat(view.payloadLength()).isEqualTo(record.payload().length);
        assertThat(view.payload()).isEqualTo(record.payload());
        assertThat(view.payloadView()).isEqualTo(ByteBuffer.wrap(record.payload()));
        assertThat(view.encodedView()).isPresent();
        assertThat(view.encodedView().get()).isEqualTo(ByteBuffer.wrap(bytes));
        assertThat(RecordCodec.encode(view)).isEqualTo(bytes);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        RecordCodec.writeTo(view, out);
        assertThat(out.toByteArray()).isEqualTo(bytes);
        if (record.kind() == RecordKind.GENERATION_START) {
            assertThat(view.generation()).isEqualTo(record.generation());
        }
        if (view.payloadLength() > 0) {
            // a view's payload() is a copy; the viewed bytes are not the caller's to change
            view.payload()[0] ^= 1;
            assertThat(view).isEqualTo(record);
            array[before.length + h.headerLength()] ^= 1; // and the view does see its array (no copy was taken)
            assertThat(view.payloadView().get(0)).isEqualTo((byte) (record.payload()[0] ^ 1));
        }

        // without the caller's word, or from a read-only buffer, the record owns its payload
        assertThat(RecordCodec.decodeBody(h, ByteBuffer.wrap(bytes), SITE).encodedView()).isEmpty();
        assertThat(RecordCodec.decodeBody(h, ByteBuffer.wrap(bytes).asReadOnlyBuffer(), SITE, true).encodedView()).isEmpty();
        // a record built in memory is encoded, not viewed
        out.reset();
        RecordCodec.writeTo(record, out);
        assertThat(out.toByteArray()).isEqualTo(bytes);
    }

    @Property(tries = 300)
    void headerDecodesFromItsHeaderBytesAloneAtAnyBufferPosition(@ForAll("anyRecord") Record record,
                                                                @ForAll @Size(max = 64) byte[] before) throws Exception {
        byte[] bytes = RecordCodec.encode(record);
        int headerLength = record.kind().hasTag() ? 48 : 28;
        ByteBuffer buf = ByteBuffer.allocate(before.length + headerLength);
        buf.put(before).put(bytes, 0, headerLength).position(before.length);

        RecordHeader h = RecordCodec.decodeHeader(buf, 32, record.kind().minimumSegmentVersion(), SITE);
        assertThat(buf.position()).as("not consumed").isEqualTo(before.length);
        assertThat(h.headerLength()).isEqualTo(headerLength);
        assertThat(h.offset()).isEqualTo(record.offset());
        assertThat(h.tag()).isEqualTo(record.tag());

        ByteBuffer whole = ByteBuffer.allocate(before.length + bytes.length).put(before).put(bytes);
        whole.position(before.length);
        assertThat(RecordCodec.decodeBody(h, whole, SITE)).isEqualTo(record);
    }

    @Property(tries = 200)
    void encodeIntoWritesTheSameBytesAtAnyPosition(@ForAll("anyRecord") Record record,
                                                   @ForAll @IntRange(max = 100) int start) {
        ByteBuffer buf = ByteBuffer.allocate(start + record.encodedLength() + 7);
        buf.position(start);
        RecordCodec.encodeInto(record, buf);
        assertThat(buf.position()).isEqualTo(start + record.encodedLength());
        byte[] written = new byte[record.encodedLength()];
        buf.get(start, written);
        assertThat(written).containsExactly(RecordCodec.encode(record));
    }

    @Property(tries = 200)
    void kindsAreRefusedInSegmentsTooOldForThem(@ForAll("anyRecord") Record record) {
        int tooOld = record.kind().minimumSegmentVersion() - 1;
        if (tooOld < SegmentHeader.VERSION_2) {
            return; // plain records are readable everywhere
        }
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> RecordCodec.decodeHeader(ByteBuffer.wrap(RecordCodec.encode(record)), 32, tooOld, SITE));
        assertThat(e).isNotNull();
        assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_FLAGS);
        assertThat(e.site().position()).isEqualTo(32);
    }

    @Property(tries = 300)
    void everyOverLimitLengthOfEveryKindIsRecordTooLargeFromTheHeaderAlone(
            @ForAll @IntRange(min = RecordCodec.MAX_PAYLOAD_BYTES + 1, max = (1 << 29) - 1) int length,
            @ForAll @IntRange(min = 0, max = 3) int kind) {
        int bit = switch (kind) {
            case 0 -> 0;
            case 1 -> SegmentBytes.BIT_OPEN;
            case 2 -> SegmentBytes.BIT_CONTINUE;
            default -> SegmentBytes.BIT_GENERATION;
        };
        byte[] header = SegmentBytes.rawRecord(bit | length, 0, 0, null, new byte[0]); // 28 bytes, no tag, no payload
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> RecordCodec.decodeHeader(ByteBuffer.wrap(header), 32, SegmentHeader.VERSION_4, SITE));
        assertThat(e).isNotNull();
        assertThat(e.kind()).isEqualTo(CorruptionKind.RECORD_TOO_LARGE);
        assertThat(e.site()).isEqualTo(SITE.at(32));
    }
}
