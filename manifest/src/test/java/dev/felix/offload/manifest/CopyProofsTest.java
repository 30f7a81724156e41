package dev.felix.offload.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The proofs file byte for byte (its layout in {@link CopyProofs}), and what reading it back gives. */
class CopyProofsTest {

    @TempDir
    Path shard;

    @Test
    void theFileIsWrittenAsItsLayoutSaysAndReadBack() throws Exception {
        // CRC32s with leading zero digits and with the sign bit set: both are eight lowercase hex digits
        ManifestEntry small = new ManifestEntry(0, 0, 9, 100, 1, 2, 0x0000abcd, "node/s/00000000000000000000-00000000000000000000.segment");
        ManifestEntry signed = new ManifestEntry(1, 10, 19, 200, 3, 4, 0xfeedface, "node/s/00000000000000000010-00000000000000000001.segment");
        Manifest manifest = Manifest.of(List.of(small, signed));
        Clock clock = Clock.fixed(Instant.ofEpochMilli(1_700_000_000_123L), ZoneOffset.UTC);
        Map<ManifestEntry, String> how = new LinkedHashMap<>();
        how.put(small, "content-md5");
        how.put(signed, "read back");

        CopyProofs.read(shard, clock).recorded(how, manifest);

        String body = "felix-offload copy proofs v2\n"
                + "0 0 100 0000abcd content-md5 1700000000123 node/s/00000000000000000000-00000000000000000000.segment\n"
                + "1 10 200 feedface read-back 1700000000123 node/s/00000000000000000010-00000000000000000001.segment\n";
        String text = Files.readString(shard.resolve(CopyProofs.FILE_NAME), StandardCharsets.UTF_8);
        assertThat(text).startsWith("felix-offload copy proofs v2\n");
        // the lines' order follows the map the proofs are kept in; the bytes of each line are fixed
        assertThat(text.lines().skip(1).filter(l -> !l.startsWith("crc32 ")).sorted().toList())
                .isEqualTo(body.lines().skip(1).sorted().toList());
        String written = text.substring(0, text.lastIndexOf("crc32 "));
        CRC32 crc = new CRC32();
        crc.update(written.getBytes(StandardCharsets.UTF_8));
        assertThat(text).endsWith("crc32 " + String.format("%08x", crc.getValue()) + "\n");

        CopyProofs back = CopyProofs.read(shard, clock);
        assertThat(back.how(small)).isEqualTo("content-md5");
        assertThat(back.how(signed)).isEqualTo("read-back");
        assertThat(back.since(signed)).hasValue(1_700_000_000_123L);
    }
}
