package dev.felix.offload.scrub;

import dev.felix.offload.scrub.Scrub.Anomaly;
import org.slf4j.Logger;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * What a scrub run found, taken in the entries' order (shards by name, entries by base offset) while
 * the checks themselves run several at once: a check's findings wait until every one before it was
 * taken, so a report and its log lines are the same whatever the concurrency. Used by the run's own
 * thread only.
 */
final class OrderedFindings {

    private final Logger log;
    /** Findings still being made, in the entries' order; taken from the front. */
    private final ArrayDeque<Future<EntryCheck.Findings>> pending = new ArrayDeque<>();
    private final List<Anomaly> anomalies = new ArrayList<>();
    private final Map<String, Integer> checkedBy = new TreeMap<>();
    /** Entries the store failed to answer for, told in one line at the end. */
    private int storeFailures;
    private String firstStoreFailure;

    OrderedFindings(Logger log) {
        this.log = log;
    }

    /** An anomaly found outside the entries' checks (a shard that could not be listed, an orphan). */
    void add(Anomaly anomaly) {
        anomalies.add(anomaly);
    }

    /** Findings being made, to be taken after those added before them. */
    void add(Future<EntryCheck.Findings> findings) {
        pending.add(findings);
    }

    /** Findings already made, to be taken after those added before them. */
    void add(EntryCheck.Findings findings) {
        pending.add(CompletableFuture.completedFuture(findings));
    }

    /** Takes findings from the front, waiting for them, until at most {@code waiting} are left. */
    void takeUntil(int waiting) throws InterruptedException {
        while (pending.size() > waiting) {
            take(pending.poll());
        }
    }

    /** The anomalies taken so far, in the order found; changed by later takes. */
    List<Anomaly> anomalies() {
        return anomalies;
    }

    /** Entries checked so far, by how. */
    Map<String, Integer> checkedBy() {
        return checkedBy;
    }

    /** Warns once of the entries the store failed to answer for, naming the first. */
    void logStoreFailures() {
        if (storeFailures > 0) {
            log.warn("{} {} could not be read: the store failed the requests (first: {})", storeFailures,
                    storeFailures == 1 ? "entry" : "entries", firstStoreFailure);
        }
    }

    /** Takes one entry's findings into the report, logging as a run one at a time did. */
    private void take(Future<EntryCheck.Findings> next) throws InterruptedException {
        EntryCheck.Findings f;
        try {
            f = next.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        }
        anomalies.addAll(f.first());
        if (f.checked() == null) {
            return; // an unreadable manifest, in its place in the order
        }
        EntryCheck.Checked c = f.checked();
        if (c.how() != null) {
            checkedBy.merge(c.how(), 1, Integer::sum);
        }
        if (f.checkAnomaly() != null) {
            Anomaly a = f.checkAnomaly();
            String segment = Long.toUnsignedString(a.segmentId().orElse(-1));
            if (f.storeFailed()) {
                // the store failing, not this object: one line for the pass, however many entries it meets
                if (storeFailures++ == 0) {
                    firstStoreFailure = a.shard() + ": segment " + segment + ": " + a.detail();
                }
            } else {
                log.warn("{}: segment {}: {} {}: {}", a.shard(), segment, a.kind().label(), a.key().orElse(""), a.detail());
            }
            anomalies.add(a);
        }
        if (f.local() != null) {
            Anomaly local = f.local();
            log.warn("{}: segment {}: local-mismatch at byte {}: {}", local.shard(),
                    Long.toUnsignedString(local.segmentId().orElse(-1)), local.byteAt().orElse(-1), local.detail());
            anomalies.add(local);
        }
    }
}
