package dev.felix.offload.retention;

import java.util.List;
import java.util.Objects;

/**
 * The four retention limits of one shard. Each is a number of bytes or milliseconds, or
 * {@value #UNLIMITED} for no limit.
 *
 * <ul>
 *   <li>{@code local.retention.bytes}: the most bytes of segment data files ({@code *.log}, the
 *       active one included, indexes not counted) a shard keeps on local disk.</li>
 *   <li>{@code local.retention.ms}: how long a segment stays on local disk, judged by the largest
 *       {@code timestamp_micros} among its records (not the last record's, which a clock that
 *       stepped back leaves older than earlier ones).</li>
 *   <li>{@code retention.bytes}: the most bytes the shard holds in all, local and remote together;
 *       a segment held in both places counts once.</li>
 *   <li>{@code retention.ms}: how long a segment is kept at all, judged the same way.</li>
 * </ul>
 *
 * <p>Local retention only ever removes segments that have a verified copy in the store, so it
 * never loses data; remote retention removes copies for good. The local limits in force are never
 * looser than the total ones ({@link #effectiveLocalBytes()}, {@link #effectiveLocalMs()}): a
 * segment past the total limit leaves local disk first so that remote retention can then drop it.
 *
 * @param localRetentionBytes {@code local.retention.bytes}
 * @param localRetentionMs    {@code local.retention.ms}
 * @param retentionBytes      {@code retention.bytes}
 * @param retentionMs         {@code retention.ms}
 */
public record RetentionSettings(long localRetentionBytes, long localRetentionMs, long retentionBytes,
                                long retentionMs) {

    /** The value of a limit that does not limit. */
    public static final long UNLIMITED = -1;

    public static final String LOCAL_RETENTION_BYTES = "local.retention.bytes";
    public static final String LOCAL_RETENTION_MS = "local.retention.ms";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String RETENTION_MS = "retention.ms";

    /** Every key, in the order of the record's components. */
    public static final List<String> KEYS = List.of(LOCAL_RETENTION_BYTES, LOCAL_RETENTION_MS, RETENTION_BYTES,
            RETENTION_MS);

    public RetentionSettings {
        check(LOCAL_RETENTION_BYTES, localRetentionBytes);
        check(LOCAL_RETENTION_MS, localRetentionMs);
        check(RETENTION_BYTES, retentionBytes);
        check(RETENTION_MS, retentionMs);
    }

    /**
     * The defaults: every limit {@value #UNLIMITED}. Retention deletes nothing the operator did not
     * ask it to; a data root sets its own limits.
     */
    public static RetentionSettings defaults() {
        return new RetentionSettings(UNLIMITED, UNLIMITED, UNLIMITED, UNLIMITED);
    }

    /** Refuses a value below {@value #UNLIMITED}, naming the key and what was expected. */
    static void check(String key, long value) {
        if (value < UNLIMITED) {
            throw new IllegalArgumentException(key + " must be -1 (unlimited) or a number of "
                    + (key.endsWith(".ms") ? "milliseconds" : "bytes") + " >= 0, got " + value);
        }
    }

    /** The value of {@code key}, one of {@link #KEYS}. */
    public long get(String key) {
        return switch (requireKey(key)) {
            case LOCAL_RETENTION_BYTES -> localRetentionBytes;
            case LOCAL_RETENTION_MS -> localRetentionMs;
            case RETENTION_BYTES -> retentionBytes;
            default -> retentionMs;
        };
    }

    /** These settings with {@code key} (one of {@link #KEYS}) set to {@code value}. */
    public RetentionSettings with(String key, long value) {
        return switch (requireKey(key)) {
            case LOCAL_RETENTION_BYTES -> new RetentionSettings(value, localRetentionMs, retentionBytes, retentionMs);
            case LOCAL_RETENTION_MS -> new RetentionSettings(localRetentionBytes, value, retentionBytes, retentionMs);
            case RETENTION_BYTES -> new RetentionSettings(localRetentionBytes, localRetentionMs, value, retentionMs);
            default -> new RetentionSettings(localRetentionBytes, localRetentionMs, retentionBytes, value);
        };
    }

    /** Fails with the list of keys when {@code key} is none of them. */
    static String requireKey(String key) {
        Objects.requireNonNull(key, "key");
        if (!KEYS.contains(key)) {
            throw new IllegalArgumentException("unknown retention key '" + key + "'; expected one of " + KEYS);
        }
        return key;
    }

    /** The local byte limit in force: the tighter of the local and the total limit, or -1. */
    public long effectiveLocalBytes() {
        return tighter(localRetentionBytes, retentionBytes);
    }

    /** The local time limit in force: the tighter of the local and the total limit, or -1. */
    public long effectiveLocalMs() {
        return tighter(localRetentionMs, retentionMs);
    }

    /** True when no limit is set, so retention leaves the shard alone. */
    public boolean unlimited() {
        return localRetentionBytes == UNLIMITED && localRetentionMs == UNLIMITED && retentionBytes == UNLIMITED
                && retentionMs == UNLIMITED;
    }

    private static long tighter(long a, long b) {
        if (a == UNLIMITED) {
            return b;
        }
        if (b == UNLIMITED) {
            return a;
        }
        return Math.min(a, b);
    }

    @Override
    public String toString() {
        return LOCAL_RETENTION_BYTES + "=" + localRetentionBytes + ", " + LOCAL_RETENTION_MS + "=" + localRetentionMs
                + ", " + RETENTION_BYTES + "=" + retentionBytes + ", " + RETENTION_MS + "=" + retentionMs;
    }
}
