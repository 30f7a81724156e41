package dev.felix.offload.cli;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class ProgressBarTest {

    @Test
    void nothingIsDrawnWhenThereIsNothingToUpload() {
        StringWriter out = new StringWriter();
        ProgressBar bar = new ProgressBar(new PrintWriter(out), 80);
        bar.started(0);
        bar.finished();
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void everyLineFitsANarrowTerminalWithoutReachingItsLastColumn() {
        for (int columns : new int[] {20, 40, 60, 80, 200}) {
            StringWriter out = new StringWriter();
            ProgressBar bar = new ProgressBar(new PrintWriter(out), columns);
            bar.started(10L << 30);
            bar.uploaded(3L << 30);
            bar.finished();
            String[] draws = out.toString().split("\r", -1);
            assertThat(draws.length).as("drawn at start and end").isGreaterThanOrEqualTo(3);
            for (String d : draws) {
                String line = d.replace("\n", "");
                assertThat(line.length()).as(columns + " columns: '" + line + "'").isLessThan(columns);
            }
            assertThat(out.toString()).contains("of 10");
        }
        assertThat(ProgressBar.columns("37")).isEqualTo(37);
        assertThat(ProgressBar.columns(null)).isEqualTo(80);
        assertThat(ProgressBar.columns("wide")).isEqualTo(80);
    }
}
