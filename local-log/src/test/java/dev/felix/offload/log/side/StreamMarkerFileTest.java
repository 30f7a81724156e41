package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

import static dev.felix.offload.log.side.SideFileBytes.concat;
import static dev.felix.offload.log.side.SideFileBytes.crc32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The {@code .streams/} markers: the text format, its strict parsing, file names, and the authoritative load rule. */
class StreamMarkerFileTest {

    private static final CorruptionSite SITE = CorruptionSite.inFile("root", ".streams/m", 0);

    @TempDir
    Path root;

    private static final String GOLDEN_BODY = """
            felix-stream-marker 1
            tenant=acme
            namespace=default
            stream=orders
            incarnation=0006411a0ccf2e40
            delete_unfinished=false
            deleted_through=none
            """;
    private static final StreamMarker GOLDEN_MARKER = new StreamMarker("acme", "default", "orders",
            OptionalLong.of(0x6411a0ccf2e40L), false, OptionalLong.empty());

    /** {@code body} as UTF-8 followed by its crc32 line, computed here. */
    private static byte[] sealed(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return sealed(bytes);
    }

    private static byte[] sealed(byte[] body) {
        String crcLine = String.format("crc32=%08x\n", crc32(body, 0, body.length));
        return concat(body, crcLine.getBytes(StandardCharsets.US_ASCII));
    }

    private static final byte[] GOLDEN = sealed(GOLDEN_BODY);

    private static StreamMarker decode(byte[] bytes) throws CorruptionException {
        return StreamMarkerFile.decode(ByteBuffer.wrap(bytes), SITE);
    }

    private static CorruptionException decodeFails(byte[] bytes, String what) {
        SideFileBytes.Outcome<StreamMarker> o =
                SideFileBytes.decodeGuarded(StreamMarkerFile::decode, bytes, SITE, 64 * 1024, what);
        assertThat(o.error()).as(what).isNotNull();
        return o.error();
    }

    @Test
    void goldenMarkerEncodesAndDecodesToTheTypedText() throws CorruptionException {
        assertThat(StreamMarkerFile.encode(GOLDEN_MARKER)).containsExactly(GOLDEN);
        assertThat(new String(GOLDEN, StandardCharsets.UTF_8)).endsWith("\ncrc32="
                + String.format("%08x", crc32(GOLDEN_BODY.getBytes(StandardCharsets.UTF_8), 0, GOLDEN_BODY.length()))
                + "\n");
        assertThat(decode(GOLDEN)).isEqualTo(GOLDEN_MARKER);
    }

    @Test
    void aDeleteInProgressOfIncarnationZeroWithNamesHoldingEqualsAndNonAscii() throws CorruptionException {
        String body = """
                felix-stream-marker 1
                tenant=a=b
                namespace=
                stream=\u00f6rders \u2603
                incarnation=0000000000000000
                delete_unfinished=true
                deleted_through=0000000000000000
                """;
        StreamMarker marker = new StreamMarker("a=b", "", "\u00f6rders \u2603", OptionalLong.of(0), true,
                OptionalLong.of(0));
        assertThat(StreamMarkerFile.encode(marker)).containsExactly(sealed(body));
        assertThat(decode(sealed(body))).isEqualTo(marker);
        StreamMarker none = new StreamMarker("t", "n", "s", OptionalLong.empty(), false, OptionalLong.of(-1L));
        assertThat(new String(StreamMarkerFile.encode(none), StandardCharsets.UTF_8))
                .contains("\nincarnation=none\n", "\ndeleted_through=ffffffffffffffff\n");
        assertThat(decode(StreamMarkerFile.encode(none))).isEqualTo(none);
    }

    @Provide
    static Arbitrary<StreamMarker> markers() {
        Arbitrary<String> names = Arbitraries.strings().all().ofMaxLength(40).filter(s -> {
            try {
                new StreamMarker(s, "", "", OptionalLong.empty(), false, OptionalLong.empty());
                return true;
            } catch (IllegalArgumentException e) {
                return false;
            }
        });
        Arbitrary<OptionalLong> incarnations = Arbitraries.longs().map(OptionalLong::of)
                .injectNull(0.3).map(o -> o == null ? OptionalLong.empty() : o);
        return Combinators.combine(names, names, names, incarnations, Arbitraries.of(true, false), incarnations)
                .as(StreamMarker::new);
    }

    @Property(tries = 300)
    void everyMarkerRoundTrips(@ForAll("markers") StreamMarker marker) throws CorruptionException {
        assertThat(decode(StreamMarkerFile.encode(marker))).isEqualTo(marker);
    }

