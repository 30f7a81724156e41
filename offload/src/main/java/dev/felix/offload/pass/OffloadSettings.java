package dev.felix.offload.pass;

import java.time.Duration;
import java.util.Objects;

/**
 * How an offload pass runs.
 *
 * @param keyPrefix            prefix of every key (without slashes at its ends), or empty
 * @param verify               how uploads are proven before they are recorded
 * @param localRetention       what stays local once copies are verified
 * @param parallelism          shards offloaded at the same time (each shard's uploads run beside each
 *                             other, under {@code maxBytesInFlight})
 * @param uploadBytesPerSecond upload bandwidth limit, 0 for none
 * @param uploadAttempts       uploads of one segment before the pass gives up on it (a verification
 *                             mismatch deletes the object and uploads again)
 * @param retryBackoff         first wait between attempts; doubled each time, with full jitter
 * @param maxBytesInFlight     bytes of segments being uploaded or verified at once, over all shards of
 *                             the pass (a segment larger than this still goes, alone; under a
 *                             bandwidth limit at most one second of it); at least
 *                             {@link #MIN_BYTES_IN_FLIGHT}
 */
public record OffloadSettings(String keyPrefix, VerifyMode verify, LocalRetention localRetention, int parallelism,
                              long uploadBytesPerSecond, int uploadAttempts, Duration retryBackoff,
                              long maxBytesInFlight) {

    /** The default bound on bytes in flight: 256 MiB. */
    public static final long DEFAULT_MAX_BYTES_IN_FLIGHT = 256L << 20;

    /**
     * The least bound accepted, 1 MiB: below it the pass only runs one segment at a time, and a
     * value that small is far more likely a unit left off ({@code 256} for {@code 256MiB}).
     */
    public static final long MIN_BYTES_IN_FLIGHT = 1L << 20;

    /** The most shards offloaded at once, wherever the setting comes from (a thread each). */
    public static final int MAX_PARALLELISM = 1024;

    public OffloadSettings {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(verify, "verify");
        Objects.requireNonNull(localRetention, "localRetention");
        Objects.requireNonNull(retryBackoff, "retryBackoff");
        if (parallelism < 1 || parallelism > MAX_PARALLELISM) {
            throw new IllegalArgumentException("parallelism must be from 1 to " + MAX_PARALLELISM + ", got " + parallelism);
        }
        if (uploadBytesPerSecond < 0) {
            throw new IllegalArgumentException("upload bytes per second must not be negative, got " + uploadBytesPerSecond);
        }
        if (uploadAttempts < 1) {
            throw new IllegalArgumentException("upload attempts must be at least 1, got " + uploadAttempts);
        }
        if (maxBytesInFlight < MIN_BYTES_IN_FLIGHT) {
            throw new IllegalArgumentException("max bytes in flight must be at least " + MIN_BYTES_IN_FLIGHT
                    + " (1MiB), got " + maxBytesInFlight);
        }
    }

    /**
     * No prefix, verify auto, keep everything local, two shards at a time, no bandwidth limit, 3
     * attempts, 256 MiB in flight.
     */
    public static OffloadSettings defaults() {
        return new OffloadSettings("", VerifyMode.AUTO, new LocalRetention.KeepAll(), 2, 0, 3, Duration.ofMillis(200),
                DEFAULT_MAX_BYTES_IN_FLIGHT);
    }

    public OffloadSettings withKeyPrefix(String prefix) {
        return new OffloadSettings(prefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight);
    }

    public OffloadSettings withVerify(VerifyMode mode) {
        return new OffloadSettings(keyPrefix, mode, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight);
    }

    public OffloadSettings withLocalRetention(LocalRetention retention) {
        return new OffloadSettings(keyPrefix, verify, retention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight);
    }

    public OffloadSettings withParallelism(int shards) {
        return new OffloadSettings(keyPrefix, verify, localRetention, shards, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight);
    }

    public OffloadSettings withUploadBytesPerSecond(long bytesPerSecond) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, bytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight);
    }

    public OffloadSettings withRetries(int attempts, Duration backoff) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, attempts,
                backoff, maxBytesInFlight);
    }

    public OffloadSettings withMaxBytesInFlight(long bytes) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, bytes);
    }
}
