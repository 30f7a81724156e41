package dev.felix.offload.retention;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.root.PendingKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Why a pass lists the whole prefix is a type each case is told apart by; its label, which logs and
 * reports print, reads as it always did.
 */
class FullSweepReasonTest {

    private static final Duration DAILY = Duration.ofHours(24);
    private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");

    @TempDir
    Path root;

    private FullSweep.Why reason(OrphanSweepSettings settings) {
        return FullSweep.reason(root, settings, NOW, FullSweep.journal(root));
    }

    private static OrphanSweepSettings every(Duration cadence) {
        return OrphanSweepSettings.defaults().withFullSweepEvery(cadence);
    }

    @Test
    void eachCaseIsItsOwnTypeWithTheLabelItAlwaysHad() throws Exception {
        Path journal = PendingKeys.fileIn(root);
        assertThat(reason(every(DAILY))).isEqualTo(new FullSweep.Why.JournalMissing(journal));
        assertThat(reason(every(DAILY)).label()).isEqualTo(journal + " is missing");

        assertThat(reason(every(DAILY).withFullSweep(true))).isEqualTo(new FullSweep.Why.Asked());
        assertThat(reason(every(DAILY).withFullSweep(true)).label()).isEqualTo("asked for");

        PendingKeys.rewrite(root, List.of());
        assertThat(reason(every(Duration.ZERO))).isEqualTo(new FullSweep.Why.EveryPass());
        assertThat(reason(every(Duration.ZERO)).label()).isEqualTo("every pass (full-sweep-every 0)");

        assertThat(reason(every(DAILY))).isEqualTo(new FullSweep.Why.NoneRecorded());
        assertThat(reason(every(DAILY)).label()).isEqualTo("no full sweep recorded");

        FullSweep.record(root, NOW.minus(Duration.ofHours(25)));
        Instant last = NOW.minus(Duration.ofHours(25));
        assertThat(reason(every(DAILY))).isEqualTo(new FullSweep.Why.Due(last, DAILY));
        assertThat(reason(every(DAILY)).label()).isEqualTo("the last full sweep was at " + last + ", PT24H ago or more");

        FullSweep.record(root, NOW.minus(Duration.ofHours(1)));
        assertThat(reason(every(DAILY))).as("not due: the journal's keys are enough").isNull();

        Files.write(journal, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17});
        FullSweep.Why damaged = reason(every(DAILY));
        assertThat(damaged).isInstanceOf(FullSweep.Why.JournalDamaged.class);
        assertThat(damaged.label()).startsWith(journal + " damaged: ");
    }
}
