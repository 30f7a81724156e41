package dev.felix.offload.daemon;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.QuietShards;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.ShardStop;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.retention.FullSweep;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.retention.RetentionPass;
import dev.felix.offload.retention.RetentionProblem;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.retention.RootHandover;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.schedule.DataRootGuard;
import dev.felix.offload.schedule.Pass;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.schedule.PassListener;
import dev.felix.offload.schedule.PassOutcome;
import dev.felix.offload.schedule.PassScheduler;
import dev.felix.offload.schedule.Schedule;
import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.scrub.ScrubProgressFile;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static dev.felix.offload.daemon.PassNames.OFFLOAD;
import static dev.felix.offload.daemon.PassNames.RETENTION;
import static dev.felix.offload.daemon.PassNames.SCRUB;

/**
 * The daemon's offload, retention and scrub passes on their cron schedules: each run over a unit of
 * the metered store (whose calls tell the {@link StoreHealth} what they found), never two of them over
 * the data root at once (one {@link DataRootGuard}), though a retention pass hands the root over
 * between two shards whenever another pass waits for it ({@link RootHandover}), so an offload run
 * never waits for a whole retention pass, only for the shard (or the orphan sweep) it is at; and what
 * each last said: its findings (at most
 * {@value #MAX_PROBLEMS} problems kept), when it last ended without problems, and per shard the last
 * thing it did there. An offload that copied anything asks for a retention run, so that local
 * retention can let the new copies' local files go.
 */
final class ScheduledPasses {

    /** The daemon's logger: an operator reads the passes' lines as the daemon's. */
    private static final Logger LOG = DaemonLog.LOG;
    /** The most problems one pass result keeps. */
    private static final int MAX_PROBLEMS = 20;

    /** The last thing a pass did to a shard. */
    record ShardNote(Instant at, String result, boolean ok) {
    }

    /** What the passes tell the daemon beyond their findings. */
    interface Listener {
        /** A pass found that this root may no longer write to the store; no pass can do anything now. */
        void refused(NodeClaimCheck.RefusedException e);

        /** A scrub run went through every entry: its findings now say what the store holds for each. */
        void scrubbed();

        /** A pass uploaded, unlinked or deleted something: what the root holds changed. */
        void changed();
    }

    private final DaemonConfig config;
    private final DataRoot root;
    private final Map<String, String> env;
    private final MeteredStore store;
    private final DaemonMetrics metrics;
    private final StoreProbe probe;
    private final PassClock clock;
    private final Listener listener;
    private final DataRootGuard guard = new DataRootGuard();
    /** Retention lets a waiting offload (or scrub's orphan listing) have the root between its shards. */
    private final RootHandover handover = new RootHandover() {
        @Override
        public boolean wanted() {
            return guard.othersWaiting();
        }

        @Override
        public boolean handOver(StopSignal stop) throws InterruptedException {
            LOG.debug("retention pass hands the data root over to a waiting pass");
            return guard.handOver(stop);
        }
    };
    /** The shards the last offload pass found with nothing to do (see {@link QuietShards}). */
    private final QuietShards quietShards = new QuietShards();
    /**
     * Scheduled scrub runs so far (which share of objects the next one reads in full) and where the
     * next starts (where the last one's request budget ran out, else the first entry): kept in the
     * root's {@link ScrubProgressFile}, so a restart goes on from there. Without that file, the runs
     * count from a random start, so restarts do not always read the same share.
     */
    private final ScrubProgressFile scrubProgress;
    private final AtomicLong scrubRuns;
    private final java.util.concurrent.atomic.AtomicReference<java.util.Optional<Scrub.Cursor>> scrubStart;
    /** Each pass's latest findings: a run that threw or found nothing to say leaves the previous ones. */
    private final Map<String, PassOutcome.Findings> results = new ConcurrentHashMap<>();
    private final Map<String, ShardNote> offloadNotes = new ConcurrentHashMap<>();
    private final Map<String, ShardNote> retentionNotes = new ConcurrentHashMap<>();
    private final Map<String, Instant> lastSuccess = new ConcurrentHashMap<>();
    private final PassScheduler scheduler;

