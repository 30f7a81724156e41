package dev.felix.offload.retention;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Some of the retention keys set for a group of shards (a stream pattern or one shard directory);
 * keys it leaves unset come from a less specific override or from the defaults. Immutable.
 */
public final class RetentionOverride {

    private static final RetentionOverride NONE = new RetentionOverride(Map.of());

    /** The keys set, in {@link RetentionSettings#KEYS} order. */
    private final Map<String, Long> values;

    private RetentionOverride(Map<String, Long> values) {
        this.values = values;
    }

    /** An override that sets nothing. */
    public static RetentionOverride none() {
        return NONE;
    }

    /**
     * An override of these keys.
     *
     * @throws IllegalArgumentException naming the key when one is unknown or its value is below -1
     */
    public static RetentionOverride of(Map<String, Long> values) {
        RetentionOverride o = NONE;
        for (Map.Entry<String, Long> e : values.entrySet()) {
            o = o.with(e.getKey(), e.getValue());
        }
        return o;
    }

    /** This override with {@code key} set to {@code value} (-1 for unlimited). */
    public RetentionOverride with(String key, long value) {
        RetentionSettings.requireKey(key);
        RetentionSettings.check(key, value);
        Map<String, Long> next = new LinkedHashMap<>();
        for (String k : RetentionSettings.KEYS) {
            if (k.equals(key)) {
                next.put(k, value);
            } else if (values.containsKey(k)) {
                next.put(k, values.get(k));
            }
        }
        return new RetentionOverride(Map.copyOf(next));
    }

    /** The value this override sets for {@code key}, or empty when it leaves it unset. */
    public OptionalLong get(String key) {
        Long v = values.get(RetentionSettings.requireKey(key));
        return v == null ? OptionalLong.empty() : OptionalLong.of(v);
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** {@code base} with every key this override sets replaced. */
    public RetentionSettings applyTo(RetentionSettings base) {
        RetentionSettings out = base;
        for (String key : RetentionSettings.KEYS) {
            Long v = values.get(key);
            if (v != null) {
                out = out.with(key, v);
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RetentionOverride other && values.equals(other.values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("{");
        for (String key : RetentionSettings.KEYS) {
            if (values.containsKey(key)) {
                s.append(s.length() > 1 ? ", " : "").append(key).append('=').append(values.get(key));
            }
        }
        return s.append('}').toString();
    }
}
