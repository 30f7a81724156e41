package dev.felix.offload.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
    private static final RetryPolicy FAST = new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofSeconds(30));

    @Test
    void retryableFailuresAreRetriedUpToTheAttemptBound() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> FAST.run(() -> {
            calls.incrementAndGet();
            throw new ThrottledException("slow down", "k", new StoreAnswer(503, "SlowDown"), null);
        })).isInstanceOf(ThrottledException.class);
        assertThat(calls).hasValue(4);
    }

    @Test
    void aLaterSuccessEndsTheRetries() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        String result = FAST.run(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new TransientStoreException("reset", "k", StoreAnswer.NONE, null);
            }
            return "ok";
        });
        assertThat(result).isEqualTo("ok");
        assertThat(calls).hasValue(3);
    }

    @Test
    void nonRetryableFailuresAreThrownAtOnce() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> FAST.run(() -> {
            calls.incrementAndGet();
            throw new AccessDeniedException("denied", "k", new StoreAnswer(403, "AccessDenied"), null);
        })).isInstanceOf(AccessDeniedException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void theTimeBudgetStopsRetriesBeforeTheAttemptBound() {
        // Every wait would end past a zero budget, so only the first attempt runs.
        RetryPolicy noTime = new RetryPolicy(10, Duration.ofMillis(5), Duration.ofMillis(5), Duration.ZERO);
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> noTime.run(() -> {
            calls.incrementAndGet();
            throw new TransientStoreException("boom", null, StoreAnswer.NONE, null);
        })).isInstanceOf(TransientStoreException.class);
        assertThat(calls).hasValue(1);
    }

    @Property
    void backoffIsFullJitterUnderTheExponentialCeiling(@ForAll @IntRange(min = 1, max = 80) int failed) {
        RetryPolicy policy = new RetryPolicy(100, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofMinutes(5));
        long ceiling = Math.min(Duration.ofSeconds(5).toNanos(), Duration.ofMillis(100).toNanos() << Math.min(failed - 1, 30));
        long wait = policy.backoffNanos(failed);
        assertThat(wait).isBetween(0L, ceiling);
    }

    @Test
    void settingsAreChecked() {
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO, Duration.ZERO))
                .hasMessageContaining("max-attempts");
    }
}
