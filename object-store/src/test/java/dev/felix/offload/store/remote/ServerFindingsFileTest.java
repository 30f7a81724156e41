package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The findings file's layout, byte for byte, and every way a damaged one is refused whole. */
class ServerFindingsFileTest {

    private static final ServerFindings RGW_LIKE = new ServerFindings(
            new ServerFindings.Key("http://127.0.0.1:9000", "felix-segments", ChecksumPolicy.AUTO, Encryption.Kind.NONE),
            "Jetty(11.0.25)", Instant.parse("2026-12-04T00:50:08Z"),
            new ServerTraits(true, false, false, false, true, true), OptionalLong.of(310378496));
    private static final ServerFindings AWS_LIKE = new ServerFindings(
            new ServerFindings.Key("aws:eu-west-1", "archive", ChecksumPolicy.WHEN_REQUIRED, Encryption.Kind.KMS),
            "", Instant.parse("2026-11-30T23:59:59Z"),
            new ServerTraits(false, false, false, true, true, false), OptionalLong.empty());

    private static byte[] golden() throws Exception {
        try (InputStream in = ServerFindingsFileTest.class.getResourceAsStream("/golden/store-findings-v1.txt")) {
            return in.readAllBytes();
        }
    }

    @Test
    void encodesToTheGoldenBytesAndDecodesThemBack() throws Exception {
        assertThat(new String(ServerFindingsFile.encode(List.of(RGW_LIKE, AWS_LIKE)), StandardCharsets.US_ASCII))
                .isEqualTo(new String(golden(), StandardCharsets.US_ASCII));
        assertThat(ServerFindingsFile.decode(golden())).containsExactly(RGW_LIKE, AWS_LIKE);
    }

    @Test
    void aKeyFromTheSettingsNamesTheEndpointOrAwsRegion() {
        RemoteStoreSettings custom = RemoteStoreSettings.builder("felix-segments")
                .endpoint(java.net.URI.create("http://127.0.0.1:9000/")).build();
        assertThat(ServerFindings.Key.of(custom)).isEqualTo(RGW_LIKE.key());
        RemoteStoreSettings aws = RemoteStoreSettings.builder("archive").region("eu-west-1")
                .checksumMode(ChecksumPolicy.WHEN_REQUIRED).encryption(Encryption.kms(null)).build();
        assertThat(ServerFindings.Key.of(aws)).isEqualTo(AWS_LIKE.key());
    }

    @Test
    void replacingKeepsOtherStoresAndPutsTheNewFirst() {
        ServerFindings newer = RGW_LIKE.withUploadRate(1);
        assertThat(ServerFindingsFile.replacing(List.of(RGW_LIKE, AWS_LIKE), newer)).containsExactly(newer, AWS_LIKE);
    }

    @Test
    void aServerHeaderWithUnprintableCharactersIsKeptPrintable() throws Exception {
        ServerFindings odd = new ServerFindings(RGW_LIKE.key(), "Odd\nServer\u00e9", RGW_LIKE.learntAt(),
                RGW_LIKE.traits(), OptionalLong.empty());
        assertThat(ServerFindingsFile.decode(ServerFindingsFile.encode(List.of(odd))).get(0).serverIdentity())
                .isEqualTo("Odd?Server?");
    }

    @Test
    void damagedFilesAreRefusedNamingTheLine() throws Exception {
        String good = new String(golden(), StandardCharsets.US_ASCII);
        assertRefused(good.replace("felix-offload store findings 1", "felix-offload store findings 2"),
                "line 1: expected 'felix-offload store findings 1'");
        assertRefused(good.replace("crc32-verified=false", "crc32-verified=maybe"), "line 5:",
                "'crc32-verified' must be true or false");
        assertRefused(good.replace("md5-etags=false\n", ""), "line 20:", "has no 'md5-etags'");
        assertRefused(good.replace("sse=none", "sse=none\nsse=s3"), "line 10: 'sse' given twice");
        assertRefused(good.replace("sse=none", "colour=blue"), "line 9: unknown name 'colour'");
        assertRefused(good.replace("sse=none", "sse none"), "line 9: expected name=value");
        assertRefused(good.replace("learnt-at=2026-12-04T00:50:08Z", "learnt-at=yesterday"), "line 5:", "does not decode");
        assertRefused(good.replace("upload-rate=310378496", "upload-rate=-1"), "upload-rate must be positive");
        assertRefused(good.replace("bucket=archive", "bucket="), "'bucket' is empty");
        assertRefused(good.replace("Jetty", "Jétty"), "is not printable ASCII");
        assertRefused("felix-offload store findings 1\nendpoint=x\n", "line 2: expected '[store]'");
        assertRefused(good + "x".repeat(ServerFindingsFile.MAX_BYTES), "bytes, more than");
        assertRefused("felix-offload store findings 1\n" + ("[store]\n" + good.substring(good.indexOf("endpoint"),
                good.indexOf("\n[store]", good.indexOf("endpoint")))).repeat(ServerFindingsFile.MAX_SECTIONS + 1), "more than 64 sections");
    }

    private static void assertRefused(String text, String... says) {
        assertThatThrownBy(() -> ServerFindingsFile.decode(text.getBytes(StandardCharsets.ISO_8859_1)))
                .isInstanceOf(ServerFindingsFile.UnreadableException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(says));
    }

    @Test
    void findingsAgeFromWhenTheyWereLearntAndAClockSetBackAgesThemToo() {
        Instant learnt = RGW_LIKE.learntAt();
        assertThat(RGW_LIKE.agedAt(learnt.plusSeconds(3600), java.time.Duration.ofDays(1))).isFalse();
        assertThat(RGW_LIKE.agedAt(learnt.plus(java.time.Duration.ofDays(1)), java.time.Duration.ofDays(1))).isTrue();
        assertThat(RGW_LIKE.agedAt(learnt.plusSeconds(1), java.time.Duration.ZERO)).isTrue();
        assertThat(RGW_LIKE.agedAt(learnt.minusSeconds(3600), java.time.Duration.ofDays(1))).isTrue();
    }
}
