package dev.felix.offload.daemon;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class StopSequenceTest {

    @Test
    void theAbortReserveIsAThirdOfThePatienceAtMostTenSeconds() {
        assertThat(StopSequence.abortReserve(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(1));
        assertThat(StopSequence.abortReserve(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(10));
        assertThat(StopSequence.abortReserve(Duration.ofMinutes(5))).isEqualTo(Duration.ofSeconds(10));
        assertThat(StopSequence.abortReserve(Duration.ZERO)).isEqualTo(Duration.ZERO);
    }

    @Test
    void theStopsLinesAreToldUnderTheDaemonsLoggerName() {
        assertThat(DaemonLog.LOG.getName()).isEqualTo(Daemon.class.getName());
    }
}
