package dev.felix.offload.retention;

import dev.felix.offload.log.ShardKey;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A pattern {@code tenant/namespace/stream} naming the streams a retention override applies to.
 * Each of the three parts is an exact name or {@code *}, which stands for any name; a {@code *}
 * inside a name is an ordinary character. A name holding {@code /} cannot be written in a pattern
 * (use a shard-directory override for it).
 *
 * <h2>Matching a shard directory</h2>
 * <ul>
 *   <li>Without {@code *} the match is exact: the directory is a shard (any shard number, any
 *       incarnation) of exactly that stream, checked through the hash in its name.</li>
 *   <li>With {@code *}, when a {@code .streams/} marker gave the shard's exact names
 *       ({@link ShardName#stream()}), each exact part must equal the shard's name.</li>
 *   <li>With {@code *} and no marker, the pattern is compared with the rendered names in the
 *       directory name: each exact part rendered as directory names render it, each {@code *} any
 *       run of rendered characters. Rendering is lossy, so such a match can take in a stream whose
 *       rendered names run together the same way ({@code acme/*}{@code /*} also matches tenant
 *       {@code acme_eu}, whose directories begin {@code acme_eu_}). {@link #match} tells such a
 *       {@link Match#POSSIBLE} match from a {@link Match#CERTAIN} one, and {@link RetentionRules}
 *       gives a shard with possible matches the longest limits any of them could mean.</li>
 * </ul>
 */
public final class StreamPattern {

    /** The part that stands for any name. */
    public static final String ANY = "*";

    private static final int[] MAX_CHARS = {ShardKey.MAX_TENANT_CHARS, ShardKey.MAX_NAMESPACE_CHARS,
            ShardKey.MAX_STREAM_CHARS};

    private final String text;
    private final String[] parts;
    private final Pattern rendered;

    private StreamPattern(String text, String[] parts) {
        this.text = text;
        this.parts = parts;
        StringBuilder regex = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            if (i > 0) {
                regex.append('_');
            }
            regex.append(parts[i].equals(ANY) ? "[A-Za-z0-9_-]*" : Pattern.quote(render(parts[i], MAX_CHARS[i])));
        }
        this.rendered = Pattern.compile(regex.toString());
    }

    /**
     * Parses {@code tenant/namespace/stream}.
     *
     * @throws IllegalArgumentException naming the pattern when it does not have three non-empty parts
     */
    public static StreamPattern parse(String text) {
        Objects.requireNonNull(text, "text");
        String[] parts = text.split("/", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("stream pattern '" + text + "' must be tenant/namespace/stream, "
                    + "each part a name or *; it has " + parts.length + " part" + (parts.length == 1 ? "" : "s"));
        }
        for (int i = 0; i < 3; i++) {
            if (parts[i].isEmpty()) {
                throw new IllegalArgumentException("stream pattern '" + text + "' has an empty "
                        + new String[] {"tenant", "namespace", "stream"}[i] + "; use * for any");
            }
        }
        return new StreamPattern(text, parts);
    }

    /** How many of the three parts are exact names: the more, the more specific the pattern. */
    public int exactParts() {
        int n = 0;
        for (String p : parts) {
            if (!p.equals(ANY)) {
                n++;
            }
        }
        return n;
    }

    /**
     * True when the shard directory named {@code name} belongs, or may belong, to a stream this
     * pattern names: {@link #match} is not {@link Match#NO}.
     */
    public boolean matches(ShardName name) {
        return match(name) != Match.NO;
    }

    /** How sure a match of a shard directory is. */
    public enum Match {
        /** The directory is a shard of a stream this pattern names. */
        CERTAIN,
        /**
         * Only the directory's rendered names were there to compare, and they can be read as names
         * this pattern takes and as names it does not ({@code acme/*}{@code /*} against
         * {@code acme_eu_default_orders}, which may be tenant {@code acme} or tenant {@code acme_eu}).
         */
        POSSIBLE,
        /** The directory is not a shard of a stream this pattern names. */
        NO
    }

    /**
     * Whether the shard directory named {@code name} belongs to a stream this pattern names. An
     * exact pattern, and a wildcard one where a marker gave the shard's exact names, answer
     * {@link Match#CERTAIN} or {@link Match#NO}. Against rendered names alone, every way of cutting
     * them into a tenant, a namespace and a stream is tried (each {@code _} may join two names or lie
     * inside one, and each part may be a longer name cut short or one whose other characters became
     * {@code _}): the match is certain only when every reading matches and names each exact part of
     * the pattern itself, and possible when some reading does.
     */
    public Match match(ShardName name) {
        if (exactParts() == 3) {
            return name.isNameOf(new StreamId(parts[0], parts[1], parts[2])) ? Match.CERTAIN : Match.NO;
        }
        if (name.stream().isPresent()) {
            StreamId id = name.stream().get();
            String[] names = {id.tenant(), id.namespace(), id.stream()};
            for (int i = 0; i < 3; i++) {
                if (!parts[i].equals(ANY) && !parts[i].equals(names[i])) {
                    return Match.NO;
                }
            }
            return Match.CERTAIN;
        }
        if (name.rendered().isEmpty() || !rendered.matcher(name.rendered().get()).matches()) {
            return Match.NO;
        }
        String r = name.rendered().get();
        boolean any = false;
        boolean all = true;
        for (int first = r.indexOf('_'); first >= 0; first = r.indexOf('_', first + 1)) {
            for (int second = r.indexOf('_', first + 1); second >= 0; second = r.indexOf('_', second + 1)) {
                String[] reading = {r.substring(0, first), r.substring(first + 1, second), r.substring(second + 1)};
                if (!fits(reading)) {
                    continue;
                }
                boolean matches = true;
                boolean sure = true;
                for (int i = 0; i < 3 && matches; i++) {
                    if (parts[i].equals(ANY)) {
                        continue;
                    }
                    matches = render(parts[i], MAX_CHARS[i]).equals(reading[i]);
                    // Only a rendered part without '_' and shorter than the cut comes from one name alone.
                    sure &= reading[i].equals(parts[i]) && reading[i].indexOf('_') < 0
                            && reading[i].length() < MAX_CHARS[i];
                }
                any |= matches;
                all &= matches && sure;
            }
        }
        return !any ? Match.NO : all ? Match.CERTAIN : Match.POSSIBLE;
    }

    /** Whether each part of a reading is as long as a rendered name part may be. */
    private static boolean fits(String[] reading) {
        for (int i = 0; i < 3; i++) {
            if (reading[i].length() > MAX_CHARS[i]) {
                return false;
            }
        }
        return true;
    }

    /** A name as shard directory names render it: cut to {@code maxChars}, characters outside [A-Za-z0-9-] as _. */
    static String render(String name, int maxChars) {
        StringBuilder out = new StringBuilder();
        name.codePoints().limit(maxChars).forEach(cp -> {
            boolean kept = (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '-';
            out.append(kept ? (char) cp : '_');
        });
        return out.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StreamPattern other && text.equals(other.text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
