package dev.felix.offload.log.side;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/** What every side-file class shares: reading a whole file, CRCs, strict UTF-8, typed errors. */
final class SideFiles {

    /** The largest file any kind loads in one piece: the limit of one Java array. */
    static final int MAX_LOADABLE = Integer.MAX_VALUE - 8;

    /**
     * How much of a small fixed-layout file (replica, ballot, the identity files, a marker) is read at
     * most. Far above any valid file, so the decoder, not the reader, reports what is wrong with a file
     * that is merely too long; far below anything that could hurt.
     */
    static final int SMALL_FILE_LIMIT = 64 * 1024;

    private SideFiles() {
    }

    /**
     * The bytes of {@code file}, or null when it does not exist. Its size comes from the file system;
     * a file longer than {@code maxLength} (the longest file of its kind) is refused with
     * {@code SideFileContent} before anything is read, so a stray huge file cannot exhaust memory.
     *
     * @param site names the file; the error is reported at byte {@code maxLength}, the first byte too many
     */
    static byte[] readIfPresent(Path file, int maxLength, CorruptionSite site) throws IOException, CorruptionException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > maxLength) {
                throw content(site, maxLength, "the file is " + size + " bytes; a file of this kind is at most "
                        + maxLength);
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining()) {
                if (ch.read(buf) < 0) {
                    break; // shrank while read: decode reports what is missing
                }
            }
            return buf.position() == buf.capacity() ? buf.array() : java.util.Arrays.copyOf(buf.array(), buf.position());
        } catch (NoSuchFileException absent) {
            return null;
        }
    }

    /** Decodes a whole file's bytes. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException;
    }

    /**
     * The load rule of every derived file: absent is {@link DerivedLoad#absent()}, a file that does not
     * decode (or is longer than its kind allows) is {@link DerivedLoad#ignored} with the reason. I/O
     * errors other than absence propagate.
     */
    static <T> DerivedLoad<T> loadDerived(Path file, int maxLength, CorruptionSite site, Decoder<T> decoder)
            throws IOException {
        try {
            byte[] bytes = readIfPresent(file, maxLength, site);
            if (bytes == null) {
                return DerivedLoad.absent();
            }
            return DerivedLoad.loaded(decoder.decode(ByteBuffer.wrap(bytes), site));
        } catch (CorruptionException e) {
            return DerivedLoad.ignored(e);
        }
    }

    /**
     * The load rule of every authoritative file: null when absent, the decoded value when it decodes,
     * and otherwise the {@link CorruptionException}; the file is never touched.
     */
    static <T> T loadAuthoritative(Path file, int maxLength, CorruptionSite site, Decoder<T> decoder)
            throws IOException, CorruptionException {
        byte[] bytes = readIfPresent(file, maxLength, site);
        return bytes == null ? null : decoder.decode(ByteBuffer.wrap(bytes), site);
    }

    /** Fails unless {@code dir} is an existing directory: a missing directory is a wrong path, not an absent file. */
    static void requireDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            if (Files.exists(dir)) {
                throw new NotDirectoryException(dir.toString());
            }
            throw new NoSuchFileException(dir.toString(), null, "no such directory");
        }
    }

    /** The name corruption sites give a directory: its last path element. */
    static String directoryName(Path dir) {
        Path name = dir.toAbsolutePath().normalize().getFileName();
        return name == null ? dir.toString() : name.toString();
    }

    /**
     * Removes {@code file} if it exists and makes the removal durable (the directory is fsynced), so
     * a crash afterwards cannot bring it back. Returns whether there was a file.
     */
    static boolean removeDurably(Path file) throws IOException {
        boolean existed = Files.deleteIfExists(file);
        DurableFiles.fsyncDirectory(file.toAbsolutePath().getParent());
        return existed;
    }

    static int crc32(ByteBuffer buf, int from, int length) {
        CRC32 crc = new CRC32();
        crc.update(buf.duplicate().position(from).limit(from + length));
        return (int) crc.getValue();
    }

    static int crc32c(ByteBuffer buf, int from, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buf.duplicate().position(from).limit(from + length));
        return (int) crc.getValue();
    }

    static CorruptionException content(CorruptionSite site, long position, String detail) {
        return CorruptionException.of(CorruptionKind.SIDE_FILE_CONTENT, site.at(position), detail);
    }

    static CorruptionException magic(CorruptionSite site, int found, int expected, String name) {
        return CorruptionException.of(CorruptionKind.SIDE_FILE_MAGIC, site.at(0),
                String.format("magic 0x%08x, expected 0x%08x (%s)", found, expected, name));
    }

    static CorruptionException version(CorruptionSite site, long position, String what, int found, int readable) {
        return CorruptionException.of(CorruptionKind.SIDE_FILE_VERSION, site.at(position),
                what + " version " + found + " is not readable (only " + readable + " is)");
    }

    /** Checks that a long holds an unsigned 32-bit value; for value constructors. */
    static long requireU32(long value, String what) {
        if (value < 0 || value > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException(what + " must be an unsigned 32-bit value, got " + value);
        }
        return value;
    }

    /** The UTF-8 bytes of {@code text}, refusing text that has no exact encoding (a lone surrogate). */
    static byte[] utf8Exact(String text, String what) {
        CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            ByteBuffer bytes = encoder.encode(CharBuffer.wrap(text));
            byte[] out = new byte[bytes.remaining()];
            bytes.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(what + " has no exact UTF-8 encoding (a lone surrogate)", e);
        }
    }

    /**
     * Decodes {@code bytes} (position to limit) as strict UTF-8: a malformed or truncated sequence is
     * {@code SideFileContent} at its first byte, never a replacement character.
     *
     * @param at the file position of {@code bytes}' first byte, for the error
     */
    static String utf8Strict(ByteBuffer bytes, CorruptionSite site, long at, String what) throws CorruptionException {
        ByteBuffer in = bytes.slice();
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        // UTF-8 never yields more chars than it has bytes, and the caller bounded the bytes.
        CharBuffer chars = CharBuffer.allocate(in.remaining());
        CoderResult result = utf8.decode(in, chars, true);
        if (!result.isError()) {
            result = utf8.flush(chars);
        }
        if (result.isError()) {
            // The decoder stops with the input at the malformed sequence's first byte.
            throw content(site, at + in.position(), what + " is not valid UTF-8: a malformed sequence of "
                    + result.length() + " byte(s) at its byte " + in.position());
        }
        return chars.flip().toString();
    }
}
