package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class OutOfMemoryReportTest {
    @Test
    void oneLineNamesTheHeapAndTheSettingsThatHelp() {
        StringWriter text = new StringWriter();
        int code = FelixOffload.outOfMemory(new PrintWriter(text), 256L << 20);
        assertThat(code).isEqualTo(FelixOffload.EXIT_OUT_OF_MEMORY).isNotIn(FelixOffload.EXIT_OK,
                FelixOffload.EXIT_CORRUPT, FelixOffload.EXIT_USAGE, FelixOffload.EXIT_IO);
        assertThat(text.toString()).hasLineCount(1)
                .startsWith("felix-offload: out of memory:")
                .contains("(256 MiB)", "-Xmx", "--max-bytes-in-flight")
                .doesNotContain("Exception", "\tat ");
    }
}
