package dev.felix.offload.store;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Retries of retryable store failures ({@link StoreException#isRetryable()}): exponential backoff
 * with full jitter (each wait drawn uniformly from zero to {@code min(maxDelay, baseDelay * 2^n)}),
 * bounded both by a number of attempts and by a total time budget, whichever ends first. Full
 * jitter spreads out clients that were throttled together, so they do not come back in step.
 *
 * @param maxAttempts attempts in all, including the first (1 means no retry)
 * @param baseDelay the backoff's first ceiling
 * @param maxDelay the largest single wait
 * @param maxTotal no retry starts once this much time has passed since the first attempt, and
 *     no wait would end past it
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay, Duration maxTotal) {
    /** 6 attempts, waits from 100 ms doubling to at most 5 s, 60 s in all. */
    public static final RetryPolicy DEFAULT =
            new RetryPolicy(6, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(60));

    /** One attempt only. */
    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ZERO);

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("retry max-attempts must be at least 1: " + maxAttempts);
        }
        if (baseDelay.isNegative() || maxDelay.isNegative() || maxTotal.isNegative()) {
            throw new IllegalArgumentException("retry delays and total time must not be negative");
        }
    }

    /** One call that may throw a store exception. */
    @FunctionalInterface
    public interface Call<T> {
        T run() throws StoreException;
    }

    /** Runs {@code call}, retrying retryable failures within this policy's bounds. */
    public <T> T run(Call<T> call) throws StoreException {
        long start = System.nanoTime();
        long budgetNanos = maxTotal.toNanos();
        for (int attempt = 1; ; attempt++) {
            try {
                return call.run();
            } catch (StoreException e) {
                if (!e.isRetryable() || attempt >= maxAttempts) {
                    throw e;
                }
                long waitNanos = backoffNanos(attempt);
                long elapsed = System.nanoTime() - start;
                if (elapsed + waitNanos > budgetNanos) {
                    throw e;
                }
                sleep(waitNanos, e);
            }
        }
    }

    /** The wait before attempt {@code failedAttempts + 1}: uniform in [0, min(max, base * 2^(n-1))]. */
    long backoffNanos(int failedAttempts) {
        long base = baseDelay.toNanos();
        long ceiling = maxDelay.toNanos();
        int shift = Math.min(failedAttempts - 1, 30);
        long exp = base > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : base << shift;
        long bound = Math.min(ceiling, exp);
        return bound <= 0 ? 0 : ThreadLocalRandom.current().nextLong(bound + 1);
    }

    private static void sleep(long nanos, StoreException pending) throws StoreException {
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            pending.addSuppressed(ie);
            throw pending;
        }
    }
}
