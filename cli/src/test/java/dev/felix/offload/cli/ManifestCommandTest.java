package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code manifest show}: its JSON and text contracts, and its exit codes. */
class ManifestCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    /** As 0.6.0-preview.3 wrote it: no node id in the key. */
    private static final ManifestEntry PREVIEW = new ManifestEntry(0, 0, 99, 4096, 1_700_000_000_000_000L,
            1_700_000_000_250_000L, 0x1234ABCD, SHARD + "/00000000000000000000-00000000000000000000.segment");
    /** Every u64 and the u32 with its top bit set. */
    private static final ManifestEntry TOP_BITS = new ManifestEntry(-1L, 0xFFFF_FFFF_FFFF_FFF0L, -1L,
            Long.MIN_VALUE, 5, -1L, 0xFEEDFACE, "node-1/" + SHARD + "/18446744073709551600-18446744073709551615.segment");

    @TempDir
    Path root;
    Path shardDir;

    @BeforeEach
    void shard() throws IOException {
        shardDir = Files.createDirectory(root.resolve(SHARD));
    }

    private void save(Manifest m) throws Exception {
        ManifestStore.open(shardDir).save(m);
    }

    private CliRun show(String... more) {
        String[] args = new String[3 + more.length];
        args[0] = "manifest";
        args[1] = "show";
        args[2] = "--shard-dir=" + shardDir;
        System.arraycopy(more, 0, args, 3, more.length);
        return CliRun.of(args);
    }

    @Test
    void jsonIsOneObjectWithTheVersionAndEveryEntryUnsigned() throws Exception {
        save(Manifest.of(List.of(PREVIEW, TOP_BITS)));
        CliRun run = show("--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(run.out().lines().toList()).hasSize(1);
        JsonNode expected = JSON.readTree("""
                {"version":1,"entries":[
                  {"segment":0,"base":0,"last":99,"size":4096,"oldest":1700000000000000,"newest":1700000000250000,
                   "crc32":"1234abcd",
                   "key":"acme_default_orders_0-0d3aed4b998d2798/00000000000000000000-00000000000000000000.segment"},
                  {"segment":18446744073709551615,"base":18446744073709551600,"last":18446744073709551615,
                   "size":9223372036854775808,"oldest":5,"newest":18446744073709551615,"crc32":"feedface",
                   "key":"node-1/acme_default_orders_0-0d3aed4b998d2798/18446744073709551600-18446744073709551615.segment"}
                ]}""");
        assertThat(JSON.readTree(run.out())).isEqualTo(expected);
        assertThat(run.err()).isEmpty();
    }

    @Test
    void textIsOneLinePerEntryAndATotalsLine() throws Exception {
        save(Manifest.of(List.of(PREVIEW, TOP_BITS)));
        CliRun run = show();
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(run.out().lines().toList()).containsExactly(
                "segment=0 base=0 last=99 size=4096 oldest=1700000000000000 newest=1700000000250000 crc32=1234abcd"
                        + " key=" + PREVIEW.objectKey(),
                "segment=18446744073709551615 base=18446744073709551600 last=18446744073709551615"
                        + " size=9223372036854775808 oldest=5 newest=18446744073709551615 crc32=feedface"
                        + " key=" + TOP_BITS.objectKey(),
                "entries=2 bytes=9223372036854779904 oldest=5 newest=18446744073709551615");
    }

    @Test
    void anAbsentManifestIsEmptyNotAnError() {
        CliRun json = show("--json");
        assertThat(json.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(json.out().strip()).isEqualTo("{\"version\":1,\"entries\":[]}");
        CliRun text = show();
        assertThat(text.exitCode()).isEqualTo(FelixOffload.EXIT_OK);
        assertThat(text.out().lines().toList()).containsExactly(
                "no offload.manifest: nothing offloaded (reads as empty)", "entries=0 bytes=0 oldest=- newest=-");
        assertThat(shardDir.resolve(ManifestStore.FILE_NAME)).doesNotExist();
    }

    @Test
    void aDamagedManifestPrintsTheTypedErrorAndExits1LeavingTheFileAlone() throws Exception {
        save(Manifest.of(List.of(PREVIEW)));
        Path file = shardDir.resolve(ManifestStore.FILE_NAME);
        byte[] bytes = Files.readAllBytes(file);
        bytes[30] ^= 0x01;
        Files.write(file, bytes);
        int crcAt = bytes.length - 4;

        CliRun json = show("--json");
        assertThat(json.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
        JsonNode error = JSON.readTree(json.out());
        assertThat(error.get("error").asText()).isEqualTo("SideFileChecksum");
        assertThat(error.get("file").asText()).isEqualTo("offload.manifest");
        assertThat(error.get("position").asLong()).isEqualTo(crcAt);
        assertThat(error.get("stored_crc32").asText()).hasSize(8);
        assertThat(error.get("computed_crc32").asText()).isNotEqualTo(error.get("stored_crc32").asText());
        assertThat(error.get("message").asText()).contains("shard " + SHARD, "file offload.manifest", "byte " + crcAt);

        CliRun text = show();
        assertThat(text.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
        assertThat(text.out().strip()).startsWith("error: SideFileChecksum at shard " + SHARD
                + ", file offload.manifest, byte " + crcAt).contains("stored crc32 0x", "computed 0x");

        assertThat(Files.readAllBytes(file)).isEqualTo(bytes);
    }

    @Test
    void aTruncatedManifestCarriesNeededAndAvailable() throws Exception {
        Files.write(shardDir.resolve(ManifestStore.FILE_NAME),
                Arrays.copyOf(ManifestCodec.encode(Manifest.empty()), 10));
        CliRun run = show("--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_CORRUPT);
        JsonNode error = JSON.readTree(run.out());
        assertThat(error.get("error").asText()).isEqualTo("Truncated");
        assertThat(error.get("position").asLong()).isZero();
        assertThat(error.get("needed").asLong()).isEqualTo(16);
        assertThat(error.get("available").asLong()).isEqualTo(10);
    }

    @Test
    void aMissingShardDirectoryIsAUsageError() {
        CliRun run = CliRun.of("manifest", "show", "--shard-dir", root.resolve("nope").toString());
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(run.err()).contains("no shard directory at");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aManifestThatCannotBeReadIsAnIoError() throws IOException {
        Files.createDirectory(shardDir.resolve(ManifestStore.FILE_NAME));
        CliRun run = show("--json");
        assertThat(run.exitCode()).isEqualTo(FelixOffload.EXIT_IO);
        assertThat(run.err()).contains("I/O error");
    }

    @Test
    void usageErrors() {
        assertThat(CliRun.of("manifest").exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(CliRun.of("manifest", "show").exitCode()).isEqualTo(FelixOffload.EXIT_USAGE);
        assertThat(CliRun.of("manifest", "show", "--shard-dir", ".", "--bogus").exitCode())
                .isEqualTo(FelixOffload.EXIT_USAGE);
    }

    @Test
    void helpListsTheCommand() {
        CliRun run = CliRun.of("--help");
        assertThat(run.out()).contains("manifest");
        assertThat(CliRun.of("manifest", "show", "--help").out()).contains("--shard-dir", "--json");
    }
}