    /**
     * @param env the environment the passes resolve the node id in (see {@link DaemonConfig#environment})
     */
    ScheduledPasses(DaemonConfig config, DataRoot root, Map<String, String> env, MeteredStore store,
            DaemonMetrics metrics, StoreProbe probe, PassClock clock, Listener listener) {
        this.config = config;
        this.root = root;
        this.env = env;
        this.store = store;
        this.metrics = metrics;
        this.probe = probe;
        this.clock = clock;
        this.listener = listener;
        this.scrubProgress = new ScrubProgressFile(root);
        java.util.Optional<ScrubProgressFile.Progress> kept = scrubProgress.load();
        this.scrubRuns = new AtomicLong(kept.map(ScrubProgressFile.Progress::runs)
                .orElseGet(() -> (long) ThreadLocalRandom.current().nextInt(1 << 20)));
        this.scrubStart = new java.util.concurrent.atomic.AtomicReference<>(
                kept.flatMap(ScrubProgressFile.Progress::resumeAt));
        PassScheduler.Builder b = PassScheduler.builder(clock).listener(new PassListener() {
            @Override
            public void finished(PassOutcome outcome) {
                metrics.passFinished(outcome);
                if (outcome.findings() != null) {
                    results.put(outcome.pass(), outcome.findings());
                }
                if (outcome.succeeded()) {
                    PassOutcome.Findings r = results.get(outcome.pass());
                    if (r == null || r.ok()) {
                        lastSuccess.put(outcome.pass(), outcome.finished());
                    }
                }
            }
        });
        add(b, OFFLOAD, config.offloadSchedule, namingTheStore(this::offload));
        add(b, RETENTION, config.retentionSchedule, namingTheStore(this::retention));
        add(b, SCRUB, config.scrubSchedule, namingTheStore(this::scrub));
        this.scheduler = b.build();
    }

    private static void add(PassScheduler.Builder b, String name, Optional<Schedule> schedule, Pass pass) {
        schedule.ifPresent(s -> b.pass(name, s, pass));
    }

    /**
     * A pass that fails on a store call says which store: its one log line and {@code /health} then
     * name the pass, the store and the cause.
     */
    private Pass namingTheStore(Pass pass) {
        return stop -> {
            try {
                return pass.run(stop);
            } catch (StoreException e) {
                throw new StoreCallFailedException(StoreProbe.shortName(store.describe()), e);
            }
        };
    }

    /** A store call a pass could not do without; the message names the store. */
    static final class StoreCallFailedException extends IOException {
        private static final long serialVersionUID = 1L;

        StoreCallFailedException(String store, StoreException cause) {
            super("store " + store + ": " + cause.getMessage(), cause);
        }
    }

    /** Whether a pass waits for the data root now. */
    boolean rootWanted() {
        return guard.othersWaiting();
    }

    PassScheduler scheduler() {
        return scheduler;
    }

    /** The latest findings of {@code pass}: empty before its first run that had something to say. */
    Optional<PassOutcome.Findings> findings(String pass) {
        return Optional.ofNullable(results.get(pass));
    }

    /** When each pass last ended without problems (a pass that never did is absent). */
    Map<String, Instant> lastSuccess() {
        return lastSuccess;
    }

    ShardNote lastOffload(String shard) {
        return offloadNotes.get(shard);
    }

    ShardNote lastRetention(String shard) {
        return retentionNotes.get(shard);
    }

    /** Runs {@code pass} as soon as it is idle (tests and operators); false when it is off or stopping. */
    boolean requestRun(String pass) {
        return scheduler.passNames().contains(pass) && scheduler.requestRun(pass);
    }

    /** The part of a pass that runs with the data root held. */
    @FunctionalInterface
    private interface HeldWork<R> {
        R run() throws Exception;
    }

