package dev.felix.offload.log;

import java.time.Duration;
import java.util.Objects;

/** When appended records are forced to the device. Rolling and closing always flush. */
public sealed interface FsyncPolicy {

    /** Every append is durable before it returns. */
    record OnCommit() implements FsyncPolicy {
    }

    /** Appends return at once; a background flush runs at most once per {@code interval}. */
    record Periodic(Duration interval) implements FsyncPolicy {
        public Periodic {
            Objects.requireNonNull(interval, "interval");
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("fsync interval must be positive, got " + interval);
            }
        }
    }

    /** Only rolling and closing flush: the operating system decides the rest. */
    record None() implements FsyncPolicy {
    }

    static FsyncPolicy onCommit() {
        return new OnCommit();
    }

    static FsyncPolicy periodic(Duration interval) {
        return new Periodic(interval);
    }

    static FsyncPolicy none() {
        return new None();
    }
}
