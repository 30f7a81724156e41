package dev.felix.offload.retention;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/**
 * A clock that moves only when a test moves it, for the grace periods and ages retention reads.
 * The scheduler's own hand-moved clock ({@code ManualPassClock}) lives with the scheduler in the
 * daemon module, which retention may not use.
 */
final class ManualClock extends Clock {

    private final ZoneId zone;
    private volatile Instant now;

    ManualClock(Instant start, ZoneId zone) {
        this.now = Objects.requireNonNull(start, "start");
        this.zone = Objects.requireNonNull(zone, "zone");
    }

    synchronized void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a manual clock only moves forward, got " + amount);
        }
        now = now.plus(amount);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId other) {
        throw new UnsupportedOperationException("a manual clock has one zone");
    }

    @Override
    public String toString() {
        return "ManualClock[" + now + ", " + zone + "]";
    }
}
