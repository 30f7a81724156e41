package dev.felix.offload.reliability;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.retention.OrphanSweepReport;
import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.OffloadStep;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.pass.StepHook;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Kills the real {@code felix-offload offload} process over and over, over small data roots a
 * writer keeps appending to (as the broker does beside it), and checks {@link Invariants} after
 * every kill, after every restarted pass that runs to completion, and after orphan sweeps.
 *
 * <p>A cycle: the writer appends (then keeps appending while the process runs); the process starts
 * with a kill planned for it, either a halt at a named {@link OffloadStep}
 * ({@code -Dfelix.offload.haltAt=STEP}, {@code Runtime.halt(137)}) or a SIGKILL
 * ({@code destroyForcibly}) after a seeded random delay, counted from the process start or from
 * the moment it holds the root lock (its pass has begun); the writer stops; the invariants are
 * checked on what the kill left; every third cycle that left orphans, the orphan sweep removes them
 * first; then the process starts again without a kill and its pass must complete (exit 0), and the
 * invariants, plus "every sealed segment is recorded" and local retention, are checked again. Each
 * root ends with an orphan sweep (nothing unnamed may remain), {@code read --json} of every offset
 * of one shard and {@code fsck}: the commands as the tool runs them, inside the test JVM
 * ({@link Felix#inside}), since what they look at is what the kills left on disk and in the store, not
 * a process of their own.
 */
final class CrashCampaign {

    /** Local retention the passes run with: the active segment and the two newest sealed ones stay. */
    static final int KEEP_LOCAL_SEGMENTS = 3;

    private static final Duration PROCESS_TIMEOUT = Duration.ofMinutes(2);
    /** How long a daemon gets to reach the step it is to halt at. */
    private static final Duration DAEMON_HALT_WAIT = Duration.ofSeconds(60);
    /** A daemon is killed at a random moment this long at most after it said it serves: a few passes of each kind. */
    private static final Duration DAEMON_KILL_WINDOW = Duration.ofMillis(3500);
    private static final Pattern OFFSET = Pattern.compile("\"offset\":(\\d+)");
    private static final Pattern PAYLOAD = Pattern.compile("\"payload_base64\":\"([^\"]*)\"");

    /** How one planned kill is delivered. */
    sealed interface Kill permits Halt, RandomKill {
    }

    /** Halt at the first time any segment reaches the step. */
    record Halt(OffloadStep step) implements Kill {
    }

    /** SIGKILL after a random delay; {@code inPass}: counted from the moment the pass holds the root lock. */
    record RandomKill(boolean inPass) implements Kill {
    }

    /** Counts of one campaign, for the report. */
    static final class Stats {
        final Map<OffloadStep, Integer> halts = new EnumMap<>(OffloadStep.class);
        int randomKills;
        int randomKillsInPass;
        int randomKillsBeforePass;
        int finishedBeforeKill;
        int haltNotReached;
        int completions;
        int completionsInProcess;
        int roots;
        int cycles;
        int orphansSeen;
        int sweptEarly;
        int sweptAtEnd;
        int readCommandRecords;
        long remoteRecordsChecked;
        long localRecordsChecked;
        int invariantChecks;
        long millis;
        final List<String> reservedLeftovers = new ArrayList<>();
        long killRunMillis;
        long completionMillis;
        long checkMillis;
        boolean deadlineHit;

        int kills() {
            return randomKills + halts.values().stream().mapToInt(Integer::intValue).sum();
        }

        @Override
        public String toString() {
            return String.format("%d kills (%d halts at steps %s; %d random SIGKILLs: %d inside the pass (for the daemon: "
                            + "once it served), %d before it held the lock), %d runs finished before their kill, %d halts not reached, %d passes "
                            + "restarted to completion by the process (%d more in the test JVM), %d invariant checks (%d local and %d remote record reads), "
                            + "%d orphans seen, %d swept right after a kill, %d swept at root end, %d records read "
                            + "back through `read`, %d roots, %d cycles, %.1f s%s",
                    kills(), halts.values().stream().mapToInt(Integer::intValue).sum(), halts, randomKills,
                    randomKillsInPass, randomKillsBeforePass, finishedBeforeKill, haltNotReached, completions,
                    completionsInProcess, invariantChecks, localRecordsChecked, remoteRecordsChecked, orphansSeen, sweptEarly, sweptAtEnd,
                    readCommandRecords, roots, cycles, millis / 1000.0, deadlineHit ? " (DEADLINE HIT)" : "")
                    + String.format(" [kill runs %.1f s, completions %.1f s, checks %.1f s]", killRunMillis / 1000.0,
                    completionMillis / 1000.0, checkMillis / 1000.0)
                    + "; left under the stores' reserved prefix at the roots' ends (hidden from listings and the sweep; "
                    + "a later probe deletes probe objects over an hour old, a store opened a day later staging files): "
                    + (reservedLeftovers.isEmpty() ? "nothing" : reservedLeftovers.size() + " objects, e.g. "
                    + reservedLeftovers.get(0));
        }
    }

    private final String name;
    private final Path work;
    private final Function<Path, StoreTarget> targets;
    private final int kills;
    private final int killsPerRoot;
    private final int realRestartEvery;
    /** Kill the daemon ({@code run --config}) instead of the one-shot {@code offload}. */
    private final boolean daemon;
    private final Duration budget;
    private final SplittableRandom random;
    private final Stats stats = new Stats();
    /** Estimates, from runs that ended by themselves: whole run, and pass (lock to exit), in ms. */
    private double runMillis = 900;
    private double passMillis = 250;

    /**
     * @param realRestartEvery the pass after a kill runs to completion in a new process every this many
     *                         cycles, and in the test JVM (the same {@code OffloadPass}, as the command
     *                         builds it) otherwise; the next cycle's process always starts over what the
     *                         kill left, so every kill is followed by a real restart either way
     */
    CrashCampaign(String name, Path work, Function<Path, StoreTarget> targets, int kills, int killsPerRoot,
                  int realRestartEvery, Duration budget, long seed, boolean daemon) {
        this.name = name;
        this.work = work;
        this.targets = targets;
        this.kills = kills;
        this.killsPerRoot = killsPerRoot;
        this.realRestartEvery = Math.max(1, realRestartEvery);
        this.daemon = daemon;
        this.budget = budget;
        this.random = new SplittableRandom(seed);
    }

    /** The kill plan: every step a share of the kills, the rest random, shuffled. */
    private Deque<Kill> plan() {
        List<Kill> plan = new ArrayList<>();
        // The daemon's offload pass never unlinks (its retention pass does), so it never reaches UNLINKED.
        OffloadStep[] steps = daemon ? java.util.Arrays.stream(OffloadStep.values())
                .filter(st -> st != OffloadStep.UNLINKED).toArray(OffloadStep[]::new) : OffloadStep.values();
        int perStep = Math.max(1, (int) Math.round(kills * 0.35 / steps.length));
        for (int i = 0; i < perStep; i++) {
            for (OffloadStep s : steps) {
                plan.add(new Halt(s));
            }
        }
        while (plan.size() < kills) {
            plan.add(new RandomKill(random.nextInt(5) != 0));
        }
        Collections.shuffle(plan, new java.util.Random(random.nextLong()));
        return new ArrayDeque<>(plan);
    }

    Stats run() throws Exception {
        long started = System.nanoTime();
        long deadline = started + budget.toNanos();
        Deque<Kill> plan = plan();
        int attempts = 0;
        int maxAttempts = kills * 3;
        while (!plan.isEmpty() && attempts < maxAttempts) {
            if (System.nanoTime() > deadline) {
                stats.deadlineHit = true;
                break;
            }
            stats.roots++;
            Path rootDir = work.resolve(name + "-root-" + stats.roots);
            deleteTree(rootDir); // left by an earlier run that failed
            Files.createDirectories(rootDir);
            RootRun root = new RootRun(rootDir, targets.apply(rootDir.resolve("store")));
            try {
                int cyclesHere = 0;
                while (!plan.isEmpty() && cyclesHere < killsPerRoot && attempts < maxAttempts) {
                    if (System.nanoTime() > deadline) {
                        stats.deadlineHit = true;
                        break;
                    }
                    Kill kill = plan.poll();
                    attempts++;
                    cyclesHere++;
                    if (!root.cycle(kill)) {
                        plan.add(kill instanceof Halt ? kill : new RandomKill(random.nextInt(5) != 0));
                    }
                }
                root.finish();
            } finally {
                root.close();
            }
            deleteTree(rootDir);
        }
        stats.millis = (System.nanoTime() - started) / 1_000_000;
        return stats;
    }

    /** One data root, its writers and its store. */
    private final class RootRun implements AutoCloseable {
        final Path root;
        final StoreTarget target;
        final ObjectStore store;
        final List<ShardWriter> shards = new ArrayList<>();
        final Invariants invariants;
        final Path config;
        int cycle;

        RootRun(Path dir, StoreTarget target) throws Exception {
            this.root = Files.createDirectories(dir.resolve("data"));
            this.target = target;
            this.store = target.open();
            // One shard at each level that holds stream shards: the top, groups/ and dead-letters/.
            List<String> containers = List.of("", DataRoot.GROUPS_DIR, DataRoot.DEAD_LETTERS_DIR);
            for (int s = 0; s < 3; s++) {
                ShardKey key = new ShardKey("acme", "crash", "stream-" + s, 0);
                shards.add(new ShardWriter(root, containers.get(s), key, 12 * 1024, 400, random.nextLong()));
            }
            for (ShardWriter w : shards) {
                w.open();
                w.append(120);
                w.close();
            }
            // Empty sealed segments in the middle of two shards' logs, which must not hold local retention back.
            for (ShardWriter w : shards.subList(1, 3)) {
                w.leaveEmptySealedSegment();
                w.open();
                w.append(60);
                w.close();
            }
            this.invariants = new Invariants(root, shards, store);
            // The daemon runs every pass each second; local retention leaves about three segments a shard,
            // and the orphan sweep deletes what it finds at once (it runs under the root lock).
            this.config = root.getParent().resolve("felix.yaml");
            Files.writeString(config, String.join("\n",
                    "data-dir: " + root,
                    "store: " + target.uri(),
                    "offload.schedule: '* * * * * ?'",
                    "retention.schedule: '* * * * * ?'",
                    "scrub.schedule: 'off'",
                    "local.retention.bytes: 40KiB",
                    "orphans.grace: 0s",
                    "offload.unlink-settle: 300ms",
                    "http.port: 0",
                    "shutdown.grace: 5s",
                    "log.level: warn",
                    ""), StandardCharsets.UTF_8);
        }

        /** One planned kill, the checks after it and a pass restarted to completion; false if no kill happened. */
        boolean cycle(Kill kill) throws Exception {
            cycle++;
            stats.cycles++;
            for (ShardWriter w : shards) {
                if (w != shards.get(0) && random.nextInt(4) == 0) {
                    w.leaveEmptySealedSegment(); // now and then, a broker's roll of an empty active segment
                }
                w.open();
                w.append(20 + random.nextInt(40));
            }
            AtomicBoolean stop = new AtomicBoolean();
            int cap = 60;
            Thread writer = new Thread(() -> keepWriting(stop, cap), "broker-writer");
            List<String> jvm = kill instanceof Halt h
                    ? List.of("-D" + StepHook.HALT_PROPERTY + "=" + h.step().name()) : List.of();
            Felix.Result result;
            boolean lockSeen = false;
            long lockAtNanos = 0;
            String what = name + " root " + stats.roots + " cycle " + cycle + " " + kill;
            writer.start();
            long runStart = System.nanoTime();
            boolean notReached = false;
            List<String> args = daemon ? List.of("run", "--config", config.toString()) : offloadArgs();
            try (Felix.Running p = Felix.start(root.getParent(), target.env(), jvm, false, args)) {
                if (daemon) {
                    if (kill instanceof Halt) {
                        // It halts itself in its first offload pass; one that never reaches the step runs on.
                        if (!p.process.waitFor(DAEMON_HALT_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                            p.kill();
                            notReached = true;
                        }
                    } else {
                        lockSeen = awaitServing(p);
                        sleepUntil(p, System.nanoTime() + (long) (random.nextDouble() * DAEMON_KILL_WINDOW.toNanos()));
                        if (p.process.isAlive()) {
                            p.kill();
                        }
                    }
                } else if (kill instanceof RandomKill rk) {
                    long delayNanos;
                    if (rk.inPass()) {
                        lockAtNanos = awaitLock(p);
                        lockSeen = lockAtNanos > 0;
                        delayNanos = (long) (random.nextDouble() * passMillis * 1.2 * 1_000_000);
                        sleepUntil(p, (lockSeen ? lockAtNanos : System.nanoTime()) + delayNanos);
                    } else {
                        delayNanos = (long) (random.nextDouble() * runMillis * 1_000_000);
                        sleepUntil(p, p.startedNanos + delayNanos);
                        lockSeen = holdsLock(p);
                    }
                    if (p.process.isAlive()) {
                        p.kill();
                    }
                }
                result = p.await(PROCESS_TIMEOUT, what);
            } finally {
                stop.set(true);
                writer.join(60_000);
                for (ShardWriter w : shards) {
                    w.close();
                }
            }
            stats.killRunMillis += (System.nanoTime() - runStart) / 1_000_000;
            boolean killed = result.exit() == Felix.KILLED && !notReached;
            if (daemon && result.exit() != Felix.KILLED) {
                throw new AssertionError(what + ": the daemon ended by itself: " + result.describe());
            }
            if (kill instanceof Halt h) {
                if (killed) {
                    if (!result.err().contains("halting at " + h.step())) {
                        throw new AssertionError(what + ": exit 137 without the halt message: " + result.describe());
                    }
                    stats.halts.merge(h.step(), 1, Integer::sum);
                } else {
                    stats.haltNotReached++;
                    if (!daemon) {
                        requireOrdinaryExit(result, what);
                    }
                }
            } else {
                if (killed) {
                    stats.randomKills++;
                    if (lockSeen) {
                        stats.randomKillsInPass++;
                    } else {
                        stats.randomKillsBeforePass++;
                    }
                } else {
                    stats.finishedBeforeKill++;
                    requireOrdinaryExit(result, what);
                    learn(lockAtNanos, result.took().toNanos());
                }
            }

            Invariants.Seen seen = check("after " + what + " (" + (killed ? "killed" : "exit " + result.exit()) + ")");
            if (seen.orphans() > 0) {
                stats.orphansSeen += seen.orphans();
                if (cycle % 3 == 0) {
                    stats.sweptEarly += sweep(what).deletedCount();
                    if (!Invariants.unnamed(root, shards, store).isEmpty()) {
                        throw new AssertionError(what + ": the sweep left unnamed objects: "
                                + Invariants.unnamed(root, shards, store));
                    }
                    check("after the orphan sweep following " + what);
                }
            }
            complete("restart after " + what);
            return killed;
        }

        /** Appends while the process runs, a record every millisecond or so, at most {@code cap} per shard. */
        private void keepWriting(AtomicBoolean stop, int cap) {
            try {
                int written = 0;
                while (!stop.get() && written < cap) {
                    for (ShardWriter w : shards) {
                        written += w.appendSome();
                    }
                    Thread.sleep(1);
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private List<String> offloadArgs() {
            // Entries settle for 300 ms (5 s by default): no broker rewrites the manifest here, and the
            // campaign's hundreds of passes each wait that long before they unlink.
            return List.of("offload", "--data-dir", root.toString(), "--store", target.uri(), "--json",
                    "--keep-local-segments", Integer.toString(KEEP_LOCAL_SEGMENTS), "--unlink-settle", "300ms");
        }

        /** Waits until the daemon says it serves; true if it did before it ended. */
        private boolean awaitServing(Felix.Running p) throws InterruptedException, IOException {
            long limit = System.nanoTime() + PROCESS_TIMEOUT.toNanos();
            while (p.process.isAlive() && System.nanoTime() < limit) {
                if (Files.exists(p.out) && Files.readString(p.out, StandardCharsets.UTF_8).contains("serving")) {
                    return true;
                }
                Thread.sleep(5);
            }
            return false;
        }

        /** The pid in the root lock, once the process's pass holds it; 0 if it never did. */
        private long awaitLock(Felix.Running p) throws InterruptedException {
            long limit = System.nanoTime() + PROCESS_TIMEOUT.toNanos();
            while (p.process.isAlive() && System.nanoTime() < limit) {
                if (holdsLock(p)) {
                    return System.nanoTime();
                }
                Thread.sleep(1);
            }
            return 0;
        }

        private boolean holdsLock(Felix.Running p) {
            try {
                String pid = Files.readString(root.resolve(RootLock.FILE_NAME), StandardCharsets.US_ASCII).trim();
                return pid.equals(Long.toString(p.process.pid()));
            } catch (IOException e) {
                return false;
            }
        }

        private void sleepUntil(Felix.Running p, long atNanos) throws InterruptedException {
            while (p.process.isAlive()) {
                long left = atNanos - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                Thread.sleep(Math.min(left / 1_000_000, 5), (int) Math.min(left % 1_000_000, 999_999));
            }
        }

        private void requireOrdinaryExit(Felix.Result r, String what) {
            // A pass that raced the writer's roll may report the shard incomplete (exit 1); anything else is wrong.
            if (r.exit() != 0 && r.exit() != 1) {
                throw new AssertionError(what + ": unexpected exit: " + r.describe());
            }
        }

        private Invariants.Seen check(String when) throws IOException, StoreException {
            long t0 = System.nanoTime();
            Invariants.Seen seen = invariants.check(when);
            stats.checkMillis += (System.nanoTime() - t0) / 1_000_000;
            stats.invariantChecks++;
            stats.localRecordsChecked += seen.localRecords();
            stats.remoteRecordsChecked += seen.remoteRecords();
            return seen;
        }

        /** Starts the process again with no kill: its pass must complete, and leave everything recorded. */
        void complete(String what) throws Exception {
            long t0 = System.nanoTime();
            String said; // what the completing pass reported, for a failure's message
            if (cycle % realRestartEvery == 0) {
                long lockAt;
                Felix.Result r;
                try (Felix.Running p = Felix.start(root.getParent(), target.env(), List.of(), true, offloadArgs())) {
                    lockAt = awaitLock(p);
                    r = p.await(PROCESS_TIMEOUT, what);
                }
                if (r.exit() != 0 || !r.out().contains("\"complete\":true")) {
                    throw new AssertionError(what + ": the restarted pass did not complete: " + r.describe());
                }
                stats.completions++;
                said = r.describe();
                learn(lockAt, r.took().toNanos());
            } else {
                OffloadSettings settings = OffloadSettings.defaults()
                        .withLocalRetention(new LocalRetention.KeepSegments(KEEP_LOCAL_SEGMENTS))
                        .withUnlinkSettle(java.time.Duration.ofMillis(300));
                PassReport report = new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(),
                        dir -> OptionalLong.empty()).run(ProgressListener.none());
                if (!report.complete()) {
                    throw new AssertionError(what + ": the pass did not complete: " + report);
                }
                stats.completionsInProcess++;
                said = report.toString();
            }
            stats.completionMillis += (System.nanoTime() - t0) / 1_000_000;
            check(what);
            for (ShardWriter w : shards) {
                Manifest m = Invariants.manifest(w, what);
                Map<Long, Long> seen = new TreeMap<>(w.segmentsEverSeen());
                long newest = Collections.max(seen.keySet());
                for (Map.Entry<Long, Long> s : seen.entrySet()) {
                    if (s.getKey() == newest || w.emptySegments().contains(s.getKey())) {
                        continue; // the active segment, or one without a record (nothing to record)
                    }
                    boolean recorded = m.entries().stream().anyMatch(e -> e.segmentId() == s.getKey());
                    if (!recorded) {
                        throw new AssertionError(what + ": " + w.name() + ": sealed segment " + s.getKey()
                                + " is not recorded after a complete pass; manifest: " + m);
                    }
                }
                long local;
                try (Stream<Path> files = Files.list(w.dir())) {
                    local = files.filter(f -> f.getFileName().toString().endsWith(".log")).count();
                }
                if (local > KEEP_LOCAL_SEGMENTS) {
                    throw new AssertionError(what + ": " + w.name() + " keeps " + local + " local segments, more than "
                            + KEEP_LOCAL_SEGMENTS + "; files: " + filesOf(w.dir()) + "; manifest: " + m
                            + "; the pass said: " + said);
                }
            }
        }

        /** The shard directory's files with their sizes, for a failure's message. */
        private static String filesOf(Path dir) throws IOException {
            StringBuilder out = new StringBuilder();
            try (Stream<Path> files = Files.list(dir).sorted()) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    out.append(f.getFileName()).append('=').append(Files.size(f)).append(' ');
                }
            }
            return out.toString().trim();
        }

        private void learn(long lockAtNanos, long tookNanos) {
            runMillis = 0.8 * runMillis + 0.2 * (tookNanos / 1e6);
            if (lockAtNanos > 0) {
                double pass = (System.nanoTime() - lockAtNanos) / 1e6;
                passMillis = 0.8 * passMillis + 0.2 * Math.max(20, pass);
            }
        }

        private OrphanSweepReport sweep(String what) throws IOException, StoreException {
            String node = Invariants.nodeId(root).orElseThrow();
            try (RootLock lock = RootLock.acquire(root)) {
                OrphanSweepReport report = new OrphanSweep(new DataRoot(root), store, new SegmentKeys("", node),
                        Clock.systemUTC(), OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none())
                        .run(StopSignal.never());
                if (!report.problems().isEmpty()) {
                    throw new AssertionError(what + ": the orphan sweep reported problems: " + report.problems());
                }
                return report;
            }
        }

        /**
         * The root's end: a sweep leaves nothing unnamed; `read` and `fsck` over what the kills left, each a fresh
         * run of the command inside this JVM (nothing runs over the root any more, so no lock is contended).
         */
        void finish() throws Exception {
            if (Invariants.nodeId(root).isPresent()) {
                stats.sweptAtEnd += sweep(name + " root " + stats.roots + " end").deletedCount();
                List<String> unnamed = Invariants.unnamed(root, shards, store);
                if (!unnamed.isEmpty()) {
                    throw new AssertionError("after the final sweep, unnamed objects remain: " + unnamed);
                }
                Invariants.Seen seen = Invariants.checkFresh(root, shards, store,
                        name + " root " + stats.roots + " after the final sweep (fresh readers)");
                stats.invariantChecks++;
                stats.localRecordsChecked += seen.localRecords();
                stats.remoteRecordsChecked += seen.remoteRecords();
            }
            ShardWriter w = shards.get(stats.roots % shards.size());
            Felix.Result read = Felix.inside(root.getParent(), target.env(), PROCESS_TIMEOUT, "read", "--data-dir",
                    root.toString(), "--store", target.uri(), "--shard", w.name(), "--from", "0", "--max-records",
                    Integer.toString(w.records().size() + 10), "--json");
            if (read.exit() != 0) {
                throw new AssertionError("read of " + w.name() + " failed: " + read.describe());
            }
            List<String> lines = read.out().lines().toList();
            if (lines.size() != w.records().size()) {
                throw new AssertionError("read printed " + lines.size() + " records of " + w.records().size());
            }
            for (int i = 0; i < lines.size(); i++) {
                Matcher o = OFFSET.matcher(lines.get(i));
                Matcher pl = PAYLOAD.matcher(lines.get(i));
                if (!o.find() || Long.parseLong(o.group(1)) != i || !pl.find()
                        || !java.util.Arrays.equals(Base64.getDecoder().decode(pl.group(1)), w.records().get(i).payload())) {
                    throw new AssertionError("read line " + i + " differs from the acknowledged record: " + lines.get(i));
                }
            }
            stats.readCommandRecords += lines.size();
            stats.reservedLeftovers.addAll(target.reservedLeftovers());
            Felix.Result fsck = Felix.inside(root.getParent(), Map.of(), PROCESS_TIMEOUT, "fsck", "--data-dir",
                    root.toString(), "--json");
            if (fsck.exit() != 0 || fsck.out().contains("\"corrupt\"")) {
                throw new AssertionError("fsck after the crashes: " + fsck.describe());
            }
        }

        @Override
        public void close() throws Exception {
            for (ShardWriter w : shards) {
                w.close();
            }
            store.close();
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