    /**
     * Runs {@code work} with the data root held, ends the store's unit of work, and answers what
     * {@code then} makes of its report. Null when the root was not held (a stop came first); a refused
     * node claim ends the daemon ({@link Listener#refused}) and is the pass's findings.
     */
    private <R> PassOutcome.Findings underGuard(StopSignal stop, MeteredStore unit, HeldWork<R> work,
            java.util.function.Function<R, PassOutcome.Findings> then) throws Exception {
        R report;
        try (DataRootGuard.Held held = guard.hold(stop)) {
            if (held == null) {
                return null;
            }
            try {
                report = work.run();
            } catch (NodeClaimCheck.RefusedException e) {
                listener.refused(e); // the daemon ends; the refusal is its one line, no trace
                return new PassOutcome.Findings("refused", List.of(e.getMessage()));
            }
        } finally {
            unit.endUnit();
        }
        return then.apply(report);
    }

    private PassOutcome.Findings offload(StopSignal stop) throws Exception {
        probe.require();
        OffloadSettings settings = config.offloadSettings().withAwaitSettle(false); // the next pass takes up what settles
        MeteredStore unit = store.unit();
        return underGuard(stop, unit, () -> new OffloadPass(root, unit, settings, StepHook.haltAtSystemProperty(), env,
                        ReplicaCommit::of).checkingClaim(StoreProbe.claimPolicy(config, false)).remembering(quietShards)
                        .run(ProgressListener.none(), stop::stopRequested),
                report -> offloaded(report, stop));
    }

    /** What an offload pass's report makes of the shards' notes, the metrics and the pass's findings. */
    private PassOutcome.Findings offloaded(PassReport report, StopSignal stop) {
        metrics.offloaded(report);
        Instant now = clock.now();
        List<String> problems = new ArrayList<>();
        for (ShardResult s : report.shards()) {
            boolean stopped = s.stop() instanceof ShardStop.Requested;
            String result = s.problem() == null
                    ? s.uploaded().size() + " uploaded, " + s.unlinked().size() + " unlinked, " + s.pending() + " pending"
                    : stopped ? "stopped: " + s.uploaded().size() + " uploaded before the stop" : s.problem();
            offloadNotes.put(s.shard(), new ShardNote(now, result, s.problem() == null || stopped));
            if (s.problem() != null && !stopped) {
                problems.add(s.shard() + ": " + s.problem());
            }
        }
        for (String u : report.unreadable()) {
            problems.add(u + " (not offloaded, could not be read)");
        }
        String summary = report.segmentsUploaded() + " segments (" + report.bytesUploaded() + " bytes) offloaded from "
                + report.shards().size() + " shards in " + report.elapsed().toMillis() + " ms";
        PassOutcome.Findings found = finish(OFFLOAD, summary, problems);
        if (report.segmentsUploaded() > 0 || report.segmentsUnlinked() > 0) {
            listener.changed();
        }
        if (report.segmentsUploaded() > 0 && !stop.stopRequested()) {
            requestRun(RETENTION); // local retention can let the new copies' local files go now
        }
        return found;
    }

    private PassOutcome.Findings retention(StopSignal stop) throws Exception {
        probe.require();
        MeteredStore unit = store.unit();
        RetentionPass pass = new RetentionPass(root, unit, config.rules, config.retentionPassSettings(),
                Clock.systemUTC(), env, RetentionHook.none()).checkingClaim(StoreProbe.claimPolicy(config, false))
                .handingOverTo(handover);
        // a full orphan listing, when one is due, is made before the root is held: offload runs beside it
        FullSweep.Listing listed;
        try {
            listed = pass.prelist(stop);
        } catch (RuntimeException | IOException e) {
            unit.endUnit();
            throw e;
        }
        return underGuard(stop, unit, () -> pass.run(stop, listed), this::retained);
    }

