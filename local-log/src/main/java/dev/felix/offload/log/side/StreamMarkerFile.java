package dev.felix.offload.log.side;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.CorruptionSite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A stream's marker under the data root's {@code .streams/} directory (the cache store's root keeps
 * its own): a {@link StreamMarker} as UTF-8 text, one {@code key=value} per line, each line ending in
 * a line feed (no carriage returns), the lines exactly these and in this order:
 *
 * <pre>
 * felix-stream-marker 1
 * tenant=acme
 * namespace=default
 * stream=orders
 * incarnation=0006411a0ccf2e40
 * delete_unfinished=false
 * deleted_through=none
 * crc32=1a2b3c4d
 * </pre>
 *
 * <ul>
 *   <li>The first line is the magic {@code felix-stream-marker}, a space, and the version, 1.</li>
 *   <li>{@code tenant}, {@code namespace}, {@code stream}: the names exactly, everything after the
 *       first {@code =} up to the line feed (they may hold {@code =}, never a line break).</li>
 *   <li>{@code incarnation}: the incarnation held, 16 lowercase hex digits, or {@code none}.</li>
 *   <li>{@code delete_unfinished}: {@code true} or {@code false}.</li>
 *   <li>{@code deleted_through}: 16 lowercase hex digits, or {@code none}.</li>
 *   <li>{@code crc32}: 8 lowercase hex digits, the CRC-32 (IEEE) of every byte before this line.</li>
 * </ul>
 *
 * <p>Parsing is strict; checks run in this order: the magic ({@code SideFileMagic}; {@code Truncated}
 * when the file is a cut-short piece of it), the version ({@code SideFileVersion}), a line feed ending
 * the file ({@code Truncated}), the last line being the crc32 line ({@code SideFileContent}), the CRC
 * ({@code SideFileChecksum}), then every other line ({@code SideFileContent}: an unknown, missing,
 * repeated or misplaced key, a value that is not of its form, a name that is not valid UTF-8).
 *
 * <p><b>Load rule: authoritative.</b> A marker decides which incarnation's directories are opened,
 * so a present marker that does not decode, or that names another stream than its file name says,
 * fails {@link #load}; absent is {@link Optional#empty()}. <b>Writes</b>: temporary, fsync, atomic
 * rename, directory fsync. A temporary ({@code <name>.tmp}) is never read, nor is any file whose name
 * is not shaped like a marker's.
 */
public final class StreamMarkerFile {

    /** The directory of markers under a root. */
    public static final String DIRECTORY = DataRoot.STREAMS_DIR;
    /** The first line's first word. */
    public static final String MAGIC = "felix-stream-marker";
    /** The version this build writes, and the only one it reads. */
    public static final int VERSION = 1;
    /** The longest marker read; names are short, this is far above any real marker. */
    public static final int MAX_LENGTH = SideFiles.SMALL_FILE_LIMIT;

    public static final String TENANT = "tenant";
    public static final String NAMESPACE = "namespace";
    public static final String STREAM = "stream";
    public static final String INCARNATION = "incarnation";
    public static final String DELETE_UNFINISHED = "delete_unfinished";
    public static final String DELETED_THROUGH = "deleted_through";
    public static final String CRC32 = "crc32";
    /** The value of an incarnation field that names none. */
    public static final String NONE = "none";

    private static final List<String> BODY_KEYS =
            List.of(TENANT, NAMESPACE, STREAM, INCARNATION, DELETE_UNFINISHED, DELETED_THROUGH);
    private static final byte[] MAGIC_PREFIX = (MAGIC + " ").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CRC_PREFIX = (CRC32 + "=").getBytes(StandardCharsets.US_ASCII);
    private static final int CRC_DIGITS = 8;
    private static final int INCARNATION_DIGITS = 16;
    private static final byte LF = '\n';

    private StreamMarkerFile() {
    }

    /** The marker's bytes, exactly as stored. */
    public static byte[] encode(StreamMarker marker) {
        StringBuilder text = new StringBuilder()
                .append(MAGIC).append(' ').append(VERSION).append('\n')
                .append(TENANT).append('=').append(marker.tenant()).append('\n')
                .append(NAMESPACE).append('=').append(marker.namespace()).append('\n')
                .append(STREAM).append('=').append(marker.stream()).append('\n')
                .append(INCARNATION).append('=').append(incarnation(marker.heldIncarnation())).append('\n')
                .append(DELETE_UNFINISHED).append('=').append(marker.deleteUnfinished()).append('\n')
                .append(DELETED_THROUGH).append('=').append(incarnation(marker.deletedThrough())).append('\n');
        // StreamMarker refuses names without an exact encoding, so this is exact.
        byte[] body = text.toString().getBytes(StandardCharsets.UTF_8);
        int crc = SideFiles.crc32(ByteBuffer.wrap(body), 0, body.length);
        byte[] crcLine = (CRC32 + "=" + String.format("%08x", crc) + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[body.length + crcLine.length];
        System.arraycopy(body, 0, out, 0, body.length);
        System.arraycopy(crcLine, 0, out, body.length, crcLine.length);
        return out;
    }

    private static String incarnation(OptionalLong value) {
        return value.isPresent() ? String.format("%016x", value.getAsLong()) : NONE;
    }

    /**
     * Decodes a whole marker: the bytes from {@code bytes}' position to its limit (not consumed).
     * {@code site} names the file; its position is ignored.
     */
    public static StreamMarker decode(ByteBuffer bytes, CorruptionSite site) throws CorruptionException {
        ByteBuffer buf = bytes.slice();
        int length = buf.remaining();
        int prefix = Math.min(length, MAGIC_PREFIX.length);
        if (!buf.slice(0, prefix).equals(ByteBuffer.wrap(MAGIC_PREFIX, 0, prefix))) {
            throw CorruptionException.of(CorruptionKind.SIDE_FILE_MAGIC, site.at(0),
                    "the file does not start with \"" + MAGIC + " \"");
        }
        int firstEnd = indexOf(buf, LF, 0, length);
        if (length < MAGIC_PREFIX.length || firstEnd < 0) {
            throw CorruptionException.truncated(site.at(0), "marker's first line", length + 1L, length);
        }
        String version = ascii(buf, MAGIC_PREFIX.length, firstEnd);
        if (!version.equals(Integer.toString(VERSION))) {
            throw CorruptionException.of(CorruptionKind.SIDE_FILE_VERSION, site.at(MAGIC_PREFIX.length),
                    "marker version \"" + shown(version) + "\" is not readable (only " + VERSION + " is)");
        }
        if (buf.get(length - 1) != LF) {
            throw CorruptionException.truncated(site.at(length), "the marker's last line (no line feed ends it)",
                    length + 1L, length);
        }
        int crcLineStart = lastIndexOf(buf, LF, length - 1) + 1;
        int crcLineEnd = length - 1;
        int stored = crcLine(buf, crcLineStart, crcLineEnd, site);
        int computed = SideFiles.crc32(buf, 0, crcLineStart);
        if (stored != computed) {
            throw CorruptionException.checksum(CorruptionKind.SIDE_FILE_CHECKSUM, site.at(crcLineStart),
                    "marker bytes 0.." + crcLineStart, stored, computed);
        }
        String[] values = new String[BODY_KEYS.size()];
        int[] valueAt = new int[BODY_KEYS.size()];
        int p = firstEnd + 1;
        for (int i = 0; i < BODY_KEYS.size(); i++) {
            String key = BODY_KEYS.get(i);
            if (p >= crcLineStart) {
                throw SideFiles.content(site, p, "no " + key + " line before the crc32 line");
            }
            int end = indexOf(buf, LF, p, crcLineStart);
            int eq = indexOf(buf, (byte) '=', p, end);
            if (eq < 0) {
                throw SideFiles.content(site, p, "a line without '=' where the " + key + " line belongs");
            }
            String found = SideFiles.utf8Strict(buf.slice(p, eq - p), site, p, "a key");
            if (!found.equals(key)) {
                throw SideFiles.content(site, p, "key \"" + shown(found) + "\" where " + key + " belongs");
            }
            valueAt[i] = eq + 1;
            values[i] = SideFiles.utf8Strict(buf.slice(eq + 1, end - eq - 1), site, eq + 1, "the " + key + " value");
            if (values[i].indexOf('\r') >= 0) {
                throw SideFiles.content(site, eq + 1, "the " + key + " value holds a carriage return");
            }
            p = end + 1;
        }
        if (p != crcLineStart) {
            throw SideFiles.content(site, p, "a line after " + DELETED_THROUGH + " that is not the crc32 line");
        }
        OptionalLong held = incarnationValue(values[3], INCARNATION, site, valueAt[3]);
        boolean unfinished = switch (values[4]) {
            case "true" -> true;
            case "false" -> false;
            default -> throw SideFiles.content(site, valueAt[4], DELETE_UNFINISHED + " is \"" + shown(values[4])
                    + "\", neither true nor false");
        };
        OptionalLong deletedThrough = incarnationValue(values[5], DELETED_THROUGH, site, valueAt[5]);
        return new StreamMarker(values[0], values[1], values[2], held, unfinished, deletedThrough);
    }

    private static int crcLine(ByteBuffer buf, int start, int end, CorruptionSite site) throws CorruptionException {
        boolean form = end - start == CRC_PREFIX.length + CRC_DIGITS
                && buf.slice(start, CRC_PREFIX.length).equals(ByteBuffer.wrap(CRC_PREFIX));
        String digits = form ? ascii(buf, start + CRC_PREFIX.length, end) : "";
        if (!form || !isLowerHex(digits)) {
            throw SideFiles.content(site, start, "the last line is not crc32=<8 lowercase hex digits>");
        }
        return (int) Long.parseLong(digits, 16);
    }

    private static OptionalLong incarnationValue(String value, String key, CorruptionSite site, long at)
            throws CorruptionException {
        if (value.equals(NONE)) {
            return OptionalLong.empty();
        }
        if (value.length() != INCARNATION_DIGITS || !isLowerHex(value)) {
            throw SideFiles.content(site, at, key + " is \"" + shown(value)
                    + "\", neither 16 lowercase hex digits nor " + NONE);
        }
        return OptionalLong.of(HexFormat.fromHexDigitsToLong(value));
    }

    private static boolean isLowerHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return !s.isEmpty();
    }

    private static int indexOf(ByteBuffer buf, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (buf.get(i) == b) {
                return i;
            }
        }
        return -1;
    }

    private static int lastIndexOf(ByteBuffer buf, byte b, int before) {
        for (int i = before - 1; i >= 0; i--) {
            if (buf.get(i) == b) {
                return i;
            }
        }
        return -1;
    }

    /** The bytes as text for a message, anything outside printable ASCII shown as '?'. */
    private static String ascii(ByteBuffer buf, int from, int to) {
        StringBuilder s = new StringBuilder(to - from);
        for (int i = from; i < to; i++) {
            int c = buf.get(i) & 0xff;
            s.append(c >= 0x20 && c < 0x7f ? (char) c : '?');
        }
        return s.toString();
    }

    /** A value cut short for a message. */
    private static String shown(String value) {
        return value.length() <= 40 ? value : value.substring(0, 40) + "...";
    }

    /** The directory of markers under {@code root}. */
    public static Path directoryIn(Path root) {
        return root.resolve(DIRECTORY);
    }

    /** The marker file of a stream under {@code root}. */
    public static Path fileIn(Path root, String tenant, String namespace, String stream) {
        return directoryIn(root).resolve(StreamMarker.fileName(tenant, namespace, stream));
    }

    /**
     * The marker of a stream under {@code root}, empty when there is none.
     *
     * @throws CorruptionException when the marker is present and does not decode, or names another
     *                             stream; it is left as it is
     * @throws IOException         when the root is missing or the file cannot be read
     */
    public static Optional<StreamMarker> load(Path root, String tenant, String namespace, String stream)
            throws IOException, CorruptionException {
        SideFiles.requireDirectory(root);
        String name = StreamMarker.fileName(tenant, namespace, stream);
        Optional<StreamMarker> marker = Optional.ofNullable(loadFile(directoryIn(root).resolve(name), root));
        if (marker.isPresent() && !marker.get().names(tenant, namespace, stream)) {
            throw SideFiles.content(site(root, name), firstValueAt(), "the marker names stream "
                    + marker.get().tenant() + "/" + marker.get().namespace() + "/" + marker.get().stream()
                    + ", not " + tenant + "/" + namespace + "/" + stream);
        }
        return marker;
    }

    /**
     * The files of {@code root}'s {@code .streams/} named like a marker, sorted by name; null when
     * there is no {@code .streams/}.
     */
    private static List<Path> markerFiles(Path root) throws IOException {
        SideFiles.requireDirectory(root);
        Path dir = directoryIn(root);
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (StreamMarker.isMarkerName(entry.getFileName().toString()) && Files.isRegularFile(entry)) {
                    files.add(entry);
                }
            }
        } catch (NoSuchFileException absent) {
            return null;
        }
        files.sort(null);
        return files;
    }

    /**
     * Every marker under {@code root}, sorted by file name; empty when there is no {@code .streams/}.
     * Only files named like a marker ({@link StreamMarker#isMarkerName}) are read: temporaries
     * ({@code *.tmp}) and stray files are skipped. A marker whose file name is not the one its names
     * give is {@code SideFileContent}.
     */
    public static List<StreamMarker> loadAll(Path root) throws IOException, CorruptionException {
        List<Path> files = markerFiles(root);
        if (files == null) {
            return List.of();
        }
        List<StreamMarker> markers = new ArrayList<>(files.size());
        for (Path file : files) {
            StreamMarker marker = loadFile(file, root);
            String name = file.getFileName().toString();
            if (marker == null) {
                continue; // removed while listed
            }
            if (!marker.fileName().equals(name)) {
                throw SideFiles.content(site(root, name), firstValueAt(), "the marker names stream "
                        + marker.tenant() + "/" + marker.namespace() + "/" + marker.stream()
                        + ", whose marker is " + marker.fileName() + ", not " + name);
            }
            markers.add(marker);
        }
        return markers;
    }

    /**
     * The markers under {@code root} that could be read, and each one that could not, by file name.
     *
     * @param markers    the markers read, sorted by file name
     * @param unreadable for each marker file that does not decode (damaged, a version this build does
     *                   not read, names another stream than its file name) or cannot be read, why
     */
    public record Loaded(List<StreamMarker> markers, java.util.Map<String, String> unreadable) {
        public Loaded {
            markers = List.copyOf(markers);
            unreadable = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(unreadable));
        }
    }

    /**
     * Every marker under {@code root}, as {@link #loadAll} reads them, except that a marker that does
     * not decode or cannot be read is set aside and named, not taken for the whole directory: what
     * one damaged marker says is unknown, what the others say still stands. A reader that needs one
     * stream's marker and finds it among {@link Loaded#unreadable()} must treat that stream as
     * unknown, never as marker-less.
     *
     * @throws IOException when the root is missing or {@code .streams/} cannot be listed
     */
    public static Loaded loadEach(Path root) throws IOException {
        List<Path> files = markerFiles(root);
        if (files == null) {
            return new Loaded(List.of(), java.util.Map.of());
        }
        List<StreamMarker> markers = new ArrayList<>(files.size());
        java.util.Map<String, String> unreadable = new java.util.TreeMap<>();
        for (Path file : files) {
            String name = file.getFileName().toString();
            try {
                StreamMarker marker = loadFile(file, root);
                if (marker == null) {
                    continue; // removed while listed
                }
                if (!marker.fileName().equals(name)) {
                    unreadable.put(name, "the marker names stream " + marker.tenant() + "/" + marker.namespace() + "/"
                            + marker.stream() + ", whose marker is " + marker.fileName() + ", not " + name);
                    continue;
                }
                markers.add(marker);
            } catch (CorruptionException e) {
                unreadable.put(name, e.getMessage());
            } catch (IOException e) {
                unreadable.put(name, "cannot be read: " + dev.felix.offload.log.IoProblem.describe(e));
            }
        }
        return new Loaded(markers, unreadable);
    }

    private static StreamMarker loadFile(Path file, Path root) throws IOException, CorruptionException {
        return SideFiles.loadAuthoritative(file, MAX_LENGTH, site(root, file.getFileName().toString()),
                StreamMarkerFile::decode);
    }

    /** Where the tenant's value starts, for errors about the names as a whole. */
    private static long firstValueAt() {
        return MAGIC_PREFIX.length + Integer.toString(VERSION).length() + 1 + TENANT.length() + 1;
    }

    /** A marker's site: the root's name as the "shard", the marker's path under the root as the file. */
    private static CorruptionSite site(Path root, String fileName) {
        return CorruptionSite.inFile(SideFiles.directoryName(root), DIRECTORY + "/" + fileName, 0);
    }

    /**
     * Makes {@code marker} its stream's marker under {@code root}, durably, before returning. Creates
     * {@code .streams/} (durably) when it is missing.
     */
    public static void save(Path root, StreamMarker marker) throws IOException {
        save(root, marker, step -> { });
    }

    /** As {@link #save(Path, StreamMarker)}, reporting each step of the replace; for crash tests. */
    public static void save(Path root, StreamMarker marker, DurableFiles.StepListener steps) throws IOException {
        SideFiles.requireDirectory(root);
        Path dir = directoryIn(root);
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            DurableFiles.fsyncDirectory(root);
        }
        DurableFiles.replace(dir.resolve(marker.fileName()), encode(marker), DurableFiles.Sync.FULL, steps);
    }
}