    @Test
    void namesWithLineBreaksOrLoneSurrogatesCannotBeWritten() {
        for (String bad : List.of("a\nb", "a\rb", "\ud800")) {
            assertThatThrownBy(() -> new StreamMarker("t", "n", bad, OptionalLong.empty(), false, OptionalLong.empty()))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    // --- strict parsing

    private static byte[] sealedWith(String from, String to) {
        assertThat(GOLDEN_BODY).contains(from);
        return sealed(GOLDEN_BODY.replace(from, to));
    }

    @Test
    void unknownMissingRepeatedOrMisplacedKeysAreContent() {
        List<byte[]> broken = List.of(
                sealedWith("stream=orders\n", "strem=orders\n"),
                sealedWith("delete_unfinished=false\n", ""),
                sealedWith("stream=orders\n", "stream=orders\nstream=orders\n"),
                sealedWith("tenant=acme\nnamespace=default\n", "namespace=default\ntenant=acme\n"),
                sealedWith("deleted_through=none\n", "deleted_through=none\nextra=1\n"),
                sealedWith("stream=orders\n", "stream=orders\n\n"),
                sealedWith("stream=orders\n", "stream orders\n"),
                sealedWith("tenant=acme\n", "Tenant=acme\n"));
        for (int i = 0; i < broken.size(); i++) {
            assertThat(decodeFails(broken.get(i), "case " + i).kind()).as("case %d", i)
                    .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        }
    }

    @Test
    void valuesOutsideTheirFormAreContent() {
        List<byte[]> broken = List.of(
                sealedWith("0006411a0ccf2e40", "0006411A0CCF2E40"),
                sealedWith("0006411a0ccf2e40", "6411a0ccf2e40"),
                sealedWith("0006411a0ccf2e40", "00006411a0ccf2e40"),
                sealedWith("0006411a0ccf2e40", "-006411a0ccf2e40"),
                sealedWith("0006411a0ccf2e40", ""),
                sealedWith("0006411a0ccf2e40", "None"),
                sealedWith("=false", "=False"),
                sealedWith("=false", "=0"),
                sealedWith("deleted_through=none", "deleted_through= none"),
                sealedWith("stream=orders\n", "stream=orders\r\n"));
        for (int i = 0; i < broken.size(); i++) {
            assertThat(decodeFails(broken.get(i), "case " + i).kind()).as("case %d", i)
                    .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        }
    }

    @Test
    void aNameThatIsNotUtf8IsContentNeverAReplacement() {
        byte[] body = GOLDEN_BODY.getBytes(StandardCharsets.UTF_8);
        int at = GOLDEN_BODY.indexOf("orders");
        byte[] bad = body.clone();
        bad[at] = (byte) 0xC3; // a two-byte lead followed by 'r'
        CorruptionException e = decodeFails(sealed(bad), "bad utf-8");
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(e.site().position()).isEqualTo(at);
    }

    @Test
    void theMagicVersionEndAndCrcAreCheckedFirst() {
        assertThat(decodeFails(sealedWith("felix-stream-marker", "felix-stream-markr"), "magic").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_MAGIC);
        assertThat(decodeFails(sealedWith("felix-stream-marker 1", "felix-stream-marker 2"), "version").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        assertThat(decodeFails(sealed(GOLDEN_BODY.replace("\n", "\r\n")), "crlf").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_VERSION);
        assertThat(decodeFails(SideFileBytes.cut(GOLDEN, GOLDEN.length - 1), "no final line feed").kind())
                .isEqualTo(CorruptionKind.TRUNCATED);
        assertThat(decodeFails(GOLDEN_BODY.getBytes(StandardCharsets.UTF_8), "no crc line").kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        byte[] uppercaseCrc = new String(GOLDEN, StandardCharsets.US_ASCII).replaceAll("crc32=(\\w+)", "crc32=ABCDEF01")
                .getBytes(StandardCharsets.US_ASCII);
        assertThat(decodeFails(uppercaseCrc, "uppercase crc").kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);

        // The body changed, the original crc32 line kept.
        byte[] tamperedBody = GOLDEN_BODY.replace("orders", "orderz").getBytes(StandardCharsets.UTF_8);
        byte[] tampered = concat(tamperedBody, Arrays.copyOfRange(GOLDEN, GOLDEN_BODY.length(), GOLDEN.length));
        CorruptionException checksum = decodeFails(tampered, "tampered");
        assertThat(checksum.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CHECKSUM);
        assertThat(checksum.site().position()).isEqualTo(GOLDEN_BODY.length());
        assertThat(checksum.computedChecksum()).isEqualTo(Integer.toUnsignedLong(crc32(tamperedBody, 0, tamperedBody.length)));
    }

    @Test
    void everyBitFlipIsTheTypedError() {
        for (int bit = 0; bit < GOLDEN.length * 8; bit++) {
            String at = "byte " + bit / 8 + ", bit " + bit % 8;
            decodeFails(SideFileBytes.flipBit(GOLDEN, bit), at);
        }
    }

    @Test
    void everyCutIsTheTypedError() {
        for (int length = 0; length < GOLDEN.length; length++) {
            CorruptionException e = decodeFails(SideFileBytes.cut(GOLDEN, length), "cut " + length);
            boolean atLineEnd = length > 0 && GOLDEN[length - 1] == '\n';
            // Cut mid-line is a torn last line; cut at a line's end leaves a file whose last line is not its crc.
            assertThat(e.kind()).as("cut at %d", length)
                    .isEqualTo(atLineEnd ? CorruptionKind.SIDE_FILE_CONTENT : CorruptionKind.TRUNCATED);
        }
    }

    // --- file names

    /** FNV-1a 64 of the three names as u64 length + UTF-8 each, written out again here. */
    private static String expectedHash(String... parts) {
        long h = 0xcbf29ce484222325L;
        for (String part : parts) {
            byte[] utf8 = part.getBytes(StandardCharsets.UTF_8);
            byte[] all = concat(ByteBuffer.allocate(8).putLong(utf8.length).array(), utf8);
            for (byte b : all) {
                h ^= b & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return String.format("%016x", h);
    }

    @Test
    void fileNamesAreReadablePartsAndTheHashOfTheExactNames() {
        assertThat(StreamMarker.fileName("acme", "default", "orders"))
                .isEqualTo("acme_default_orders-" + expectedHash("acme", "default", "orders"));
        assertThat(StreamMarker.fileName("a.b", "..", "x/y\u00e9"))
                .isEqualTo("a_b" + "_" + "__" + "_" + "x_y_" + "-" + expectedHash("a.b", "..", "x/y\u00e9"))
                .doesNotContain(".");
        String longName = StreamMarker.fileName("t".repeat(60), "n".repeat(60), "s".repeat(120));
        assertThat(longName).startsWith("t".repeat(48) + "_" + "n".repeat(48) + "_" + "s".repeat(96) + "-");
        // Lossy readable parts, distinct names: the hash keeps them apart.
        assertThat(StreamMarker.fileName("a", "b", "c.d")).isNotEqualTo(StreamMarker.fileName("a", "b", "c_d"));
        assertThat(GOLDEN_MARKER.fileName()).isEqualTo(StreamMarker.fileName("acme", "default", "orders"));
    }

    // --- load rule and writes

    @Test
    void absentIsEmptyAndSavedLoadsFullySynced() throws Exception {
        assertThat(StreamMarkerFile.load(root, "acme", "default", "orders")).isEmpty();
        assertThat(StreamMarkerFile.loadAll(root)).isEmpty();
        List<DurableFiles.Step> steps = new ArrayList<>();
        StreamMarkerFile.save(root, GOLDEN_MARKER, steps::add);
        assertThat(steps).containsExactly(DurableFiles.Step.TEMP_WRITTEN, DurableFiles.Step.TEMP_SYNCED,
                DurableFiles.Step.MOVED, DurableFiles.Step.DIRECTORY_SYNCED);
        Path file = root.resolve(".streams").resolve(GOLDEN_MARKER.fileName());
        assertThat(Files.readAllBytes(file)).containsExactly(GOLDEN);
        assertThat(StreamMarkerFile.load(root, "acme", "default", "orders")).contains(GOLDEN_MARKER);
    }

    @Test
    void loadAllReadsEveryMarkerInNameOrderAndSkipsTemporariesAndStrayFiles() throws Exception {
        StreamMarker other = new StreamMarker("acme", "default", "billing", OptionalLong.empty(), false, OptionalLong.of(3));
        StreamMarkerFile.save(root, GOLDEN_MARKER);
        StreamMarkerFile.save(root, other);
        Path streams = root.resolve(".streams");
        Files.write(streams.resolve(GOLDEN_MARKER.fileName() + ".tmp"), new byte[] {1});
        Files.write(streams.resolve(SegmentFile.logName(0)), new byte[32]);
        Files.write(streams.resolve("README"), new byte[] {2});
        Files.write(streams.resolve("acme_default_orders-0D3AED4B998D2798"), new byte[] {3});
        Files.createDirectories(streams.resolve("acme_default_x-0000000000000001"));
        assertThat(StreamMarkerFile.loadAll(root)).containsExactly(other, GOLDEN_MARKER);
    }

    @Test
    void markerNamesHaveTheirShape() {
        assertThat(StreamMarker.isMarkerName(GOLDEN_MARKER.fileName())).isTrue();
        assertThat(StreamMarker.isMarkerName("-0123456789abcdef")).isTrue();
        assertThat(StreamMarker.isMarkerName(GOLDEN_MARKER.fileName() + ".tmp")).isFalse();
        assertThat(StreamMarker.isMarkerName("a-0123456789abcde")).isFalse();
        assertThat(StreamMarker.isMarkerName("a.b-0123456789abcdef")).isFalse();
        assertThat(StreamMarker.isMarkerName("a-0123456789ABCDEF")).isFalse();
    }

    @Test
    void aDamagedMarkerFailsTheLoadAndIsLeftAlone() throws Exception {
        StreamMarkerFile.save(root, GOLDEN_MARKER);
        Path file = StreamMarkerFile.fileIn(root, "acme", "default", "orders");
        byte[] damaged = SideFileBytes.flipBit(GOLDEN, 100);
        Files.write(file, damaged);
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> StreamMarkerFile.load(root, "acme", "default", "orders"));
        assertThat(e).isNotNull();
        assertThat(e.site().file()).isEqualTo(".streams/" + GOLDEN_MARKER.fileName());
        assertThat(catchThrowableOfType(CorruptionException.class, () -> StreamMarkerFile.loadAll(root))).isNotNull();
        assertThat(Files.readAllBytes(file)).containsExactly(damaged);
    }

    @Test
    void loadEachSetsADamagedOrUnknownVersionMarkerAsideByNameAndKeepsTheOthers() throws Exception {
        StreamMarker billing = new StreamMarker("acme", "default", "billing", OptionalLong.empty(), false,
                OptionalLong.of(3));
        StreamMarker audit = new StreamMarker("acme", "default", "audit", OptionalLong.of(1), false, OptionalLong.empty());
        StreamMarkerFile.save(root, GOLDEN_MARKER);
        StreamMarkerFile.save(root, billing);
        StreamMarkerFile.save(root, audit);
        Path orders = StreamMarkerFile.fileIn(root, "acme", "default", "orders");
        Files.write(orders, SideFileBytes.flipBit(GOLDEN, 8 * 30));
        Path auditFile = StreamMarkerFile.fileIn(root, "acme", "default", "audit");
        Files.writeString(auditFile, Files.readString(auditFile).replace("felix-stream-marker 1", "felix-stream-marker 2"));

        StreamMarkerFile.Loaded loaded = StreamMarkerFile.loadEach(root);
        assertThat(loaded.markers()).containsExactly(billing);
        assertThat(loaded.unreadable()).containsOnlyKeys(GOLDEN_MARKER.fileName(), audit.fileName());
        assertThat(loaded.unreadable().get(GOLDEN_MARKER.fileName())).startsWith("SideFileChecksum");
        assertThat(loaded.unreadable().get(audit.fileName())).startsWith("SideFileVersion");
    }

    @Test
    void loadEachNamesAMarkerUnderAnotherStreamsName() throws Exception {
        Files.createDirectories(root.resolve(".streams"));
        Path wrong = StreamMarkerFile.fileIn(root, "acme", "default", "billing");
        Files.write(wrong, GOLDEN);
        StreamMarkerFile.Loaded loaded = StreamMarkerFile.loadEach(root);
        assertThat(loaded.markers()).isEmpty();
        assertThat(loaded.unreadable().get(wrong.getFileName().toString())).contains("acme/default/orders");
    }

    @Test
    void aMarkerUnderAnotherStreamsNameFailsTheLoad() throws Exception {
        Files.createDirectories(root.resolve(".streams"));
        Path wrong = StreamMarkerFile.fileIn(root, "acme", "default", "billing");
        Files.write(wrong, GOLDEN);
        CorruptionException e = catchThrowableOfType(CorruptionException.class,
                () -> StreamMarkerFile.load(root, "acme", "default", "billing"));
        assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
        assertThat(catchThrowableOfType(CorruptionException.class, () -> StreamMarkerFile.loadAll(root)).kind())
                .isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
    }

    @Test
    void markersAndDeletedDirectoriesAreNeverShards() throws Exception {
        StreamMarkerFile.save(root, GOLDEN_MARKER);
        Files.write(root.resolve(".streams").resolve(SegmentFile.logName(0)), new byte[32]);
        Path deletedShard = Files.createDirectories(root.resolve(".deleted").resolve("acme_default_orders_0-01"));
        Files.write(deletedShard.resolve(SegmentFile.logName(0)), new byte[32]);
        Path live = Files.createDirectories(root.resolve("acme_default_orders_0-02"));
        Files.write(live.resolve(SegmentFile.logName(0)), new byte[32]);
        assertThat(new DataRoot(root).streamShards().stream().map(DataRoot.Shard::directory).toList()).containsExactly(live);
    }
}
