package dev.felix.offload.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.copy.LocalRelease;
import dev.felix.offload.retention.DeletedStreamsReport;
import dev.felix.offload.retention.LocalRetentionResult;
import dev.felix.offload.retention.RemoteRetentionResult;
import dev.felix.offload.retention.RetentionBlock;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.retention.RetentionSettings;
import dev.felix.offload.retention.ShardRetentionResult;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** What the retention command prints of a block: the texts operators and scripts read, unchanged by its type. */
class RetentionBlockOutputTest {

    private static ShardRetentionResult shard(String name, RetentionBlock local, RetentionBlock remote) {
        return new ShardRetentionResult(name, RetentionSettings.defaults(),
                new LocalRetentionResult(List.of(), 0, 10, Optional.ofNullable(local)),
                new RemoteRetentionResult(List.of(), 0, 0, List.of(), null, 10, Optional.ofNullable(remote), Map.of()),
                null);
    }

    private static RetentionReport report() {
        return new RetentionReport("node-a", List.of(
                shard("s-0", new RetentionBlock.NotOffloaded(-1L), new RetentionBlock.StillLocal(7)),
                shard("s-1", new RetentionBlock.Kept(3, LocalRelease.KeptReason.SETTLING, "segment 3 stays until then"),
                        new RetentionBlock.TimestampUnknown(4, "disk full")),
                shard("s-2", null, new RetentionBlock.LiveManifestUnreadable(2, List.of("x-0", "y-1"))),
                shard("s-3", null, null)), DeletedStreamsReport.nothing(), Optional.empty(), false, Duration.ZERO);
    }

    @Test
    void textNamesTheLocalBlockOfEachShardThatHasOne() {
        StringWriter text = new StringWriter();
        RetentionCommand.writeText(new PrintWriter(text), report());
        assertThat(text.toString().lines().filter(l -> l.contains("local segments kept")).toList()).containsExactly(
                "  s-0: local segments kept: segment 18446744073709551615 is past local.retention.bytes but not offloaded yet",
                "  s-1: local segments kept: segment 3 stays until then");
    }

    @Test
    void jsonCarriesEachBlockAsItsSentence() throws Exception {
        StringWriter json = new StringWriter();
        RetentionCommand.writeJson(new PrintWriter(json), report());
        JsonNode shards = new ObjectMapper().readTree(json.toString()).get("shards");
        assertThat(shards.get(0).get("local_blocked_by").asText())
                .isEqualTo("segment 18446744073709551615 is past local.retention.bytes but not offloaded yet");
        assertThat(shards.get(0).get("remote_blocked_by").asText())
                .isEqualTo("segment 7 is past the total retention but still on local disk");
        assertThat(shards.get(1).get("local_blocked_by").asText()).isEqualTo("segment 3 stays until then");
        assertThat(shards.get(1).get("remote_blocked_by").asText()).isEqualTo("segment 4: its largest timestamp is not "
                + "known (offload.timestamps has no line for it and rebuilding one failed: disk full)");
        assertThat(shards.get(2).has("local_blocked_by")).isFalse();
        assertThat(shards.get(2).get("remote_blocked_by").asText()).isEqualTo("2 entries are past the total retention, "
                + "but the manifest of live shard(s) [x-0, y-1] is unreadable, so no object is deleted until it is mended");
        assertThat(shards.get(3).has("local_blocked_by")).isFalse();
        assertThat(shards.get(3).has("remote_blocked_by")).isFalse();
    }
}
