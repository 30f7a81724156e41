package dev.felix.offload.schedule;

import java.util.Locale;

/** The passes the daemon schedules, with their default schedules. */
public enum StandardPass {
    /** Every minute. */
    OFFLOAD("* * * * *"),
    /** Every five minutes. */
    RETENTION("*/5 * * * *"),
    /** Daily at 03:00 in the scheduler's zone. */
    SCRUB("0 3 * * *");

    private final String defaultExpression;

    StandardPass(String defaultExpression) {
        this.defaultExpression = defaultExpression;
    }

    /** The pass's name: {@code offload}, {@code retention} or {@code scrub}. */
    public String passName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The default cron expression (5-field Unix). */
    public String defaultExpression() {
        return defaultExpression;
    }

    public Schedule defaultSchedule() {
        return Schedule.parse(defaultExpression);
    }
}
