package dev.felix.offload.cli;

import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.scrub.Scrub.Anomaly;
import dev.felix.offload.scrub.Scrub.Kind;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the scrub command prints of each kind of anomaly, field by field: an anomaly's optional parts
 * appear exactly where the kind has them, as they did when absent parts were -1 or null.
 */
class ScrubAnomalyOutputTest {

    private static Anomaly anomaly(Kind kind, String shard, OptionalLong segment, String key, String detail,
            String keyShard, Anomaly.HeldObjects held, OptionalLong byteAt) {
        return new Anomaly(kind, shard, segment, Optional.ofNullable(key), detail, Optional.ofNullable(keyShard),
                Optional.ofNullable(held), byteAt);
    }

    private static Scrub.Report report() {
        OptionalLong none = OptionalLong.empty();
        return new Scrub.Report(3, 4, Map.of("read-back", 4), List.of(
                anomaly(Kind.MISSING, "s-0", OptionalLong.of(5), "n/s-0/0-5.segment", "the store has no such object",
                        null, null, none),
                anomaly(Kind.ORPHAN, "s-0", none, "n/s-0/9-9.segment", "no manifest names it", null, null, none),
                anomaly(Kind.FOREIGN_KEY, "s-1", OptionalLong.of(-2L), "n/s-0/0-5.segment", "lies in s-0", "s-0", null,
                        none),
                anomaly(Kind.MISSING_SHARD, "s-9", none, null, "2 objects kept", null, new Anomaly.HeldObjects(2, 80),
                        none),
                anomaly(Kind.LOCAL_MISMATCH, "s-1", OptionalLong.of(7), "n/s-1/0-7.segment", "differs", null, null,
                        OptionalLong.of(0)),
                anomaly(Kind.UNREADABLE, "s-2", none, null, "manifest: bad", null, null, none)),
                true, "n/", List.of(), false, Duration.ofMillis(12));
    }

    @Test
    void textLinesCarryTheFieldsEachKindHas() {
        StringWriter text = new StringWriter();
        ScrubCommand.writeText(new PrintWriter(text), report());
        assertThat(text.toString().lines().limit(6).toList()).containsExactly(
                "missing shard=s-0 segment=5 key=n/s-0/0-5.segment: the store has no such object",
                "orphan shard=s-0 key=n/s-0/9-9.segment: no manifest names it",
                "foreign-key shard=s-1 segment=18446744073709551614 key=n/s-0/0-5.segment: lies in s-0",
                "missing-shard shard=s-9: 2 objects kept",
                "local-mismatch shard=s-1 segment=7 key=n/s-1/0-7.segment byte=0: differs",
                "unreadable shard=s-2: manifest: bad");
    }

    @Test
    void jsonAnomaliesCarryTheFieldsEachKindHas() throws Exception {
        StringWriter json = new StringWriter();
        ScrubCommand.writeJson(new PrintWriter(json), report());
        assertThat(json.toString()).contains("\"anomalies\":["
                + "{\"kind\":\"missing\",\"shard\":\"s-0\",\"segment\":5,\"key\":\"n/s-0/0-5.segment\","
                + "\"detail\":\"the store has no such object\"},"
                + "{\"kind\":\"orphan\",\"shard\":\"s-0\",\"key\":\"n/s-0/9-9.segment\",\"detail\":\"no manifest names it\"},"
                + "{\"kind\":\"foreign-key\",\"shard\":\"s-1\",\"segment\":18446744073709551614,"
                + "\"key\":\"n/s-0/0-5.segment\",\"detail\":\"lies in s-0\",\"key_shard\":\"s-0\"},"
                + "{\"kind\":\"missing-shard\",\"shard\":\"s-9\",\"detail\":\"2 objects kept\",\"objects\":2,\"bytes\":80},"
                + "{\"kind\":\"local-mismatch\",\"shard\":\"s-1\",\"segment\":7,\"key\":\"n/s-1/0-7.segment\",\"byte\":0,"
                + "\"detail\":\"differs\"},"
                + "{\"kind\":\"unreadable\",\"shard\":\"s-2\",\"detail\":\"manifest: bad\"}]");
    }
}
