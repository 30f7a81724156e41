package dev.felix.offload.root;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal of pending writes: golden bytes, torn tails, damage. */
class PendingKeysFileTest {

    @TempDir
    Path root;

    /** Header, ADD "n/s/a", ADD "n/s/b", DONE "n/s/a", each record's CRC-32 over op, length and key. */
    private static final String GOLDEN = "4658504b" + "0001" + "0000" // "FXPK", version 1, reserved
            + "010005" + "6e2f732f61" + "590887aa"
            + "010005" + "6e2f732f62" + "c001d610"
            + "020005" + "6e2f732f61" + "d7878049";

    @Test
    void goldenBytes() throws Exception {
        byte[] expected = HexFormat.of().parseHex(GOLDEN);
        byte[] written = concat(PendingKeysFile.header(), PendingKeysFile.add("n/s/a"), PendingKeysFile.add("n/s/b"),
                PendingKeysFile.done("n/s/a"));
        assertThat(HexFormat.of().formatHex(written)).isEqualTo(HexFormat.of().formatHex(expected));
        assertThat(HexFormat.of().formatHex(written, 0, 8)).isEqualTo("4658504b00010000");
        assertThat(PendingKeysFile.decode(written, "f").keys()).containsExactly("n/s/b");
        assertThat(PendingKeysFile.encode(List.of("n/s/b"))).isEqualTo(concat(PendingKeysFile.header(),
                PendingKeysFile.add("n/s/b")));
    }

    @Test
    void aTornLastRecordIsDroppedNotDamage() throws Exception {
        byte[] whole = concat(PendingKeysFile.header(), PendingKeysFile.add("n/s/a"), PendingKeysFile.add("n/s/b"));
        int second = PendingKeysFile.HEADER_LENGTH + PendingKeysFile.add("n/s/a").length;
        for (int cut = second; cut < whole.length; cut++) {
            PendingKeysFile.Decoded d = PendingKeysFile.decode(Arrays.copyOf(whole, cut), "f");
            assertThat(d.keys()).as("cut at %d", cut).containsExactly("n/s/a");
            assertThat(d.tornTail()).isEqualTo(cut > second);
            assertThat(d.validLength()).isEqualTo(second);
        }
        assertThatThrownBy(() -> PendingKeysFile.decode(Arrays.copyOf(whole, 5), "/r/offload.pending"))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
                    assertThat(e.getMessage()).contains("/r/offload.pending");
                });
    }

    @Test
    void damageIsATypedErrorNamingTheFileAndByte() throws Exception {
        byte[] whole = concat(PendingKeysFile.header(), PendingKeysFile.add("n/s/a"), PendingKeysFile.add("n/s/b"));
        byte[] flipped = whole.clone();
        flipped[PendingKeysFile.HEADER_LENGTH + 4] ^= 0x01; // inside the first key
        assertThatThrownBy(() -> PendingKeysFile.decode(flipped, "/r/offload.pending"))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
                    assertThat(e.getMessage()).contains("/r/offload.pending").contains("byte 8");
                });
        byte[] magic = whole.clone();
        magic[0] = 'X';
        assertThatThrownBy(() -> PendingKeysFile.decode(magic, "f")).isInstanceOfSatisfying(CorruptionException.class,
                e -> assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_MAGIC));
        byte[] op = whole.clone();
        op[PendingKeysFile.HEADER_LENGTH] = 7;
        assertThatThrownBy(() -> PendingKeysFile.decode(op, "f")).isInstanceOfSatisfying(CorruptionException.class,
                e -> assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT));
        byte[] length = whole.clone();
        length[PendingKeysFile.HEADER_LENGTH + 1] = (byte) 0xff; // 65285 bytes: refused before any allocation
        assertThatThrownBy(() -> PendingKeysFile.decode(length, "f")).isInstanceOfSatisfying(CorruptionException.class,
                e -> assertThat(e.detail()).contains("1 to 1024"));
    }

    @Test
    void appendsReadBackAndARewriteReplaces() throws Exception {
        assertThat(PendingKeys.read(root)).as("no journal: unknown, not empty").isEmpty();
        PendingKeys.add(root, "n/s/a");
        PendingKeys.addAll(root, List.of("n/s/b", "n/s/c"));
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).containsExactly("n/s/a", "n/s/b", "n/s/c"));
        PendingKeys.rewrite(root, List.of("n/s/c"));
        assertThat(Files.readAllBytes(PendingKeys.fileIn(root))).isEqualTo(PendingKeysFile.encode(List.of("n/s/c")));
        assertThat(PendingKeys.rootOf(root.resolve("dead-letters/x"), "dead-letters/x")).isEqualTo(root.toAbsolutePath());
        assertThat(PendingKeys.rootOf(root.resolve("orders-0"), "orders-0")).isEqualTo(root.toAbsolutePath());
    }

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
