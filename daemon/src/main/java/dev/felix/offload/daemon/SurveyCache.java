package dev.felix.offload.daemon;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The daemon's latest survey of its data root. A survey is fresh for {@link #REUSE_NANOS} after it
 * <em>ended</em> (counted from its start, every gauge of one scrape once took a survey of its own).
 * Past that, a scrape does not wait for the next survey: it is answered from the latest one and starts
 * the next in the background (at most one at a time), so on a root where nothing happens a scrape costs
 * the same at any size. At 30,000 shards a survey of an unchanged root still stats every shard
 * directory, seconds on a busy machine, which a scrape once waited for at every scrape.
 *
 * <p>A scrape waits only for what a pass changed: a pass that uploaded, unlinked or deleted anything
 * says so ({@link #changed}), which begins a survey at once, and a scrape waits until a survey begun
 * after the latest change has ended, so it never shows the root as it was before a pass that ended
 * before the scrape began. The first scrape waits for the survey begun at start-up ({@link #warm}).
 *
 * <p>No scrape waits longer than its bound ({@link #DEFAULT_MAX_WAIT_NANOS} in the daemon), below
 * Prometheus's default scrape timeout of 10 s: at tens of thousands of shards on a busy machine the
 * start-up survey took 25 s, and a scrape that times out says nothing at all (the target reads as down).
 * Past the bound a scrape is answered from the latest survey, whose start {@link Taken#beganNanos}
 * the daemon shows as an age, or, before the first survey has ended, from none ({@link Taken#known}
 * false: the gauges then read NaN, unknown, never a zero that would pass for an empty root).
 */
final class SurveyCache {

    /** A survey is reused for a second after it ended before a scrape asks for the next one. */
    static final long REUSE_NANOS = 1_000_000_000L;

    /** Takes a survey. */
    interface Surveyor {
        List<ShardSurvey.ShardStatus> survey() throws IOException;
    }

    /** How long a scrape waits for the survey it needs, at most, in the daemon: 5 s. */
    static final long DEFAULT_MAX_WAIT_NANOS = 5_000_000_000L;

    /**
     * A survey and its sums, computed once.
     *
     * @param known      false for {@link #NONE}: no survey has ended yet, so nothing is known of the root
     * @param beganNanos when the survey began, on the cache's clock
     */
    record Taken(List<ShardSurvey.ShardStatus> shards, ShardSurvey.Totals totals, boolean known, long beganNanos) {
        static final Taken NONE = new Taken(List.of(), ShardSurvey.Totals.of(List.of()), false, 0);
    }

    private final Surveyor surveyor;
    private final LongSupplier nanoTime;
    private final Executor background;
    private final long maxWaitNanos;
    private Taken latest = Taken.NONE;
    private long endedNanos;
    private boolean any;
    private boolean underWay;
    /** Changes a pass reported so far, and how many of them the latest survey began after. */
    private long changes;
    private long latestCovers;
    private long surveys;
    private Consumer<IOException> failed = e -> { };

    /** Surveys taken on the asking thread (tests of the reuse time). */
    SurveyCache(Surveyor surveyor, LongSupplier nanoTime) {
        this(surveyor, nanoTime, Runnable::run);
    }

    /** @param background where surveys after the first run, so that no scrape waits for them */
    SurveyCache(Surveyor surveyor, LongSupplier nanoTime, Executor background) {
        this(surveyor, nanoTime, background, Long.MAX_VALUE);
    }

    /**
     * @param maxWaitNanos how long a caller waits, at most, for a survey another thread is taking (in
     *                     real time, whatever {@code nanoTime} says)
     */
    SurveyCache(Surveyor surveyor, LongSupplier nanoTime, Executor background, long maxWaitNanos) {
        this.surveyor = Objects.requireNonNull(surveyor, "surveyor");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.background = Objects.requireNonNull(background, "background");
        if (maxWaitNanos <= 0) {
            throw new IllegalArgumentException("maxWaitNanos must be positive: " + maxWaitNanos);
        }
        this.maxWaitNanos = maxWaitNanos;
    }

    /**
     * The latest survey. When it ended more than {@link #REUSE_NANOS} ago, the next one begins in the
     * background and this one is answered meanwhile; when there is none yet, or none begun after the
     * latest {@link #changed}, the caller waits for one, but no longer than the bound: then it is
     * answered from the latest survey, or {@link Taken#NONE}. A survey that fails leaves the previous
     * one standing ({@code failed} hears of it).
     */
    Taken get(Consumer<IOException> failed) {
        synchronized (this) {
            this.failed = Objects.requireNonNull(failed, "failed");
            if (any && latestCovers == changes) {
                if (nanoTime.getAsLong() - endedNanos > REUSE_NANOS && !underWay) {
                    underWay = true;
                    background.execute(this::take);
                }
                return latest;
            }
        }
        // No survey yet, or none since a pass changed the root: wait for one begun after that.
        long deadline = System.nanoTime() + Math.min(maxWaitNanos, Long.MAX_VALUE / 4);
        while (true) {
            boolean takeHere = false;
            synchronized (this) {
                if (any && latestCovers == changes) {
                    return latest;
                }
                if (!underWay) {
                    underWay = true;
                    takeHere = true;
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return latest; // the bound: what is known now (NONE before any survey ended)
                    }
                    try {
                        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return latest;
                    }
                }
            }
            if (takeHere) {
                take();
            }
        }
    }

    /** A pass changed the root (uploaded, unlinked or deleted): the next scrape shows a survey begun after it. */
    synchronized void changed() {
        changes++;
        warm();
    }

    /** Begins a survey in the background unless one is under way: at start-up, so the first scrape finds one. */
    synchronized void warm() {
        if (!underWay) {
            underWay = true;
            background.execute(this::take);
        }
    }

    private void take() {
        long covers;
        synchronized (this) {
            covers = changes;
        }
        long began = nanoTime.getAsLong();
        List<ShardSurvey.ShardStatus> shards = null;
        IOException failure = null;
        try {
            shards = surveyor.survey();
        } catch (IOException e) {
            failure = e;
        } finally {
            Consumer<IOException> tell;
            synchronized (this) {
                if (shards != null) {
                    latest = new Taken(shards, ShardSurvey.Totals.of(shards), true, began);
                }
                latestCovers = covers; // a failed survey leaves the previous one standing for what it covers too
                surveys++;
                any = true;
                underWay = false;
                endedNanos = nanoTime.getAsLong();
                tell = this.failed;
                notifyAll();
                if (covers != changes) {
                    warm(); // a pass changed the root while this one ran: the next begins at once
                }
            }
            if (failure != null) {
                tell.accept(failure);
            }
        }
    }

    /** The clock's reading now: for the age of a survey's {@link Taken#beganNanos}. */
    long nanoTime() {
        return nanoTime.getAsLong();
    }

    /** Surveys taken so far. */
    synchronized long surveys() {
        return surveys;
    }
}
