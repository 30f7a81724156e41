package dev.felix.offload.schedule;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScheduleTest {

    private static Instant t(String text) {
        return Instant.parse(text);
    }

    @Test
    void fiveFieldsAreUnixCronAndTheNextFireTimeIsStrictlyAfter() {
        Schedule everyMinute = Schedule.parse("* * * * *");
        assertThat(everyMinute.syntax()).isEqualTo(Schedule.Syntax.UNIX);
        assertThat(everyMinute.nextAfter(t("2031-01-01T12:00:30Z"), ZoneOffset.UTC)).contains(t("2031-01-01T12:01:00Z"));
        assertThat(everyMinute.nextAfter(t("2031-01-01T12:01:00Z"), ZoneOffset.UTC)).contains(t("2031-01-01T12:02:00Z"));

        Schedule everyFive = Schedule.parse(" */5 * * * * ");
        assertThat(everyFive.expression()).isEqualTo("*/5 * * * *");
        assertThat(everyFive.nextAfter(t("2031-01-01T12:03:10Z"), ZoneOffset.UTC)).contains(t("2031-01-01T12:05:00Z"));
        assertThat(everyFive.nextAfter(t("2031-01-01T12:05:00Z"), ZoneOffset.UTC)).contains(t("2031-01-01T12:10:00Z"));
    }

    @Test
    void unixDayOfWeekZeroAndSevenAreSunday() {
        // 2031-01-01 is a Wednesday; the next Sunday is the 5th.
        for (String e : new String[] {"0 0 * * 0", "0 0 * * 7", "0 0 * * SUN"}) {
            assertThat(Schedule.parse(e).nextAfter(t("2031-01-01T12:00:00Z"), ZoneOffset.UTC)).as(e)
                    .contains(t("2031-01-05T00:00:00Z"));
        }
    }

    @Test
    void sixOrSevenFieldsAreQuartzWithSeconds() {
        Schedule everySecond = Schedule.parse("* * * * * ?");
        assertThat(everySecond.syntax()).isEqualTo(Schedule.Syntax.QUARTZ);
        assertThat(everySecond.nextAfter(t("2031-01-01T12:00:00Z"), ZoneOffset.UTC)).contains(t("2031-01-01T12:00:01Z"));
        assertThat(Schedule.parse("0 0/15 * * * ?").nextAfter(t("2031-01-01T12:00:00Z"), ZoneOffset.UTC))
                .contains(t("2031-01-01T12:15:00Z"));
        // Quartz counts days of week from Sunday = 1.
        assertThat(Schedule.parse("0 0 0 ? * 1").nextAfter(t("2031-01-01T12:00:00Z"), ZoneOffset.UTC))
                .contains(t("2031-01-05T00:00:00Z"));
        Schedule once = Schedule.parse("0 0 12 1 1 ? 2032");
        assertThat(once.nextAfter(t("2031-06-01T00:00:00Z"), ZoneOffset.UTC)).contains(t("2032-01-01T12:00:00Z"));
        assertThat(once.nextAfter(t("2032-01-01T12:00:00Z"), ZoneOffset.UTC)).isEmpty();
    }

    @Test
    void fireTimesAreReadInTheGivenZone() {
        Schedule daily = Schedule.parse("0 3 * * *");
        assertThat(daily.nextAfter(t("2031-01-01T00:00:00Z"), ZoneId.of("Europe/Berlin")))
                .contains(t("2031-01-01T02:00:00Z"));
        assertThat(daily.nextAfter(t("2031-07-01T00:00:00Z"), ZoneId.of("Europe/Berlin")))
                .contains(t("2031-07-01T01:00:00Z"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "* * * *", "* * * * * * * *", "@daily"})
    void aWrongNumberOfFieldsIsRefusedWithWhatWasExpected(String expression) {
        assertThatThrownBy(() -> Schedule.parse(expression)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + expression + "'").hasMessageContaining("expected 5 (Unix")
                .hasMessageContaining("6 to 7 (Quartz");
    }

    @ParameterizedTest
    @ValueSource(strings = {"61 * * * *", "* 25 * * *", "x * * * *", "0 0 0 1 * 1", "99 * * * * ?"})
    void aMalformedExpressionIsRefusedNamingIt(String expression) {
        assertThatThrownBy(() -> Schedule.parse(expression)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + expression + "' is not a valid");
    }

    @Test
    void theStandardPassesHaveTheirDefaultSchedules() {
        Instant noon = t("2031-01-01T12:00:30Z");
        assertThat(StandardPass.OFFLOAD.passName()).isEqualTo("offload");
        assertThat(StandardPass.OFFLOAD.defaultSchedule().nextAfter(noon, ZoneOffset.UTC)).contains(t("2031-01-01T12:01:00Z"));
        assertThat(StandardPass.RETENTION.defaultSchedule().nextAfter(noon, ZoneOffset.UTC)).contains(t("2031-01-01T12:05:00Z"));
        assertThat(StandardPass.SCRUB.defaultSchedule().nextAfter(noon, ZoneOffset.UTC)).contains(t("2031-01-02T03:00:00Z"));
        assertThat(StandardPass.SCRUB.defaultSchedule().describe()).isNotBlank();
    }
}
