package dev.felix.offload.pass;

import dev.felix.offload.copy.VerifyMode;

import dev.felix.offload.copy.LocalRetention;

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
 * @param unlinkSettle         how long an entry stands, and is then read back from disk, before its
 *                             local segment may be unlinked ({@link dev.felix.offload.copy.LocalRelease})
 * @param awaitSettle          whether the pass, before it returns, waits for the entries it recorded to
 *                             settle and unlinks what local retention lets go then (a one-shot command);
 *                             false leaves them to the next pass (the daemon)
 */
public record OffloadSettings(String keyPrefix, VerifyMode verify, LocalRetention localRetention, int parallelism,
                              long uploadBytesPerSecond, int uploadAttempts, Duration retryBackoff,
                              long maxBytesInFlight, Duration unlinkSettle, boolean awaitSettle) {

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
        Objects.requireNonNull(unlinkSettle, "unlinkSettle");
        if (unlinkSettle.isNegative()) {
            throw new IllegalArgumentException("unlink settle time must not be negative, got " + unlinkSettle);
        }
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

    /** As the canonical constructor, with the default settle time, awaited before the pass returns. */
    public OffloadSettings(String keyPrefix, VerifyMode verify, LocalRetention localRetention, int parallelism,
                           long uploadBytesPerSecond, int uploadAttempts, Duration retryBackoff, long maxBytesInFlight) {
        this(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts, retryBackoff,
                maxBytesInFlight, dev.felix.offload.copy.LocalRelease.DEFAULT_SETTLE, true);
    }

    /**
     * No prefix, verify auto, keep everything local, two shards at a time, no bandwidth limit, 3
     * attempts, 256 MiB in flight, entries settle for 5 s before the pass returns.
     */
    public static OffloadSettings defaults() {
        return new OffloadSettings("", VerifyMode.AUTO, new LocalRetention.KeepAll(), 2, 0, 3, Duration.ofMillis(200),
                DEFAULT_MAX_BYTES_IN_FLIGHT);
    }

    /** These settings with {@code settle} as the time an entry stands before its segment may go. */
    public OffloadSettings withUnlinkSettle(Duration settle) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, settle, awaitSettle);
    }

    /** These settings with the pass waiting (or not) for its entries to settle before it returns. */
    public OffloadSettings withAwaitSettle(boolean await) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, await);
    }

    public OffloadSettings withKeyPrefix(String prefix) {
        return new OffloadSettings(prefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withVerify(VerifyMode mode) {
        return new OffloadSettings(keyPrefix, mode, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withLocalRetention(LocalRetention retention) {
        return new OffloadSettings(keyPrefix, verify, retention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withParallelism(int shards) {
        return new OffloadSettings(keyPrefix, verify, localRetention, shards, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withUploadBytesPerSecond(long bytesPerSecond) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, bytesPerSecond, uploadAttempts,
                retryBackoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withRetries(int attempts, Duration backoff) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, attempts,
                backoff, maxBytesInFlight, unlinkSettle, awaitSettle);
    }

    public OffloadSettings withMaxBytesInFlight(long bytes) {
        return new OffloadSettings(keyPrefix, verify, localRetention, parallelism, uploadBytesPerSecond, uploadAttempts,
                retryBackoff, bytes, unlinkSettle, awaitSettle);
    }
}
