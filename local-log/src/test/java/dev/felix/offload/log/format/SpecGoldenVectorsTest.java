package dev.felix.offload.log.format;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/** The exact bytes the spec's "Golden vectors" section pins, and decoding them back. */
class SpecGoldenVectorsTest {

    private static final CorruptionSite SITE = new CorruptionSite("golden", 0, 0);

    private static byte[] hex(String spaced) {
        return HexFormat.of().parseHex(spaced.replaceAll("\\s+", ""));
    }

    private static final byte[] V3_HEADER_1_2 = hex("""
            46 4C 53 47  00 03  00 00
            00 00 00 00 00 00 00 01
            00 00 00 00 00 00 00 02
            AD EB 65 E9
            00 00 00 00""");

    private static final byte[] V4_HEADER_1_2 = hex("""
            46 4C 53 47  00 04  00 00
            00 00 00 00 00 00 00 01
            00 00 00 00 00 00 00 02
            E7 D5 EE A2
            00 00 00 00""");

    private static final byte[] HI_RECORD = hex("""
            00 00 00 02
            00 00 00 00 00 00 00 07
            00 00 00 00 00 00 00 09
            C6 54 DE 27
            24 02 15 2C
            68 69""");

    @Test
    void v3HeaderOfBase1CreatedAt2EncodesToTheSpecBytes() {
        assertThat(SegmentHeader.v3(1, 2).encode()).containsExactly(V3_HEADER_1_2);
    }

    @Test
    void v4HeaderDiffersOnlyInVersionAndCrc() {
        byte[] v4 = SegmentHeader.v4(1, 2).encode();
        assertThat(v4).containsExactly(V4_HEADER_1_2);
        assertThat(v4).hasSize(SegmentHeader.LENGTH);
        for (int i = 0; i < v4.length; i++) {
            boolean differs = v4[i] != V3_HEADER_1_2[i];
            boolean versionOrCrc = (i >= 4 && i < 6) || (i >= 24 && i < 28);
            if (!versionOrCrc) {
                assertThat(differs).as("byte %d", i).isFalse();
            }
        }
    }

    @Test
    void hiRecordEncodesToTheSpecBytes() {
        Record hi = Record.plain(7, 9, "hi".getBytes(StandardCharsets.US_ASCII));
        assertThat(RecordCodec.encode(hi)).containsExactly(HI_RECORD);
        assertThat(hi.encodedLength()).isEqualTo(HI_RECORD.length);
    }

    @Test
    void v3HeaderSpecBytesDecodeToBase1CreatedAt2() throws CorruptionException {
        SegmentHeader h = SegmentHeader.decode(ByteBuffer.wrap(V3_HEADER_1_2), SITE);
        assertThat(h).isEqualTo(SegmentHeader.v3(1, 2));
        assertThat(h.version()).isEqualTo(3);
        assertThat(h.baseOffset()).isEqualTo(1);
        assertThat(h.createdAtMicros()).isEqualTo(2);
    }

    @Test
    void v4HeaderSpecBytesDecodeToVersion4() throws CorruptionException {
        SegmentHeader h = SegmentHeader.decode(ByteBuffer.wrap(V4_HEADER_1_2), SITE);
        assertThat(h).isEqualTo(SegmentHeader.v4(1, 2));
        assertThat(h.allows(RecordKind.GENERATION_START)).isTrue();
    }

    @Test
    void hiRecordSpecBytesDecodeBackToTheRecord() throws CorruptionException {
        RecordHeader h = RecordCodec.decodeHeader(ByteBuffer.wrap(HI_RECORD), 32, SegmentHeader.VERSION_3, SITE);
        assertThat(h.position()).isEqualTo(32);
        assertThat(h.kind()).isEqualTo(RecordKind.PLAIN);
        assertThat(h.offset()).isEqualTo(7);
        assertThat(h.timestampMicros()).isEqualTo(9);
        assertThat(h.payloadLength()).isEqualTo(2);
        assertThat(h.storedChecksum()).isEqualTo(0x2402152C);
        assertThat(h.tag()).isNull();
        assertThat(h.totalLength()).isEqualTo(HI_RECORD.length);
        assertThat(h.end()).isEqualTo(32 + HI_RECORD.length);

        Record r = RecordCodec.decodeBody(h, ByteBuffer.wrap(HI_RECORD), SITE);
        assertThat(r).isEqualTo(Record.plain(7, 9, "hi".getBytes(StandardCharsets.US_ASCII)));
        assertThat(new String(r.payload(), StandardCharsets.US_ASCII)).isEqualTo("hi");
    }

    @Test
    void hiRecordHeaderDecodesFromItsFirst28BytesAlone() throws CorruptionException {
        // The step to the next record comes from the header alone: no payload bytes needed.
        RecordHeader h = RecordCodec.decodeHeader(ByteBuffer.wrap(HI_RECORD, 0, 28), 32, SegmentHeader.VERSION_2, SITE);
        assertThat(h.end()).isEqualTo(32 + 28 + 2);
    }
}
