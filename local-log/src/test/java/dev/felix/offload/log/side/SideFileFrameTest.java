package dev.felix.offload.log.side;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class SideFileFrameTest {
    private static final CorruptionSite SITE = CorruptionSite.inFile("shard-a", "thing", 0);
    /** "TEST". */
    private static final int MAGIC = 0x54455354;
    private static final SideFileFrame FIXED = SideFileFrame.fixed("thing", MAGIC, 3, 16);
    private static final SideFileFrame VARIABLE = SideFileFrame.variable("thing", MAGIC, 3, 12);

    private static byte[] fixedFile() {
        ByteBuffer buf = FIXED.start(16);
        buf.putInt(SideFileFrame.BODY_OFFSET, 0xCAFEBABE);
        return FIXED.seal(buf);
    }

    @Test
    void writesTheFrameAroundTheBody() {
        // magic, version 3, reserved 0, body, then the CRC-32 of bytes 0..12 (computed by java.util.zip.CRC32)
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(HexFormat.of().parseHex("54455354" + "0003" + "0000" + "cafebabe"));
        assertThat(HexFormat.of().formatHex(fixedFile()))
                .isEqualTo("54455354" + "0003" + "0000" + "cafebabe" + String.format("%08x", crc.getValue()));
    }

    @Test
    void aWholeFileOpensAtItsMagic() throws CorruptionException {
        byte[] file = fixedFile();
        ByteBuffer padded = ByteBuffer.allocate(file.length + 3).position(3);
        padded.put(file).position(3);
        ByteBuffer opened = FIXED.open(padded, SITE);
        assertThat(opened.getInt(SideFileFrame.BODY_OFFSET)).isEqualTo(0xCAFEBABE);
        assertThat(FIXED.crcOffset(opened)).isEqualTo(12);
        assertThat(padded.position()).as("not consumed").isEqualTo(3);
    }

    @Test
    void checksRunInTheDocumentedOrder() {
        byte[] file = fixedFile();
        // shorter than the file: Truncated, before anything else is looked at
        byte[] shortMagicWrong = Arrays.copyOf(file, 15);
        shortMagicWrong[0] ^= 1;
        assertKind(FIXED, shortMagicWrong, CorruptionKind.TRUNCATED, 0);
        // a wrong magic and a wrong version: the magic is named
        byte[] both = file.clone();
        both[0] ^= 1;
        both[5] ^= 1;
        assertKind(FIXED, both, CorruptionKind.SIDE_FILE_MAGIC, 0);
        // a wrong version with a wrong CRC: the version is named (another version need not end in a CRC)
        byte[] version = file.clone();
        version[5] = 9;
        assertKind(FIXED, version, CorruptionKind.SIDE_FILE_VERSION, SideFileFrame.VERSION_OFFSET);
        // a flipped body byte: the CRC, at the CRC's position, with both values
        byte[] body = file.clone();
        body[9] ^= 0x40;
        CorruptionException e = assertKind(FIXED, body, CorruptionKind.SIDE_FILE_CHECKSUM, 12);
        assertThat(e.storedChecksum()).isNotEqualTo(e.computedChecksum());
        // reserved bytes set and a consistent CRC: content, at the reserved bytes
        ByteBuffer reserved = FIXED.start(16);
        reserved.putShort(SideFileFrame.RESERVED_OFFSET, (short) 1);
        assertKind(FIXED, FIXED.seal(reserved), CorruptionKind.SIDE_FILE_CONTENT, SideFileFrame.RESERVED_OFFSET);
    }

    @Test
    void ownBytesSixToEightAreLeftToTheCodec() throws CorruptionException {
        SideFileFrame own = SideFileFrame.fixedWithOwnBytes6To8("thing", MAGIC, 3, 16);
        ByteBuffer buf = own.start(16);
        buf.put(SideFileFrame.RESERVED_OFFSET, (byte) 7);
        assertThat(own.open(ByteBuffer.wrap(own.seal(buf)), SITE).get(SideFileFrame.RESERVED_OFFSET)).isEqualTo((byte) 7);
    }

    @Test
    void bytesAfterAFixedFilesCrcAreContentErrors() throws CorruptionException {
        byte[] longer = Arrays.copyOf(fixedFile(), 18);
        ByteBuffer opened = FIXED.open(ByteBuffer.wrap(longer), SITE);
        assertThatThrownBy(() -> FIXED.requireNothingAfter(opened, SITE))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.SIDE_FILE_CONTENT);
                    assertThat(e.site().position()).isEqualTo(16);
                });
    }

    @Test
    void aVariableFileKeepsItsCrcInItsLastFourBytes() throws CorruptionException {
        ByteBuffer buf = VARIABLE.start(20);
        buf.putLong(SideFileFrame.BODY_OFFSET, 42);
        byte[] file = VARIABLE.seal(buf);
        ByteBuffer opened = VARIABLE.open(ByteBuffer.wrap(file), SITE);
        assertThat(VARIABLE.crcOffset(opened)).isEqualTo(16);
        byte[] cut = Arrays.copyOf(file, 19);
        assertKind(VARIABLE, cut, CorruptionKind.SIDE_FILE_CHECKSUM, 15);
        assertKind(VARIABLE, Arrays.copyOf(file, 11), CorruptionKind.TRUNCATED, 0);
    }

    @Test
    void aFixedFileIsWrittenAtItsOneLength() {
        assertThatThrownBy(() -> FIXED.start(20)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> VARIABLE.start(11)).isInstanceOf(IllegalArgumentException.class);
    }

    private static CorruptionException assertKind(SideFileFrame frame, byte[] file, CorruptionKind kind, long position) {
        try {
            frame.open(ByteBuffer.wrap(file), SITE);
        } catch (CorruptionException e) {
            assertThat(e.kind()).as(e.getMessage()).isEqualTo(kind);
            assertThat(e.site().position()).as(e.getMessage()).isEqualTo(position);
            assertThat(e.site().shard()).isEqualTo("shard-a");
            return e;
        }
        throw new AssertionError("expected " + kind + " for " + HexFormat.of().formatHex(file));
    }
}
