package dev.felix.offload.retention;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What one retention pass did over a data root; the sums are what the daemon's metrics count.
 *
 * @param nodeId         the node id whose key prefix the sweep listed
 * @param shards         per-shard results, by directory name
 * @param deletedStreams the deleted-streams step (nothing when it was off or the pass stopped first)
 * @param orphanSweep    the orphan sweep, when it ran
 * @param stopped        true when a stop request ended the pass early
 * @param elapsed        how long the pass took
 * @param expiredEarlier what went wrong finishing the deletes an earlier pass expired ({@link ExpiryJournal})
 * @param unreadableMarkers the root's {@code .streams/} markers that could not be read, by file name,
 *                       with why: each is a failure of the pass, and its stream's shards were held to
 *                       the most conservative limits their names allow
 * @param uncertainStreams shards whose stream was not known for certain and whose limits that made
 *                       longer, by shard, with what was taken ({@link RetentionRules#resolve})
 */
public record RetentionReport(String nodeId, List<ShardRetentionResult> shards, DeletedStreamsReport deletedStreams,
                              Optional<OrphanSweepReport> orphanSweep, boolean stopped, Duration elapsed,
                              List<String> expiredEarlier, Map<String, String> unreadableMarkers,
                              Map<String, String> uncertainStreams) {

    public RetentionReport {
        shards = List.copyOf(shards);
        expiredEarlier = List.copyOf(expiredEarlier);
        unreadableMarkers = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(unreadableMarkers));
        uncertainStreams = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(uncertainStreams));
    }

    /**
     * A report without problems finishing earlier expiries, of a root whose markers were all read and
     * whose shards' streams were all known.
     */
    public RetentionReport(String nodeId, List<ShardRetentionResult> shards, DeletedStreamsReport deletedStreams,
                           Optional<OrphanSweepReport> orphanSweep, boolean stopped, Duration elapsed) {
        this(nodeId, shards, deletedStreams, orphanSweep, stopped, elapsed, List.of(), Map.of(), Map.of());
    }

    /** Where an unreadable marker's failure is filed: the marker's path under the root. */
    public static final String MARKERS = ".streams/";

    /** What the shards' passes met that an operator must look at, shard by shard. */
    public List<RetentionProblem> problems() {
        return shards.stream().flatMap(s -> s.problems().stream()).toList();
    }

    public int localSegmentsDeleted() {
        return shards.stream().mapToInt(s -> s.local().removedSegments().size()).sum();
    }

    public long localBytesDeleted() {
        return shards.stream().mapToLong(s -> s.local().removedBytes()).sum();
    }

    /** Entries expired from manifests (each a segment's copy). */
    public int remoteSegmentsDeleted() {
        return shards.stream().mapToInt(s -> s.remote().expiredSegments().size()).sum();
    }

    public long remoteBytesDeleted() {
        return shards.stream().mapToLong(s -> s.remote().expiredBytes()).sum();
    }

    /** Objects deleted for expired entries and deleted streams (orphans not counted). */
    public int remoteObjectsDeleted() {
        return shards.stream().mapToInt(s -> s.remote().objectsDeleted()).sum() + deletedStreams.objectsDeleted();
    }

    /** Objects of expired entries and deleted streams that were not theirs to delete, so stay in the store. */
    public int remoteObjectsKept() {
        return shards.stream().mapToInt(s -> s.remote().objectsKept().size()).sum() + deletedStreams.objectsKept();
    }

    public int orphansFound() {
        return orphanSweep.map(OrphanSweepReport::foundCount).orElse(0);
    }

    public int orphansDeleted() {
        return orphanSweep.map(OrphanSweepReport::deletedCount).orElse(0);
    }

    public int deletedStreamDirectoriesFinished() {
        return deletedStreams.directoriesFinished().size();
    }

    /** One failure of a pass: what kind of place it happened in, that place's name, and what happened. */
    public record Failure(Site site, String where, String why) {

        /** The kinds of place a retention pass fails in. */
        public enum Site {
            /** A {@code .streams} marker that could not be read ({@code .streams/<file>}). */
            STREAM_MARKER,
            /** A shard's own retention; {@code where} is its directory name. */
            SHARD,
            /** A deleted stream's shard ({@code .deleted/<name>}). */
            DELETED_SHARD,
            /** Deletes an earlier pass expired that failed again ({@code offload.expiring}). */
            EXPIRY_JOURNAL,
            /** The orphan sweep itself ({@code orphan-sweep}). */
            ORPHAN_SWEEP,
            /** A shard the sweep held as missing or with unrecorded history ({@code orphan-sweep/<shard>}). */
            HELD_BY_SWEEP
        }
    }

    /** Every failure, in the order the pass met them. */
    public List<Failure> failureList() {
        List<Failure> out = new ArrayList<>();
        unreadableMarkers.forEach((file, why) -> out.add(new Failure(Failure.Site.STREAM_MARKER, MARKERS + file, why
                + "; the shards of its stream were held to the longest limits their names allow")));
        for (ShardRetentionResult s : shards) {
            List<String> why = new ArrayList<>();
            if (s.failed()) {
                why.add(s.failure());
            }
            s.problems().forEach(p -> why.add(p.describe()));
            if (!why.isEmpty()) {
                out.add(new Failure(Failure.Site.SHARD, s.shard(), String.join("; ", why)));
            }
        }
        deletedStreams.failures().forEach((name, why) -> out.add(new Failure(Failure.Site.DELETED_SHARD, ".deleted/" + name, why)));
        if (!expiredEarlier.isEmpty()) {
            out.add(new Failure(Failure.Site.EXPIRY_JOURNAL, ExpiryJournal.FILE_NAME, String.join("; ", expiredEarlier)));
        }
        orphanSweep.ifPresent(o -> {
            if (!o.problems().isEmpty()) {
                out.add(new Failure(Failure.Site.ORPHAN_SWEEP, "orphan-sweep", String.join("; ", o.problems())));
            }
            for (HeldShard h : o.held()) {
                // An unreadable shard is among the problems already; the others need an operator too.
                if (h.reason() != HeldShard.Reason.UNREADABLE) {
                    out.add(new Failure(Failure.Site.HELD_BY_SWEEP, "orphan-sweep/" + h.shard(), h.describe()));
                }
            }
        });
        return out;
    }

    /**
     * Every failure by where it happened (as {@link #failureList} names them): a shard's directory
     * name, {@code .deleted/<name>}, {@code offload.expiring}, {@code orphan-sweep} and
     * {@code orphan-sweep/<shard>}.
     */
    public Map<String, String> failures() {
        Map<String, String> out = new LinkedHashMap<>();
        failureList().forEach(f -> out.put(f.where(), f.why()));
        return out;
    }

    /** True when nothing failed (a stop is not a failure). */
    public boolean succeeded() {
        return failures().isEmpty();
    }
}
