package dev.felix.offload.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/**
 * A clock that only moves when told to, for tests of scheduled passes: a scheduler waiting on it
 * looks again every millisecond of real time, so moving it by an hour fires a pass at once. It is
 * also a {@link Clock}, so the passes under test can be given the same time.
 */
public final class ManualPassClock extends Clock implements PassClock {

    private static final Duration POLL = Duration.ofMillis(1);

    private final ZoneId zone;
    private volatile Instant now;

    public ManualPassClock(Instant start, ZoneId zone) {
        this.now = Objects.requireNonNull(start, "start");
        this.zone = Objects.requireNonNull(zone, "zone");
    }

    /** Moves the clock forward by {@code amount}. */
    public synchronized void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a manual clock only moves forward, got " + amount);
        }
        now = now.plus(amount);
    }

    /** Sets the clock to {@code time}, which may not be before the current time. */
    public synchronized void set(Instant time) {
        if (time.isBefore(now)) {
            throw new IllegalArgumentException("a manual clock only moves forward: " + time + " is before " + now);
        }
        now = time;
    }

    @Override
    public Instant now() {
        return now;
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId zone() {
        return zone;
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId other) {
        throw new UnsupportedOperationException("a manual pass clock has one zone");
    }

    @Override
    public Duration waitBeforeRecheck(Instant deadline) {
        return now.isBefore(deadline) ? POLL : Duration.ZERO;
    }

    @Override
    public String toString() {
        return "ManualPassClock[" + now + ", " + zone + "]";
    }
}