    /** What a retention pass's report makes of the shards' notes, the metrics and the pass's findings. */
    private PassOutcome.Findings retained(RetentionReport report) {
        metrics.retained(report);
        Instant now = clock.now();
        report.shards().forEach(s -> retentionNotes.put(s.shard(), new ShardNote(now, s.failed() ? s.failure()
                : s.local().removedSegments().size() + " local and " + s.remote().expiredSegments().size()
                + " remote segments removed" + (s.problems().isEmpty() ? "" : "; " + s.problems().stream()
                .map(RetentionProblem::describe).collect(Collectors.joining("; "))), !s.failed() && s.problems().isEmpty())));
        List<String> problems = new ArrayList<>();
        report.failures().forEach((where, why) -> problems.add(where + ": " + why));
        String summary = report.localSegmentsDeleted() + " local and " + report.remoteSegmentsDeleted()
                + " remote segments removed, " + report.orphansFound() + " orphans found, " + report.orphansDeleted()
                + " deleted";
        if (report.localSegmentsDeleted() > 0 || report.remoteSegmentsDeleted() > 0
                || report.deletedStreamDirectoriesFinished() > 0) {
            listener.changed();
        }
        return finish(RETENTION, summary, problems);
    }

    private PassOutcome.Findings scrub(StopSignal stop) throws Exception {
        probe.require();
        // A rotating share is read in full behind the server's checksum, so every object is read within
        // scrub.full-read-runs runs; the share's start is random, so restarts do not always read the same.
        Scrub.Share share = Scrub.Share.ofRun(scrubRuns.getAndIncrement(), config.scrubFullReadRuns);
        Scrub.Report report;
        MeteredStore unit = store.unit();
        try {
            report = new Scrub(root, unit, env, config.scrubReadBandwidth, Clock.systemUTC(), share,
                    new Scrub.Limits(config.scrubConcurrency, config.scrubRequestBudget, scrubStart.get())).run(stop, guard);
        } finally {
            unit.endUnit();
        }
        if (!stop.stopRequested()) {
            listener.scrubbed(); // scrub's own findings say now what the store holds for each entry
        }
        if (!report.stopped()) {
            scrubStart.set(report.resumeAt()); // the next run goes on where this one's budget ran out
            scrubProgress.save(new ScrubProgressFile.Progress(scrubRuns.get(), report.resumeAt()));
        }
        metrics.scrubbed(report);
        List<String> problems = new ArrayList<>();
        // Orphans are the sweep's to delete once their grace period is over; only when nothing will
        // sweep them do they make the daemon degraded.
        boolean swept = config.retentionSchedule.isPresent() && config.sweepOrphans && !config.orphanDryRun;
        for (Scrub.Anomaly a : report.anomalies()) {
            if (swept && a.kind() == Scrub.Kind.ORPHAN) {
                continue;
            }
            problems.add(a.kind().label() + " " + a.key().orElse(a.shard()) + ": " + a.detail());
        }
        return finish(SCRUB, report.entriesChecked() + " entries checked" + (report.budgetSpent() ? " of "
                + report.entriesTotal() : "") + ", " + report.anomalies().size()
                + " anomalies" + (report.notes().isEmpty() ? "" : "; " + String.join("; ", report.notes())), problems);
    }

    private static PassOutcome.Findings finish(String pass, String summary, List<String> problems) {
        List<String> kept = problems.size() > MAX_PROBLEMS ? new ArrayList<>(problems.subList(0, MAX_PROBLEMS)) : problems;
        if (problems.size() > MAX_PROBLEMS) {
            kept.add((problems.size() - MAX_PROBLEMS) + " more");
        }
        PassOutcome.Findings found = new PassOutcome.Findings(summary, kept);
        if (problems.isEmpty()) {
            LOG.info("{} pass: {}", pass, summary);
        } else {
            LOG.warn("{} pass: {}; {} problems, first: {}", pass, summary, problems.size(), problems.get(0));
        }
        return found;
    }
}
