package dev.felix.offload.log.format;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * Offsets are u64 (spec, "Conventions"), and index entries are "strictly ascending by offset, which is
 * what seek_position's binary search relies on": ascending as unsigned numbers. These tests use
 * offsets at and above 2^63, which a Java long holds as negative values.
 *
 * <p>EXPECTED TO FAIL against the current main code: {@link SegmentIndex} compares offsets as signed
 * longs (decode's order check, {@link SegmentIndex#of}'s check, and {@code Arrays.binarySearch} in
 * {@link SegmentIndex#seekPosition}).
 *
 */
class SegmentIndexUnsignedOffsetsTest {

    private static final CorruptionSite SITE = new CorruptionSite("u64", 0, 0);
    private static final long TWO_TO_63 = Long.MIN_VALUE; // 9223372036854775808 as u64

    private static byte[] index(long base, long[][] entries) {
        ByteBuffer b = ByteBuffer.allocate(24 + 16 * entries.length);
        b.putInt(0x464C5349).putShort((short) 3).putShort((short) 0).putLong(base).putLong(0);
        for (long[] e : entries) {
            b.putLong(e[0]).putLong(e[1]);
        }
        return b.array();
    }

    @Test
    void indexWhoseEntriesAscendAcrossTwoToThe63Decodes() {
        // 2^63 - 2, 2^63 - 1, 2^63: strictly ascending as u64.
        byte[] bytes = index(Long.MAX_VALUE - 1, new long[][] {
                {Long.MAX_VALUE - 1, 32}, {Long.MAX_VALUE, 4200}, {TWO_TO_63, 8400}});
        assertThatCode(() -> SegmentIndex.decode(ByteBuffer.wrap(bytes), SITE))
                .as("entries ascending as u64 are in order").doesNotThrowAnyException();
    }

    @Test
    void indexOfOffsetsAscendingAcrossTwoToThe63CanBeBuilt() {
        assertThatCode(() -> SegmentIndex.of(Long.MAX_VALUE, new long[] {Long.MAX_VALUE, TWO_TO_63},
                new long[] {32, 4200})).doesNotThrowAnyException();
    }

    @Test
    void seekPositionComparesOffsetsAsUnsigned() throws CorruptionException {
        // Both entries are above 2^63; as signed longs they happen to ascend, so this decodes today.
        SegmentIndex idx = SegmentIndex.decode(ByteBuffer.wrap(index(TWO_TO_63, new long[][] {
                {TWO_TO_63, 32}, {TWO_TO_63 + 10, 4200}})), SITE);
        assertThat(idx.seekPosition(TWO_TO_63 + 5)).isEqualTo(32);
        assertThat(idx.seekPosition(-1L)).as("2^64 - 1 lies past the last entry").isEqualTo(4200);
        assertThat(idx.seekPosition(5)).as("5 lies below the first entry, 2^63").isEqualTo(-1);
    }
}
