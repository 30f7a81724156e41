package dev.felix.offload.scrub;

import dev.felix.offload.scrub.Scrub.Cursor;

import java.util.Locale;
import java.util.Optional;

/**
 * A scrub run's budget of requests: an entry is checked only while what it may cost fits in what is
 * left, and the first entry that does not fit is where the run stops checking and where the next run
 * may start. An entry that alone costs more than the whole budget is still checked when the run
 * starts with it, or runs would stop at it for ever.
 */
final class RequestBudget {

    private final long budget;
    private long left;
    private Cursor resumeAt;

    /** @param budget requests at most, 0 for no budget */
    RequestBudget(long budget) {
        if (budget < 0) {
            throw new IllegalArgumentException("request budget must be >= 0, got " + budget);
        }
        this.budget = budget;
        this.left = budget == 0 ? Long.MAX_VALUE : budget;
    }

    /** Whether an entry did not fit: no later entry of the run is checked. */
    boolean spent() {
        return resumeAt != null;
    }

    /**
     * Whether the entry of {@code shard} at {@code baseOffset}, which may cost {@code cost} requests,
     * is checked: its cost is taken from what is left, or it becomes where the next run starts.
     *
     * @param first whether the run has checked no entry yet
     */
    boolean admit(String shard, long baseOffset, long cost, boolean first) {
        if (spent()) {
            return false;
        }
        if (cost > left && !first) {
            resumeAt = new Cursor(shard, baseOffset);
            return false;
        }
        left = Math.max(0, left - cost);
        return true;
    }

    /** Where the next run starts, when the budget ran out before the run's last entry. */
    Optional<Cursor> resumeAt() {
        return Optional.ofNullable(resumeAt);
    }

    /** What a report says of a budget that ran out after {@code checked} of {@code total} entries. */
    Optional<String> note(int checked, int total) {
        if (resumeAt == null) {
            return Optional.empty();
        }
        return Optional.of("the request budget of " + budget + " ran out after " + checked + " of " + total
                + " entries (" + String.format(Locale.ROOT, "%.1f", 100.0 * checked / Math.max(1, total))
                + "%); the next run starts at " + resumeAt.describe() + " (--start-at " + resumeAt.text() + ")");
    }
}
