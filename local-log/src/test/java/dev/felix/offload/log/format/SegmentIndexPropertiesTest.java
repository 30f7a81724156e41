package dev.felix.offload.log.format;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Property tests for {@link SegmentIndex}: encode/decode round trip (also with a torn final entry)
 * and {@link SegmentIndex#seekPosition} agreeing with a linear search. Offsets stay within the
 * signed range here; u64 offsets above Long.MAX_VALUE are covered by SegmentIndexUnsignedOffsetsTest.
 */
class SegmentIndexPropertiesTest {

    private static final CorruptionSite SITE = new CorruptionSite("prop", 2, 0);

    @Provide
    static Arbitrary<long[]> ascendingOffsets() {
        return Arbitraries.longs().between(0, Long.MAX_VALUE).set().ofMaxSize(300)
                .map(set -> set.stream().mapToLong(Long::longValue).sorted().toArray());
    }

    private static long[] positionsFor(long[] offsets, long seed) {
        long[] positions = new long[offsets.length];
        long p = 32;
        for (int i = 0; i < offsets.length; i++) {
            positions[i] = p;
            p += 28 + Math.floorMod(seed * 31 + i * 7919L, 9000);
        }
        return positions;
    }

    @Property(tries = 300)
    void encodeDecodeRoundTrip(@ForAll("ascendingOffsets") long[] offsets, @ForAll long base, @ForAll long seed,
                               @ForAll @IntRange(max = 15) int tornBytes) throws Exception {
        long[] positions = positionsFor(offsets, seed);
        SegmentIndex index = SegmentIndex.of(base, offsets, positions);
        byte[] bytes = index.encode();
        assertThat(bytes).hasSize(24 + 16 * offsets.length);

        byte[] withTorn = Arrays.copyOf(bytes, bytes.length + tornBytes);
        Arrays.fill(withTorn, bytes.length, withTorn.length, (byte) 0x7F);
        SegmentIndex decoded = SegmentIndex.decode(ByteBuffer.wrap(withTorn), SITE);

        assertThat(decoded.version()).isEqualTo(SegmentIndex.VERSION_WRITTEN);
        assertThat(decoded.baseOffset()).isEqualTo(base);
        assertThat(decoded.size()).isEqualTo(offsets.length);
        for (int i = 0; i < offsets.length; i++) {
            assertThat(decoded.offsetAt(i)).isEqualTo(offsets[i]);
            assertThat(decoded.positionAt(i)).isEqualTo(positions[i]);
        }
        assertThat(decoded.encode()).containsExactly(bytes);
    }

    @Property(tries = 300)
    void seekPositionAgreesWithALinearSearch(@ForAll("ascendingOffsets") long[] offsets, @ForAll long seed,
                                             @ForAll("queries") List<Long> randomQueries) {
        long[] positions = positionsFor(offsets, seed);
        SegmentIndex index = SegmentIndex.of(0, offsets, positions);
        List<Long> queries = new java.util.ArrayList<>(randomQueries);
        for (long o : offsets) {
            queries.add(o);
            if (o > 0) {
                queries.add(o - 1);
            }
            if (o < Long.MAX_VALUE) {
                queries.add(o + 1);
            }
        }
        for (long q : queries) {
            assertThat(index.seekPosition(q)).as("seek %d", q).isEqualTo(linear(offsets, positions, q));
        }
    }

    @Provide
    static Arbitrary<List<Long>> queries() {
        return Arbitraries.longs().between(0, Long.MAX_VALUE).list().ofMaxSize(20);
    }

    private static long linear(long[] offsets, long[] positions, long q) {
        long found = -1;
        for (int i = 0; i < offsets.length; i++) {
            if (offsets[i] <= q) {
                found = positions[i];
            }
        }
        return found;
    }
}
