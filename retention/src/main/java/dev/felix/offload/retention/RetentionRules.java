package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The retention settings of a data root: defaults, overrides by stream pattern, and overrides by
 * shard directory. Immutable and safe to share.
 *
 * <h2>Which value a shard gets</h2>
 * Each key is resolved on its own, from the most specific override that sets it:
 * <ol>
 *   <li>the override of the shard's directory name (exact, whole name, incarnation suffix included);</li>
 *   <li>stream-pattern overrides that match the shard ({@link StreamPattern}), those with more exact
 *       parts first ({@code acme/default/orders} before {@code acme/default/*} before
 *       {@code acme/*}{@code /*}); among equally specific ones, the one added first;</li>
 *   <li>the defaults.</li>
 * </ol>
 * So an override may set only {@code retention.ms} and leave the rest to the levels below it.
 *
 * <p>Where a shard's stream is not known for certain (see {@link StreamPattern#match}), the shard
 * gets the longest limits any reading of its name gives, never the shortest: {@link #resolve}.
 */
public final class RetentionRules {

    private final RetentionSettings defaults;
    /** Stream overrides, most specific first, in the order they were added within one specificity. */
    private final List<Map.Entry<StreamPattern, RetentionOverride>> streams;
    private final Map<String, RetentionOverride> shards;

    private RetentionRules(RetentionSettings defaults, List<Map.Entry<StreamPattern, RetentionOverride>> streams,
                           Map<String, RetentionOverride> shards) {
        this.defaults = defaults;
        this.streams = streams;
        this.shards = shards;
    }

    /** Rules with these defaults and no overrides. */
    public static RetentionRules of(RetentionSettings defaults) {
        return builder(defaults).build();
    }

    public static Builder builder(RetentionSettings defaults) {
        return new Builder(defaults);
    }

    /** Builds rules; each pattern and each directory may be given once. */
    public static final class Builder {
        private final RetentionSettings defaults;
        private final List<Map.Entry<StreamPattern, RetentionOverride>> streams = new ArrayList<>();
        private final Map<String, RetentionOverride> shards = new LinkedHashMap<>();

        private Builder(RetentionSettings defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
        }

        /**
         * Overrides for the streams {@code pattern} names ({@code tenant/namespace/stream}, parts
         * may be {@code *}).
         *
         * @throws IllegalArgumentException when the pattern is malformed or was given before
         */
        public Builder forStreams(String pattern, RetentionOverride override) {
            StreamPattern p = StreamPattern.parse(pattern);
            Objects.requireNonNull(override, "override");
            for (Map.Entry<StreamPattern, RetentionOverride> e : streams) {
                if (e.getKey().equals(p)) {
                    throw new IllegalArgumentException("stream pattern '" + pattern + "' is given twice");
                }
            }
            streams.add(Map.entry(p, override));
            return this;
        }

        /**
         * Overrides for the shard named {@code directory}: its name under the root, as
         * {@link dev.felix.offload.log.DataRoot.Shard#name()} gives it (a directory name at the root,
         * or {@code groups/<dir>}, {@code dead-letters/<dir>}).
         *
         * @throws IllegalArgumentException when the name is empty, is not a shard's name, or was given before
         */
        public Builder forShardDirectory(String directory, RetentionOverride override) {
            Objects.requireNonNull(directory, "directory");
            Objects.requireNonNull(override, "override");
            if (!isShardName(directory)) {
                throw new IllegalArgumentException("shard directory '" + directory
                        + "' must be a directory's name under the data root, not a path (a shard under groups/ or "
                        + "dead-letters/ is named groups/<dir> or dead-letters/<dir>)");
            }
            if (shards.putIfAbsent(directory, override) != null) {
                throw new IllegalArgumentException("shard directory '" + directory + "' is given twice");
            }
            return this;
        }

        private static boolean isShardName(String name) {
            if (name.isEmpty() || name.contains("\\")) {
                return false;
            }
            String[] parts = name.split("/", -1);
            if (parts.length == 1) {
                return !name.startsWith(".");
            }
            return parts.length == 2 && (parts[0].equals(DataRoot.GROUPS_DIR) || parts[0].equals(DataRoot.DEAD_LETTERS_DIR))
                    && !parts[1].isEmpty() && !parts[1].startsWith(".");
        }

        public RetentionRules build() {
            List<Map.Entry<StreamPattern, RetentionOverride>> ordered = new ArrayList<>(streams);
            // A stable sort keeps the order of addition among equally specific patterns.
            ordered.sort(Comparator.comparingInt((Map.Entry<StreamPattern, RetentionOverride> e) -> e.getKey().exactParts())
                    .reversed());
            return new RetentionRules(defaults, List.copyOf(ordered), Map.copyOf(shards));
        }
    }

    public RetentionSettings defaults() {
        return defaults;
    }

    /** The settings of the shard directory {@code shardDir}, judged by its name alone. */
    public RetentionSettings settingsFor(Path shardDir) {
        Path name = shardDir.getFileName();
        return settingsFor(ShardName.of(name == null ? shardDir.toString() : name.toString()));
    }

    /** The settings of a shard, by the rules above: {@link #resolve}'s. */
    public RetentionSettings settingsFor(ShardName shard) {
        return resolve(shard).settings();
    }

    /**
     * The settings a shard gets, and, where its stream could not be known for certain, what was made
     * of that.
     *
     * @param settings  the limits the shard is held to
     * @param uncertain empty when every override that applies was known to apply; else one line
     *                  naming the patterns that may or may not apply and the limits taken
     */
    public record Resolution(RetentionSettings settings, Optional<String> uncertain) {
    }

    /**
     * Resolves each key by the rules above. A stream-pattern override that only possibly applies
     * ({@link StreamPattern.Match#POSSIBLE}: no sound marker gave the shard's exact names, and its
     * rendered names can be read more than one way) may be the one in force or may not: each value
     * it gives is a candidate, and so is whatever the next levels give, down to the first override
     * known to apply (or the defaults). The shard gets the most conservative candidate, the longest
     * limit ({@value RetentionSettings#UNLIMITED}, no limit, beating any), so a wrong reading never
     * deletes what the right one would keep; the resolution says so when that changed anything.
     */
    public Resolution resolve(ShardName shard) {
        record Candidate(String source, RetentionOverride override, boolean certain) {
        }
        List<Candidate> matching = new ArrayList<>();
        RetentionOverride own = shards.get(shard.directory());
        if (own != null) {
            matching.add(new Candidate("shard " + shard.directory(), own, true));
        }
        List<String> possible = new ArrayList<>();
        for (Map.Entry<StreamPattern, RetentionOverride> e : streams) {
            StreamPattern.Match m = e.getKey().match(shard);
            if (m != StreamPattern.Match.NO) {
                matching.add(new Candidate(e.getKey().toString(), e.getValue(), m == StreamPattern.Match.CERTAIN));
            }
            if (m == StreamPattern.Match.POSSIBLE) {
                possible.add(e.getKey().toString());
            }
        }
        RetentionSettings out = defaults;
        RetentionSettings firstReading = defaults;
        for (String key : RetentionSettings.KEYS) {
            long chosen = defaults.get(key);
            boolean first = true;
            boolean settled = false;
            for (Candidate c : matching) {
                OptionalLong v = c.override().get(key);
                if (v.isEmpty()) {
                    continue;
                }
                if (first) {
                    firstReading = firstReading.with(key, v.getAsLong());
                    first = false;
                    chosen = v.getAsLong();
                } else {
                    chosen = longer(chosen, v.getAsLong());
                }
                if (c.certain()) {
                    settled = true;
                    break;
                }
            }
            if (!settled && !first) {
                chosen = longer(chosen, defaults.get(key)); // none known to apply: the defaults may be in force
            }
            out = out.with(key, chosen);
        }
        if (possible.isEmpty() || out.equals(firstReading)) {
            return new Resolution(out, Optional.empty());
        }
        return new Resolution(out, Optional.of("the stream of " + shard.directory() + " is not known for certain (no "
                + "readable .streams marker names it, and its rendered names can be read more than one way), so "
                + String.join(", ", possible) + " may or may not apply; it is held to the longest limits any reading gives (" + out + ") instead of ("
                + firstReading + ")"));
    }

    /** The more conservative of two limits: the larger, {@value RetentionSettings#UNLIMITED} beating any. */
    static long longer(long a, long b) {
        if (a == RetentionSettings.UNLIMITED || b == RetentionSettings.UNLIMITED) {
            return RetentionSettings.UNLIMITED;
        }
        return Math.max(a, b);
    }

    /**
     * The overrides that apply to none of {@code shards}, as the configuration names them
     * ({@code retention.streams.<pattern>}, {@code retention.shards.<directory>}), in the rules' order:
     * settings that take effect nowhere (a misspelt name, a stream not created yet).
     */
    public List<String> unmatched(java.util.Collection<ShardName> shards) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<StreamPattern, RetentionOverride> e : streams) {
            if (shards.stream().noneMatch(e.getKey()::matches)) {
                out.add("retention.streams." + e.getKey());
            }
        }
        for (String directory : new java.util.TreeSet<>(this.shards.keySet())) {
            if (shards.stream().noneMatch(s -> s.directory().equals(directory))) {
                out.add("retention.shards." + directory);
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "RetentionRules[defaults " + defaults + ", streams " + streams + ", shards " + shards + "]";
    }
}
