package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.zip.CRC32;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The combined CRC32 of pieces is what {@link CRC32} computes over the whole, however the bytes are cut. */
class Crc32CombineTest {
    private static long crc(byte[] bytes, int from, int to) {
        CRC32 crc = new CRC32();
        crc.update(bytes, from, to - from);
        return crc.getValue();
    }

    @Property(tries = 500)
    void twoPiecesCombineToTheWhole(@ForAll @Size(max = 4096) byte[] bytes, @ForAll @IntRange(max = 4096) int at) {
        int cut = Math.min(at, bytes.length);
        long combined = Crc32Combine.combine(crc(bytes, 0, cut), crc(bytes, cut, bytes.length), bytes.length - cut);
        assertThat(combined).isEqualTo(crc(bytes, 0, bytes.length));
    }

    @Property(tries = 200)
    void manyRandomPiecesCombineToTheWhole(@ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int pieces) {
        Random random = new Random(seed);
        byte[] bytes = new byte[random.nextInt(200_000)];
        random.nextBytes(bytes);
        long combined = 0;
        int from = 0;
        for (int i = 0; i < pieces; i++) {
            int to = i == pieces - 1 ? bytes.length : from + random.nextInt(bytes.length - from + 1);
            combined = Crc32Combine.combine(combined, crc(bytes, from, to), to - from);
            from = to;
        }
        assertThat(combined).isEqualTo(crc(bytes, 0, bytes.length));
    }

    @Test
    void equalPartsOfAMultipartUploadCombineToTheWhole() {
        byte[] bytes = new byte[5 * 1024 * 1024 * 2 + 12345];
        new Random(7).nextBytes(bytes);
        int part = 5 * 1024 * 1024;
        long[] parts = {crc(bytes, 0, part), crc(bytes, part, 2 * part), crc(bytes, 2 * part, bytes.length)};
        assertThat(PartCrc32s.wholeCrc32(parts, part, bytes.length)).isEqualTo(crc(bytes, 0, bytes.length));
    }

    @Test
    void longLengthsAndEdgeCases() {
        assertThat(Crc32Combine.combine(0x12345678L, 0, 0)).as("nothing appended").isEqualTo(0x12345678L);
        assertThat(Crc32Combine.combine(0, 0x9abcdef0L, 77)).as("nothing before").isEqualTo(0x9abcdef0L);
        // 3 GiB of zeros after "a", against CRC32 fed the same in 1 MiB blocks
        CRC32 direct = new CRC32();
        direct.update('a');
        byte[] zeros = new byte[1024 * 1024];
        for (int i = 0; i < 3 * 1024; i++) {
            direct.update(zeros);
        }
        CRC32 a = new CRC32();
        a.update('a');
        CRC32 oneMiB = new CRC32();
        oneMiB.update(zeros);
        long zerosCrc = 0;
        for (int i = 0; i < 3 * 1024; i++) {
            zerosCrc = Crc32Combine.combine(zerosCrc, oneMiB.getValue(), zeros.length);
        }
        assertThat(Crc32Combine.combine(a.getValue(), zerosCrc, 3L * 1024 * 1024 * 1024)).isEqualTo(direct.getValue());
        assertThatThrownBy(() -> Crc32Combine.combine(1, 2, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
