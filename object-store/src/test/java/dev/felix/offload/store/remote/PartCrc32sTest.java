package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/** A multipart object's CRC32 is answered only when the server's composite matches the recorded parts. */
class PartCrc32sTest {
    private static final long PART = 5L * 1024 * 1024;
    private static final byte[] BODY = new byte[(int) (2 * PART + 1000)];
    private static final long[] PARTS = new long[3];
    private static final long WHOLE;

    static {
        new Random(3).nextBytes(BODY);
        for (int i = 0; i < 3; i++) {
            CRC32 crc = new CRC32();
            int from = (int) (i * PART);
            crc.update(BODY, from, (int) Math.min(PART, BODY.length - from));
            PARTS[i] = crc.getValue();
        }
        CRC32 whole = new CRC32();
        whole.update(BODY);
        WHOLE = whole.getValue();
    }

    /** What a server that checks part CRC32s answers: the CRC32 of the part CRC32s, and the count. */
    private static String composite(long... partCrcs) {
        CRC32 crc = new CRC32();
        for (long p : partCrcs) {
            crc.update(new byte[] {(byte) (p >>> 24), (byte) (p >>> 16), (byte) (p >>> 8), (byte) p});
        }
        return Crc32Text.toBase64(crc.getValue()) + "-" + partCrcs.length;
    }

    private static Map<String, String> recorded(long partSize, long... partCrcs) {
        return Map.of(PartCrc32s.METADATA_NAME, PartCrc32s.record(partSize, partCrcs).orElseThrow(), "origin", "test");
    }

    @Test
    void theWholeCrcIsProvenWhenTheCompositeMatchesTheRecord() {
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), recorded(PART, PARTS), BODY.length, true)).hasValue(WHOLE);
        // the name may come back in any case
        Map<String, String> upper = Map.of("Felix-Part-Crc32s", PartCrc32s.record(PART, PARTS).orElseThrow());
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), upper, BODY.length, true)).hasValue(WHOLE);
    }

    @Test
    void aPartTheServerHoldsDifferentlyProvesNothing() {
        long[] damaged = PARTS.clone();
        damaged[1] ^= 0x10;
        assertThat(PartCrc32s.storedCrc32(composite(damaged), recorded(PART, PARTS), BODY.length, true)).isEmpty();
        assertThat(PartCrc32s.storedCrc32(composite(PARTS[0], PARTS[2], PARTS[1]), recorded(PART, PARTS), BODY.length, true))
                .as("parts in another order").isEmpty();
    }

    @Test
    void aRecordThatDisagreesWithTheObjectProvesNothing() {
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), recorded(PART, PARTS), 3 * PART + 1, true)).as("too long").isEmpty();
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), recorded(PART, PARTS), 2 * PART, true)).as("too short").isEmpty();
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), recorded(PART * 2, PARTS), BODY.length, true)).as("part size").isEmpty();
        assertThat(PartCrc32s.storedCrc32(composite(PARTS).replace("-3", "-4"), recorded(PART, PARTS), BODY.length, true))
                .as("part count").isEmpty();
        for (String bad : new String[] {"", "5242880", ":AAAA", "x:" + "AAAAAA==", "5242880:AAA", "5242880:!!!!", "-1:AAAAAA=="}) {
            assertThat(PartCrc32s.storedCrc32(composite(PARTS), Map.of(PartCrc32s.METADATA_NAME, bad), BODY.length, true))
                    .as(bad).isEmpty();
        }
    }

    @Test
    void withoutARecordOrATrustedServerThereIsNoProof() {
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), Map.of(), BODY.length, true)).isEmpty();
        assertThat(PartCrc32s.storedCrc32(composite(PARTS), recorded(PART, PARTS), BODY.length, false))
                .as("a server that does not check CRC32s may have combined the headers it was sent").isEmpty();
        assertThat(PartCrc32s.storedCrc32(null, recorded(PART, PARTS), BODY.length, true)).isEmpty();
    }

    @Test
    void aPlainCrcIsTheServersOwnAndPassesThrough() {
        assertThat(PartCrc32s.storedCrc32(Crc32Text.toBase64(WHOLE), Map.of(), BODY.length, false)).hasValue(WHOLE);
    }

    @Test
    void tooManyPartsAreNotRecordedAndTheRecordIsHiddenFromCallers() {
        assertThat(PartCrc32s.record(PART, new long[PartCrc32s.MAX_RECORDED_PARTS])).isPresent();
        assertThat(PartCrc32s.record(PART, new long[PartCrc32s.MAX_RECORDED_PARTS + 1])).isEmpty();
        assertThat(PartCrc32s.record(PART, new long[0])).isEmpty();
        assertThat(PartCrc32s.withoutRecord(recorded(PART, PARTS))).containsOnlyKeys("origin");
    }
}
