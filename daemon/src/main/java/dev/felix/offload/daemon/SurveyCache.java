package dev.felix.offload.daemon;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The daemon's latest survey of its data root, reused while it is fresh: for {@link #REUSE_NANOS}
 * after it <em>ended</em>. Counting from its end matters once a survey takes longer than that: counted
 * from its start (as before), every gauge of one scrape took a survey of its own, six per scrape, and
 * a scrape at 30,000 shards took 16 s.
 */
final class SurveyCache {

    /** A survey is reused for a second after it ended. */
    static final long REUSE_NANOS = 1_000_000_000L;

    /** Takes a survey. */
    interface Surveyor {
        List<ShardSurvey.ShardStatus> survey() throws IOException;
    }

    /** A survey and its sums, computed once. */
    record Taken(List<ShardSurvey.ShardStatus> shards, ShardSurvey.Totals totals) {
        static final Taken NONE = new Taken(List.of(), ShardSurvey.Totals.of(List.of()));
    }

    private final Surveyor surveyor;
    private final LongSupplier nanoTime;
    private Taken latest = Taken.NONE;
    private long endedNanos;
    private boolean any;
    private long surveys;

    SurveyCache(Surveyor surveyor, LongSupplier nanoTime) {
        this.surveyor = Objects.requireNonNull(surveyor, "surveyor");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    }

    /**
     * The latest survey when it ended less than {@link #REUSE_NANOS} ago, else a new one. A survey that
     * fails leaves the previous one standing (and is not tried again before the reuse time is over).
     */
    synchronized Taken get(java.util.function.Consumer<IOException> failed) {
        if (!any || nanoTime.getAsLong() - endedNanos > REUSE_NANOS) {
            try {
                List<ShardSurvey.ShardStatus> shards = surveyor.survey();
                latest = new Taken(shards, ShardSurvey.Totals.of(shards));
            } catch (IOException e) {
                failed.accept(e);
            }
            surveys++;
            any = true;
            endedNanos = nanoTime.getAsLong();
        }
        return latest;
    }

    /** Surveys taken so far. */
    synchronized long surveys() {
        return surveys;
    }
}
