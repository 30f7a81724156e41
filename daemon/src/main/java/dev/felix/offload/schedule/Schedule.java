package dev.felix.offload.schedule;

import com.cronutils.descriptor.CronDescriptor;
import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * When a pass runs: a cron expression, parsed by cron-utils.
 *
 * <p>Two syntaxes are accepted, told apart by the number of whitespace-separated fields:
 * <ul>
 *   <li><b>5 fields: Unix cron</b>, {@code minute hour day-of-month month day-of-week}; day of week
 *       0-7 or SUN-SAT (0 and 7 are Sunday). Example: {@code *}{@code /5 * * * *}, every five minutes.</li>
 *   <li><b>6 or 7 fields: Quartz</b>, {@code second minute hour day-of-month month day-of-week [year]};
 *       day of week 1-7 or SUN-SAT (1 is Sunday), and one of day-of-month and day-of-week must be
 *       {@code ?}. Example: {@code * * * * * ?}, every second.</li>
 * </ul>
 * Anything else is refused with the expression and what was expected. Fire times are computed in a
 * time zone the caller gives (the scheduler's clock's zone).
 */
public final class Schedule {

    /** The syntax an expression was read in. */
    public enum Syntax {
        UNIX,
        QUARTZ
    }

    private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser QUARTZ = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.QUARTZ));

    private final String expression;
    private final Syntax syntax;
    private final Cron cron;
    private final ExecutionTime times;

    private Schedule(String expression, Syntax syntax, Cron cron) {
        this.expression = expression;
        this.syntax = syntax;
        this.cron = cron;
        this.times = ExecutionTime.forCron(cron);
    }

    /**
     * Parses a 5-field Unix or a 6- or 7-field Quartz expression.
     *
     * @throws IllegalArgumentException naming the expression and what was expected
     */
    public static Schedule parse(String expression) {
        Objects.requireNonNull(expression, "expression");
        String trimmed = expression.trim();
        int fields = trimmed.isEmpty() ? 0 : trimmed.split("\\s+").length;
        Syntax syntax;
        CronParser parser;
        if (fields == 5) {
            syntax = Syntax.UNIX;
            parser = UNIX;
        } else if (fields == 6 || fields == 7) {
            syntax = Syntax.QUARTZ;
            parser = QUARTZ;
        } else {
            throw new IllegalArgumentException("cron expression '" + expression + "' has " + fields + " fields; expected "
                    + "5 (Unix: minute hour day-of-month month day-of-week) or 6 to 7 (Quartz: second minute hour "
                    + "day-of-month month day-of-week [year])");
        }
        Cron cron;
        try {
            cron = parser.parse(trimmed).validate();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cron expression '" + expression + "' is not a valid "
                    + (syntax == Syntax.UNIX ? "5-field Unix" : "Quartz") + " expression: " + e.getMessage(), e);
        }
        return new Schedule(trimmed, syntax, cron);
    }

    /** The expression as given, trimmed. */
    public String expression() {
        return expression;
    }

    public Syntax syntax() {
        return syntax;
    }

    /** The first fire time strictly after {@code time} in {@code zone}, or empty when there is none any more. */
    public Optional<Instant> nextAfter(Instant time, ZoneId zone) {
        ZonedDateTime at = time.atZone(zone);
        Optional<ZonedDateTime> next = times.nextExecution(at);
        // Guard the contract "strictly after" whatever the library answers at an exact fire time.
        for (int guard = 0; guard < 3 && next.isPresent() && !next.get().toInstant().isAfter(time); guard++) {
            next = times.nextExecution(next.get().plusNanos(1));
        }
        if (next.isPresent() && !next.get().toInstant().isAfter(time)) {
            throw new IllegalStateException("cron-utils answers no fire time after " + time + " for " + expression);
        }
        return next.map(ZonedDateTime::toInstant);
    }

    /** The schedule in English words, for logs and the health endpoint. */
    public String describe() {
        return CronDescriptor.instance(Locale.UK).describe(cron);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Schedule other && expression.equals(other.expression);
    }

    @Override
    public int hashCode() {
        return expression.hashCode();
    }

    @Override
    public String toString() {
        return expression + " (" + syntax.name().toLowerCase(Locale.ROOT) + ")";
    }
}
