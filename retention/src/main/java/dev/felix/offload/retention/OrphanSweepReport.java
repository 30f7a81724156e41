package dev.felix.offload.retention;

import java.util.List;

/**
 * What an orphan sweep found and did.
 *
 * @param prefix   the node's key prefix that was listed
 * @param dryRun   true when nothing was deleted on purpose
 * @param found    orphans: segment and index keys under the prefix that no manifest names
 * @param eligible the orphans past their grace period: deleted, or in a dry run, what would be
 * @param deleted  the orphans deleted
 * @param waiting  the orphans still within their grace period
 * @param ignored  keys under the prefix that are neither segment nor index keys; never deleted
 * @param problems what limited the sweep: unreadable manifests (whose shards' keys were left
 *                 alone), a refusal to delete, a store failure
 * @param abortedUploads keys of multipart uploads left incomplete (a killed upload) that were aborted
 * @param held     shards whose unnamed keys were kept, one each (missing, unreadable, unrecorded history);
 *                 their keys are in none of the lists above
 * @param sweep    how the keys were found: a full listing of the prefix (and why), or the journal's keys
 */
public record OrphanSweepReport(String prefix, boolean dryRun, List<String> found, List<String> eligible,
                                List<String> deleted, List<String> waiting, List<String> ignored,
                                List<String> problems, List<String> abortedUploads, List<HeldShard> held,
                                String sweep) {

    public OrphanSweepReport {
        sweep = sweep == null ? "" : sweep;
        found = List.copyOf(found);
        eligible = List.copyOf(eligible);
        deleted = List.copyOf(deleted);
        waiting = List.copyOf(waiting);
        ignored = List.copyOf(ignored);
        problems = List.copyOf(problems);
        abortedUploads = List.copyOf(abortedUploads);
        held = List.copyOf(held);
    }

    /** A report without held shards (a sweep whose listing failed, say). */
    public OrphanSweepReport(String prefix, boolean dryRun, List<String> found, List<String> eligible,
                             List<String> deleted, List<String> waiting, List<String> ignored,
                             List<String> problems, List<String> abortedUploads) {
        this(prefix, dryRun, found, eligible, deleted, waiting, ignored, problems, abortedUploads, List.of(), "");
    }

    /** A report that does not say how the keys were found. */
    public OrphanSweepReport(String prefix, boolean dryRun, List<String> found, List<String> eligible,
                             List<String> deleted, List<String> waiting, List<String> ignored,
                             List<String> problems, List<String> abortedUploads, List<HeldShard> held) {
        this(prefix, dryRun, found, eligible, deleted, waiting, ignored, problems, abortedUploads, held, "");
    }

    public int foundCount() {
        return found.size();
    }

    public int deletedCount() {
        return deleted.size();
    }
}
