package dev.felix.offload.store.remote;

/**
 * The CRC32 of two byte strings laid end to end, from their two CRC32s and the second one's
 * length, without the bytes. A multipart upload's parts are checksummed one by one; this turns
 * their CRC32s into the whole object's.
 *
 * <p>Why it works: apart from its initial and final inversions, which cancel out here, CRC32 is
 * the remainder of the message (as a polynomial over GF(2)) times x^32 modulo the generator P.
 * Appending n bytes to A multiplies A's part by x^(8n) and adds the CRC of the appended bytes, so
 * {@code crc(A || B) = crc(A) * x^(8 |B|) mod P  xor  crc(B)}. The multiplication by x^(8n) is done
 * by square-and-multiply over the bits of n with a table of x^(2^k) mod P, so it costs about 64
 * polynomial products however long B is.
 *
 * <p>Polynomials are held the way {@link java.util.zip.CRC32} holds its state: bit-reflected, so
 * bit 31 is the coefficient of x^0 and bit 0 that of x^31, and {@code 0xEDB88320} is P without
 * its x^32 term.
 */
public final class Crc32Combine {
    private static final int REFLECTED_POLY = 0xEDB88320;
    /** The polynomial 1 (x^0). */
    private static final int ONE = 0x8000_0000;
    /** {@code POWERS[k]} is x^(2^k) mod P, enough entries for any non-negative {@code long} count of bits. */
    private static final int[] POWERS = new int[67];

    static {
        int p = 0x4000_0000; // x^1
        for (int k = 0; k < POWERS.length; k++) {
            POWERS[k] = p;
            p = multiply(p, p);
        }
    }

    private Crc32Combine() {}

    /**
     * The CRC32 of A followed by B.
     *
     * @param crcA the CRC32 of A (unsigned, in the low 32 bits)
     * @param crcB the CRC32 of B
     * @param lengthB B's length in bytes
     */
    public static long combine(long crcA, long crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("length must not be negative: " + lengthB);
        }
        // x^(8 * lengthB) = product of x^(2^(k+3)) over the set bits k of lengthB
        int shift = ONE;
        int k = 3;
        for (long n = lengthB; n != 0; n >>>= 1, k++) {
            if ((n & 1) != 0) {
                shift = multiply(POWERS[k], shift);
            }
        }
        int shifted = multiply(shift, (int) crcA);
        return (shifted ^ (int) crcB) & 0xFFFF_FFFFL;
    }

    /** The product a * b mod P, both bit-reflected. */
    private static int multiply(int a, int b) {
        int product = 0;
        int bAtI = b; // b * x^i mod P for the coefficient of x^i being looked at
        for (int bit = 31; bit >= 0; bit--) {
            if ((a & (1 << bit)) != 0) {
                product ^= bAtI;
            }
            // times x: one step towards the high powers, reduced by P when x^31 overflows into x^32
            bAtI = (bAtI & 1) != 0 ? (bAtI >>> 1) ^ REFLECTED_POLY : bAtI >>> 1;
        }
        return product;
    }
}
