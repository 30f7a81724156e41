package dev.felix.offload.store.remote;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The text form of kept {@link ServerFindings}: the data root's {@code offload-store-findings} file
 * and the copy a writer leaves in the store ({@value #STORE_KEY} under the store's prefix) are both
 * this.
 *
 * <pre>
 * felix-offload store findings 1          first line, exactly ({@link #HEADER})
 * # comment lines and blank lines are skipped
 * [store]                                  one section per endpoint and bucket, in any order
 * endpoint=http://127.0.0.1:9000           ServerFindings.Key: the endpoint, or aws:REGION
 * bucket=felix-segments
 * checksum=auto                            auto, when-required or always
 * sse=none                                 none, s3 or kms
 * server=Jetty(11.0.25)                    the Server header the probe was answered with; empty for none
 * learnt-at=2026-12-04T00:50:08Z           ISO-8601 instant, whole seconds
 * crc32-accepted=true                      the six ServerTraits, true or false
 * crc32-verified=false
 * crc32-stored=false
 * create-only-honoured=false
 * content-md5-verified=true
 * md5-etags=true
 * upload-rate=310378496                    optional: bytes per second one body uploaded at
 * </pre>
 *
 * Every line is {@code name=value} in printable ASCII; a section must name each key but
 * {@code upload-rate} exactly once, and no other. The file is small and checked before anything is
 * believed: at most {@value #MAX_BYTES} bytes and {@value #MAX_SECTIONS} sections, values of at most
 * {@value #MAX_VALUE_CHARS} characters. A file that breaks any rule is refused whole
 * ({@link UnreadableException}, naming the line): findings are a cache, and the next probe writes
 * a good file over it.
 */
public final class ServerFindingsFile {
    public static final String HEADER = "felix-offload store findings 1";
    /** The store's copy, under the store's prefix (a reserved name, never listed or swept). */
    public static final String STORE_KEY = dev.felix.offload.store.KeyRules.RESERVED_PREFIX + "store/findings";
    static final int MAX_BYTES = 64 * 1024;
    static final int MAX_SECTIONS = 64;
    static final int MAX_VALUE_CHARS = 512;
    private static final String SECTION = "[store]";
    private static final String UPLOAD_RATE = "upload-rate";
    private static final List<String> TRAIT_NAMES = List.of("crc32-accepted", "crc32-verified", "crc32-stored",
            "create-only-honoured", "content-md5-verified", "md5-etags");
    private static final List<String> REQUIRED = List.of("endpoint", "bucket", "checksum", "sse", "server", "learnt-at",
            "crc32-accepted", "crc32-verified", "crc32-stored", "create-only-honoured", "content-md5-verified",
            "md5-etags");

    /** The bytes do not follow the layout; nothing in them is believed. */
    public static final class UnreadableException extends Exception {
        private static final long serialVersionUID = 1L;

        UnreadableException(int line, String why) {
            super(line > 0 ? "line " + line + ": " + why : why);
        }
    }

    private ServerFindingsFile() {
    }

    public static byte[] encode(List<ServerFindings> all) {
        if (all.size() > MAX_SECTIONS) {
            throw new IllegalArgumentException("at most " + MAX_SECTIONS + " findings are kept, not " + all.size());
        }
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        out.append("# What the capability probe found each store's server to do, kept so that later commands need not\n");
        out.append("# probe it again (docs/configuration.md, probe-max-age). Safe to delete: the next writer probes again.\n");
        for (ServerFindings f : all) {
            ServerFindings.Key k = f.key();
            ServerTraits t = f.traits();
            out.append('\n').append(SECTION).append('\n');
            line(out, "endpoint", k.endpoint());
            line(out, "bucket", k.bucket());
            line(out, "checksum", k.checksumMode().settingValue());
            line(out, "sse", k.encryption().name().toLowerCase(Locale.ROOT));
            line(out, "server", f.serverIdentity());
            line(out, "learnt-at", f.learntAt().truncatedTo(ChronoUnit.SECONDS).toString());
            boolean[] values = {t.crc32Accepted(), t.crc32Verified(), t.crc32Stored(), t.createOnlyHonoured(),
                t.contentMd5Verified(), t.md5Etags()};
            for (int i = 0; i < values.length; i++) {
                line(out, TRAIT_NAMES.get(i), Boolean.toString(values[i]));
            }
            if (f.uploadRate().isPresent()) {
                line(out, UPLOAD_RATE, Long.toString(f.uploadRate().getAsLong()));
            }
        }
        byte[] bytes = out.toString().getBytes(StandardCharsets.US_ASCII);
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException("findings of " + bytes.length + " bytes, more than " + MAX_BYTES);
        }
        return bytes;
    }

    private static void line(StringBuilder out, String name, String value) {
        out.append(name).append('=').append(printable(value)).append('\n');
    }

    /** A value as the file can hold it: printable ASCII, others as {@code ?}, at most {@value #MAX_VALUE_CHARS}. */
    static String printable(String value) {
        StringBuilder b = new StringBuilder(Math.min(value.length(), MAX_VALUE_CHARS));
        for (int i = 0; i < value.length() && b.length() < MAX_VALUE_CHARS; i++) {
            char c = value.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return b.toString().strip();
    }

    public static List<ServerFindings> decode(byte[] bytes) throws UnreadableException {
        if (bytes.length > MAX_BYTES) {
            throw new UnreadableException(0, bytes.length + " bytes, more than the " + MAX_BYTES + " a findings file may hold");
        }
        for (byte b : bytes) {
            if ((b < 0x20 && b != '\n') || b >= 0x7f) {
                throw new UnreadableException(0, String.format("byte 0x%02x is not printable ASCII", b & 0xff));
            }
        }
        String[] lines = new String(bytes, StandardCharsets.US_ASCII).split("\n", -1);
        if (!lines[0].equals(HEADER)) {
            throw new UnreadableException(1, "expected '" + HEADER + "'");
        }
        List<ServerFindings> out = new ArrayList<>();
        Map<String, String> section = null;
        int sectionLine = 0;
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            if (line.equals(SECTION)) {
                if (section != null) {
                    out.add(findings(section, sectionLine));
                }
                if (out.size() >= MAX_SECTIONS) {
                    throw new UnreadableException(i + 1, "more than " + MAX_SECTIONS + " sections");
                }
                section = new LinkedHashMap<>();
                sectionLine = i + 1;
                continue;
            }
            int eq = line.indexOf('=');
            if (section == null || eq <= 0) {
                throw new UnreadableException(i + 1, section == null ? "expected '" + SECTION + "'" : "expected name=value");
            }
            String name = line.substring(0, eq);
            String value = line.substring(eq + 1);
            if (!REQUIRED.contains(name) && !name.equals(UPLOAD_RATE)) {
                throw new UnreadableException(i + 1, "unknown name '" + name + "'");
            }
            if (value.length() > MAX_VALUE_CHARS) {
                throw new UnreadableException(i + 1, "a value longer than " + MAX_VALUE_CHARS + " characters");
            }
            if (section.put(name, value) != null) {
                throw new UnreadableException(i + 1, "'" + name + "' given twice");
            }
        }
        if (section != null) {
            out.add(findings(section, sectionLine));
        }
        return out;
    }

    private static ServerFindings findings(Map<String, String> s, int line) throws UnreadableException {
        for (String name : REQUIRED) {
            if (!s.containsKey(name)) {
                throw new UnreadableException(line, "the section has no '" + name + "'");
            }
        }
        try {
            ServerFindings.Key key = new ServerFindings.Key(nonEmpty(s, "endpoint", line), nonEmpty(s, "bucket", line),
                    ChecksumPolicy.parse(s.get("checksum")), Encryption.Kind.valueOf(s.get("sse").toUpperCase(Locale.ROOT)));
            boolean[] t = new boolean[TRAIT_NAMES.size()];
            for (int i = 0; i < t.length; i++) {
                t[i] = bool(s, TRAIT_NAMES.get(i), line);
            }
            OptionalLong rate = OptionalLong.empty();
            if (s.containsKey(UPLOAD_RATE)) {
                long r = Long.parseLong(s.get(UPLOAD_RATE));
                if (r <= 0) {
                    throw new UnreadableException(line, "upload-rate must be positive: " + r);
                }
                rate = OptionalLong.of(r);
            }
            return new ServerFindings(key, s.get("server"), Instant.parse(s.get("learnt-at")),
                    new ServerTraits(t[0], t[1], t[2], t[3], t[4], t[5]), rate);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new UnreadableException(line, "the section does not decode: " + e.getMessage());
        }
    }

    private static String nonEmpty(Map<String, String> s, String name, int line) throws UnreadableException {
        String v = s.get(name);
        if (v.isEmpty()) {
            throw new UnreadableException(line, "'" + name + "' is empty");
        }
        return v;
    }

    private static boolean bool(Map<String, String> s, String name, int line) throws UnreadableException {
        return switch (s.get(name)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new UnreadableException(line, "'" + name + "' must be true or false, not '" + s.get(name) + "'");
        };
    }

    /** {@code all} with {@code findings} in place of any for the same key, first. */
    public static List<ServerFindings> replacing(List<ServerFindings> all, ServerFindings findings) {
        List<ServerFindings> out = new ArrayList<>();
        out.add(findings);
        for (ServerFindings f : all) {
            if (!f.key().equals(findings.key()) && out.size() < MAX_SECTIONS) {
                out.add(f);
            }
        }
        return out;
    }
}
