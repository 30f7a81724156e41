package dev.felix.offload.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/**
 * The time a {@link PassScheduler} goes by: what time it is, in which zone schedules are read, and
 * how long to wait in real time before looking again. The system clock waits until the fire time
 * (in steps of at most {@link #SYSTEM_RECHECK}, so a clock that was set is noticed); a
 * {@link ManualPassClock} lets tests move time by hand.
 */
public interface PassClock {

    /** The longest real wait of the system clock before it reads the time again. */
    Duration SYSTEM_RECHECK = Duration.ofSeconds(10);

    Instant now();

    /** The zone cron expressions are read in. */
    ZoneId zone();

    /**
     * How long to wait in real time before reading {@link #now()} again while waiting for
     * {@code deadline}; zero or negative once it is reached. The scheduler may be woken earlier.
     */
    Duration waitBeforeRecheck(Instant deadline);

    /** The system clock in {@code zone}. */
    static PassClock system(ZoneId zone) {
        return of(Clock.system(zone));
    }

    /** A clock over {@code clock}: its instant and zone, with real waits. */
    static PassClock of(Clock clock) {
        Objects.requireNonNull(clock, "clock");
        return new PassClock() {
            @Override
            public Instant now() {
                return clock.instant();
            }

            @Override
            public ZoneId zone() {
                return clock.getZone();
            }

            @Override
            public Duration waitBeforeRecheck(Instant deadline) {
                Duration left = Duration.between(clock.instant(), deadline);
                return left.compareTo(SYSTEM_RECHECK) > 0 ? SYSTEM_RECHECK : left;
            }

            @Override
            public String toString() {
                return "PassClock[" + clock + "]";
            }
        };
    }
}
