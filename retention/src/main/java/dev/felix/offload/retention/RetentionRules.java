package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

    /** The settings of a shard, by the rules above. */
    public RetentionSettings settingsFor(ShardName shard) {
        RetentionSettings out = defaults;
        RetentionOverride own = shards.get(shard.directory());
        List<RetentionOverride> matching = new ArrayList<>();
        if (own != null) {
            matching.add(own);
        }
        for (Map.Entry<StreamPattern, RetentionOverride> e : streams) {
            if (e.getKey().matches(shard)) {
                matching.add(e.getValue());
            }
        }
        for (String key : RetentionSettings.KEYS) {
            for (RetentionOverride o : matching) {
                OptionalLong v = o.get(key);
                if (v.isPresent()) {
                    out = out.with(key, v.getAsLong());
                    break;
                }
            }
        }
        return out;
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
