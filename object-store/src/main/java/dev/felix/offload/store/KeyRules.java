package dev.felix.offload.store;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/**
 * The rules every store applies to keys, the same everywhere so that a key that works on S3 also
 * maps safely to a path under the filesystem store's root.
 *
 * <p>A key is 1 to 1024 bytes of UTF-8, of {@code /}-separated segments; none empty, none {@code .}
 * or {@code ..}; no leading {@code /}; no backslash, NUL or other control character; and its first
 * segment must not start with {@value #RESERVED_PREFIX}, which the stores keep for their own
 * staging and probe objects.
 */
public final class KeyRules {
    public static final int MAX_KEY_BYTES = 1024;
    public static final String RESERVED_PREFIX = ".felix-";

    /** Ascending UTF-8 byte order, the order S3 lists keys in. */
    public static final Comparator<String> UTF8_ORDER = (a, b) -> {
        byte[] x = a.getBytes(StandardCharsets.UTF_8);
        byte[] y = b.getBytes(StandardCharsets.UTF_8);
        return java.util.Arrays.compareUnsigned(x, y);
    };

    private KeyRules() {}

    /** Returns the key when it follows the rules, otherwise throws naming the key and the rule. */
    public static String check(String key) throws InvalidKeyException {
        if (key == null || key.isEmpty()) {
            throw invalid(key, "must not be empty");
        }
        checkCharacters(key, "key");
        if (utf8Length(key) > MAX_KEY_BYTES) {
            throw invalid(key, "is longer than " + MAX_KEY_BYTES + " bytes of UTF-8");
        }
        if (key.startsWith("/")) {
            throw invalid(key, "must not be absolute (start with '/')");
        }
        String[] segments = key.split("/", -1);
        for (String segment : segments) {
            if (segment.isEmpty()) {
                throw invalid(key, "must not hold an empty segment ('//' or a trailing '/')");
            }
            if (segment.equals(".") || segment.equals("..")) {
                throw invalid(key, "must not hold a '" + segment + "' segment");
            }
        }
        if (segments[0].startsWith(RESERVED_PREFIX)) {
            throw invalid(key, "must not start with the reserved name '" + RESERVED_PREFIX + "'");
        }
        return key;
    }

    /** Returns the list prefix (null taken as empty) when usable, otherwise throws. */
    public static String checkPrefix(String prefix) throws InvalidKeyException {
        if (prefix == null || prefix.isEmpty()) {
            return "";
        }
        checkCharacters(prefix, "prefix");
        if (prefix.startsWith("/")) {
            throw new InvalidKeyException("list prefix '" + printable(prefix) + "' must not start with '/'", prefix, null, null);
        }
        if (utf8Length(prefix) > MAX_KEY_BYTES) {
            throw new InvalidKeyException("list prefix is longer than " + MAX_KEY_BYTES + " bytes of UTF-8", prefix, null, null);
        }
        return prefix;
    }

    private static void checkCharacters(String key, String what) throws InvalidKeyException {
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c == 0) {
                throw new InvalidKeyException(what + " '" + printable(key) + "' must not hold NUL", key, null, null);
            }
            if (c < 0x20 || c == 0x7f) {
                throw new InvalidKeyException(what + " '" + printable(key) + "' must not hold control character U+"
                        + String.format("%04X", (int) c), key, null, null);
            }
            if (c == '\\') {
                throw new InvalidKeyException(what + " '" + printable(key) + "' must not hold a backslash", key, null, null);
            }
        }
        try {
            StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(key));
        } catch (CharacterCodingException e) {
            throw new InvalidKeyException(what + " '" + printable(key) + "' is not valid Unicode (a lone surrogate)", key, null, e);
        }
    }

    private static int utf8Length(String s) {
        ByteBuffer encoded = StandardCharsets.UTF_8.encode(s);
        return encoded.remaining();
    }

    private static InvalidKeyException invalid(String key, String rule) {
        return new InvalidKeyException("key '" + printable(key) + "' " + rule, key, null, null);
    }

    /** The key with control characters escaped, so an error message never carries raw NULs. */
    static String printable(String key) {
        if (key == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < key.length() && out.length() < 200; i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
