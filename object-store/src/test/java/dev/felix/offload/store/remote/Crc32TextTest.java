package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class Crc32TextTest {
    @Property
    void roundTrips(@ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) long crc) {
        assertThat(Crc32Text.fromBase64(Crc32Text.toBase64(crc))).hasValue(crc);
    }

    @Test
    void compositeAndMalformedValuesAreNotObjectCrcs() {
        assertThat(Crc32Text.fromBase64("AAAAAA==-3")).isEmpty();
        assertThat(Crc32Text.fromBase64(null)).isEmpty();
        assertThat(Crc32Text.fromBase64("not base64!")).isEmpty();
        assertThat(Crc32Text.fromBase64("AAAAAAAA")).isEmpty();
        // "hello" has CRC32 0x3610a686
        assertThat(Crc32Text.fromBase64("NhCmhg==")).hasValue(0x3610a686L);
    }

    @Test
    void compositesParseWithTheirPartCount() {
        // S3Mock's answer for a 2-part upload whose part CRC32s were q8theg== and wHZIgw==
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==-2")).hasValue(new Crc32Text.Composite(0x46f52620L, 2));
        assertThat(Crc32Text.compositeFromBase64("AAAAAA==-10000")).hasValue(new Crc32Text.Composite(0, 10000));
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==")).as("a plain CRC32").isEmpty();
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==-0")).isEmpty();
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==-")).isEmpty();
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==-x")).isEmpty();
        assertThat(Crc32Text.compositeFromBase64("RvUmIA==-123456")).isEmpty();
        assertThat(Crc32Text.compositeFromBase64("-2")).isEmpty();
        assertThat(Crc32Text.compositeFromBase64(null)).isEmpty();
    }
}
