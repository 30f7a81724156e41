package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ShardResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The offload summary never reads as done over local segments it left for their entries to settle:
 * the text says how many shards keep them, the JSON when each may go.
 */
class OffloadSummaryTest {

    private static final Instant UNTIL = Instant.parse("2026-12-04T16:00:05Z");

    private static PassReport report(Instant settling) {
        ShardResult done = new ShardResult("a", true, List.of(), List.of(1L), 0, null, null, null);
        ShardResult left = new ShardResult("b", true, List.of(), List.of(), 0, null, null, null).settlingUntil(settling);
        return new PassReport("node-a", List.of(done, left), Duration.ofMillis(5));
    }

    private static String text(PassReport r) {
        StringWriter s = new StringWriter();
        try (PrintWriter out = new PrintWriter(s)) {
            OffloadCommand.writeText(out, r, null);
        }
        return s.toString();
    }

    private static JsonNode json(PassReport r) throws Exception {
        StringWriter s = new StringWriter();
        try (PrintWriter out = new PrintWriter(s)) {
            OffloadCommand.writeJson(out, r, null);
        }
        return new ObjectMapper().readTree(s.toString());
    }

    @Test
    void shardsKeepingSegmentsUntilTheirEntriesSettleAreSaid() throws Exception {
        assertThat(text(report(UNTIL))).contains("kept locally until their entries settle: 1 shard (a later pass unlinks them)");
        JsonNode shards = json(report(UNTIL)).get("shards");
        assertThat(shards.get(1).get("settling_until").asText()).isEqualTo("2026-12-04T16:00:05Z");
        assertThat(shards.get(0).has("settling_until")).isFalse();
    }

    @Test
    void nothingIsSaidWhenNothingIsSettling() throws Exception {
        assertThat(text(report(null))).doesNotContain("settle");
        assertThat(json(report(null)).get("shards").get(1).has("settling_until")).isFalse();
    }
}
