package dev.felix.offload.schedule;

import dev.felix.offload.copy.StopSignal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs named passes, each on its own cron {@link Schedule}, each on its own thread.
 *
 * <ul>
 *   <li><b>No overlap.</b> A pass never runs twice at once: its one thread runs it, then waits for
 *       the next fire time.</li>
 *   <li><b>No stacking.</b> The next fire time is computed after a run ends, from the time it
 *       ended; fire times that passed during a long run are skipped, not made up.</li>
 *   <li><b>Exclusive groups.</b> Passes given the same group never run at the same time; a pass
 *       whose fire time comes while another of its group runs waits for it, then runs once. The
 *       daemon gives its passes no group: offload and retention each hold its {@link DataRootGuard}
 *       around the work under the root's lock (retention hands it over between shards to a pass
 *       waiting for it), and scrub holds it only while it lists orphans, so a long scrub's reads do
 *       not hold back the other two.</li>
 *   <li><b>Requested runs.</b> {@link #requestRun} runs a pass as soon as it is idle (and its group
 *       free), once however often it is asked meanwhile; its schedule goes on after.</li>
 *   <li><b>Stop.</b> {@link #stop} starts no further run, sets the {@link StopSignal} running passes
 *       check, waits for them to finish, and after the given patience interrupts those still
 *       running (abandoned; a pass writes nothing half-done, so the next run starts cleanly).</li>
 * </ul>
 *
 * Time comes from a {@link PassClock}, so tests move a {@link ManualPassClock} instead of waiting.
 */
public final class PassScheduler {

    private static final Logger LOG = LoggerFactory.getLogger(PassScheduler.class);

    /** How often a pass waiting for its group looks whether a stop was requested. */
    private static final long GROUP_POLL_MILLIS = 50;

    private final PassClock clock;
    private final PassListener listener;
    private final Map<String, Worker> workers;
    private volatile boolean stopping;
    private boolean started;

    private PassScheduler(PassClock clock, PassListener listener, Map<String, Worker> workers) {
        this.clock = clock;
        this.listener = listener;
        this.workers = workers;
    }

    public static Builder builder(PassClock clock) {
        return new Builder(clock);
    }

    private record Definition(Schedule schedule, String group, Pass pass) {
    }

    /** Collects the passes; each name once. */
    public static final class Builder {
        private final PassClock clock;
        private PassListener listener = PassListener.none();
        private final Map<String, Definition> passes = new LinkedHashMap<>();

        private Builder(PassClock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
        }

        /** Adds a pass that runs on its schedule, whatever else runs. */
        public Builder pass(String name, Schedule schedule, Pass pass) {
            return pass(name, schedule, null, pass);
        }

        /**
         * Adds a pass that never runs while another pass of {@code exclusiveGroup} runs (null for none).
         *
         * @throws IllegalArgumentException when the name is empty or taken
         */
        public Builder pass(String name, Schedule schedule, String exclusiveGroup, Pass pass) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(schedule, "schedule");
            Objects.requireNonNull(pass, "pass");
            if (name.isBlank()) {
                throw new IllegalArgumentException("a pass needs a name");
            }
            if (passes.containsKey(name)) {
                throw new IllegalArgumentException("pass '" + name + "' is added twice");
            }
            passes.put(name, new Definition(schedule, exclusiveGroup, pass));
            return this;
        }

        public Builder listener(PassListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        public PassScheduler build() {
            Map<String, ReentrantLock> groups = new HashMap<>();
            Map<String, Worker> workers = new LinkedHashMap<>();
            PassScheduler scheduler = new PassScheduler(clock, listener, workers);
            passes.forEach((name, p) -> {
                ReentrantLock groupLock = p.group() == null ? null
                        : groups.computeIfAbsent(p.group(), g -> new ReentrantLock(true));
                workers.put(name, scheduler.new Worker(name, p.schedule(), groupLock, p.pass()));
            });
            return scheduler;
        }
    }

    /** Starts every pass's thread; each waits for its first fire time. */
    public synchronized void start() {
        if (started) {
            throw new IllegalStateException("the scheduler was started already");
        }
        if (stopping) {
            throw new IllegalStateException("the scheduler was stopped");
        }
        started = true;
        for (Worker w : workers.values()) {
            Thread t = new Thread(w, "pass-" + w.name);
            t.setDaemon(true);
            w.thread = t;
            t.start();
        }
    }

    /** The names of the passes, in the order they were added. */
    public Set<String> passNames() {
        return Collections.unmodifiableSet(workers.keySet());
    }

    public Schedule schedule(String pass) {
        return worker(pass).schedule;
    }

    /**
     * Asks for a run of {@code pass} as soon as it is idle. Requests made while one is pending or
     * running add nothing.
     *
     * @return false when the scheduler is stopping
     */
    public boolean requestRun(String pass) {
        Worker w = worker(pass);
        if (stopping) {
            return false;
        }
        w.lock.lock();
        try {
            w.runRequested = true;
            w.wake.signalAll();
        } finally {
            w.lock.unlock();
        }
        return true;
    }

    /** The fire time {@code pass} waits for; empty while it runs or after a stop. */
    public Optional<Instant> nextRun(String pass) {
        return Optional.ofNullable(worker(pass).nextRun);
    }

    public boolean isRunning(String pass) {
        return worker(pass).running;
    }

    /** How many runs of {@code pass} have ended. */
    public long completedRuns(String pass) {
        return worker(pass).runs.get();
    }

    /** How the last run of {@code pass} ended, if one has. */
    public Optional<PassOutcome> lastOutcome(String pass) {
        return Optional.ofNullable(worker(pass).last);
    }

    /** The last outcome of every pass that has run, by name. */
    public Map<String, PassOutcome> lastOutcomes() {
        Map<String, PassOutcome> out = new LinkedHashMap<>();
        for (Worker w : workers.values()) {
            if (w.last != null) {
                out.put(w.name, w.last);
            }
        }
        return out;
    }

    public boolean stopRequested() {
        return stopping;
    }

    /**
     * Stops: no run starts any more, running passes see their {@link StopSignal} set and get
     * {@code patience} to finish; those still running then are interrupted (abandoned) and get
     * {@code patience} again to end.
     *
     * @return true when every pass thread has ended
     */
    public boolean stop(Duration patience) {
        return stop(patience, patience);
    }

    /**
     * Stops as {@link #stop(Duration)} does, but waits only {@code afterInterrupt} for the passes
     * it interrupted.
     *
     * @return true when every pass thread has ended
     */
    public boolean stop(Duration patience, Duration afterInterrupt) {
        synchronized (this) {
            stopping = true;
        }
        for (Worker w : workers.values()) {
            w.lock.lock();
            try {
                w.wake.signalAll();
            } finally {
                w.lock.unlock();
            }
        }
        if (!joinAll(patience)) {
            for (Worker w : workers.values()) {
                Thread t = w.thread;
                if (t != null && t.isAlive()) {
                    LOG.warn("pass {} did not finish within {} of the stop; interrupting it", w.name, patience);
                    w.abandoned = true;
                    t.interrupt();
                }
            }
            return joinAll(afterInterrupt);
        }
        return true;
    }

    private boolean joinAll(Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        boolean all = true;
        for (Worker w : workers.values()) {
            Thread t = w.thread;
            if (t == null) {
                continue;
            }
            long left = deadline - System.nanoTime();
            try {
                if (left > 0) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            all &= !t.isAlive();
        }
        return all;
    }

    private Worker worker(String pass) {
        Worker w = workers.get(pass);
        if (w == null) {
            throw new IllegalArgumentException("no pass named '" + pass + "'; the passes are " + workers.keySet());
        }
        return w;
    }

    /** One pass's thread: wait for the fire time, take the group, run, repeat. */
    private final class Worker implements Runnable {
        final String name;
        final Schedule schedule;
        final ReentrantLock group;
        final Pass pass;
        final ReentrantLock lock = new ReentrantLock();
        final Condition wake = lock.newCondition();
        final AtomicLong runs = new AtomicLong();
        boolean runRequested;
        volatile Instant nextRun;
        volatile boolean running;
        volatile boolean abandoned;
        volatile PassOutcome last;
        volatile Thread thread;

        Worker(String name, Schedule schedule, ReentrantLock group, Pass pass) {
            this.name = name;
            this.schedule = schedule;
            this.group = group;
            this.pass = pass;
        }

        @Override
        public void run() {
            try {
                while (!stopping) {
                    Instant fireAt = awaitFireTime();
                    if (fireAt == null || !takeGroup()) {
                        return;
                    }
                    try {
                        runOnce(fireAt);
                    } finally {
                        if (group != null) {
                            group.unlock();
                        }
                    }
                }
            } finally {
                nextRun = null;
            }
        }

        /** The fire time (or request time) to run for; null once stopping. */
        private Instant awaitFireTime() {
            lock.lock();
            try {
                Instant next = schedule.nextAfter(clock.now(), clock.zone()).orElse(null);
                while (true) {
                    if (stopping) {
                        return null;
                    }
                    if (runRequested) {
                        runRequested = false;
                        return clock.now();
                    }
                    // only now is it waiting for that time: with a request pending it runs at once
                    nextRun = next;
                    Duration wait;
                    if (next == null) {
                        wait = PassClock.SYSTEM_RECHECK; // the schedule has no fire time left: only requests run it
                    } else {
                        wait = clock.waitBeforeRecheck(next);
                        if (wait.isZero() || wait.isNegative()) {
                            return next;
                        }
                    }
                    try {
                        wake.awaitNanos(wait.toNanos());
                    } catch (InterruptedException e) {
                        return null; // only a stop interrupts
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        /** Takes the group's lock, waiting while another pass of the group runs; false once stopping. */
        private boolean takeGroup() {
            if (group == null) {
                return true;
            }
            while (!stopping) {
                try {
                    if (group.tryLock(GROUP_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                        if (stopping) {
                            group.unlock();
                            return false;
                        }
                        return true;
                    }
                } catch (InterruptedException e) {
                    return false;
                }
            }
            return false;
        }

        private void runOnce(Instant fireAt) {
            running = true;
            nextRun = null;
            Instant started = clock.now();
            tell(() -> listener.started(name, fireAt));
            PassOutcome.Status status = PassOutcome.Status.SUCCEEDED;
            String error = null;
            PassOutcome.Findings findings = null;
            try {
                findings = pass.run(() -> stopping);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                status = abandoned ? PassOutcome.Status.ABANDONED : PassOutcome.Status.FAILED;
                error = oneLine(e);
                if (status == PassOutcome.Status.FAILED) {
                    // one line; the trace only where an operator asked for it
                    LOG.error("{} pass failed: {}", name, error);
                    LOG.debug("{} pass failed", name, e);
                } else {
                    LOG.warn("pass {} abandoned at the stop: {}", name, error);
                }
            } finally {
                Thread.interrupted(); // an abandon's interrupt ends with the run
                PassOutcome outcome = new PassOutcome(name, status, fireAt, started, clock.now(), error, findings);
                last = outcome;
                runs.incrementAndGet();
                running = false;
                tell(() -> listener.finished(outcome));
            }
        }

        private void tell(Runnable call) {
            try {
                call.run();
            } catch (RuntimeException e) {
                LOG.warn("pass listener failed for {}: {}", name, oneLine(e));
                LOG.debug("pass listener failed for {}", name, e);
            }
        }
    }

    private static String oneLine(Throwable e) {
        String message = e.getMessage();
        String text = e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        return text.replace('\n', ' ').replace('\r', ' ');
    }
}
