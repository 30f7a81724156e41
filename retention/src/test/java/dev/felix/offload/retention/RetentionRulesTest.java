package dev.felix.offload.retention;

import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.side.StreamMarker;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Combinators;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RetentionRulesTest {

    private static String dir(String tenant, String namespace, String stream, int shard) {
        return new ShardKey(tenant, namespace, stream, shard).directoryName();
    }

    private static String dir(String tenant, String namespace, String stream, int shard, long incarnation) {
        return new ShardKey(tenant, namespace, stream, shard, incarnation).directoryName();
    }

    private static RetentionOverride ms(long value) {
        return RetentionOverride.none().with(RetentionSettings.RETENTION_MS, value);
    }

    @Test
    void defaultsAreUnlimitedAndValuesBelowMinusOneAreRefusedByKey() {
        assertThat(RetentionSettings.defaults().unlimited()).isTrue();
        assertThatThrownBy(() -> new RetentionSettings(-2, 0, 0, 0))
                .hasMessageContaining("local.retention.bytes").hasMessageContaining("-1 (unlimited)").hasMessageContaining("-2");
        assertThatThrownBy(() -> RetentionSettings.defaults().with("retention.ms", -5))
                .hasMessageContaining("retention.ms").hasMessageContaining("milliseconds");
        assertThatThrownBy(() -> RetentionOverride.none().with("retention.hours", 5))
                .hasMessageContaining("unknown retention key 'retention.hours'").hasMessageContaining("retention.ms");
        assertThat(RetentionOverride.of(Map.of("retention.bytes", 7L)).get("retention.bytes")).hasValue(7);
    }

    @Test
    void theLocalLimitsInForceAreNeverLooserThanTheTotalOnes() {
        assertThat(new RetentionSettings(UNLIMITED, UNLIMITED, 100, 60_000).effectiveLocalBytes()).isEqualTo(100);
        assertThat(new RetentionSettings(UNLIMITED, UNLIMITED, 100, 60_000).effectiveLocalMs()).isEqualTo(60_000);
        assertThat(new RetentionSettings(500, 1000, 100, UNLIMITED).effectiveLocalBytes()).isEqualTo(100);
        assertThat(new RetentionSettings(500, 1000, 100, UNLIMITED).effectiveLocalMs()).isEqualTo(1000);
        assertThat(new RetentionSettings(50, UNLIMITED, 100, UNLIMITED).effectiveLocalBytes()).isEqualTo(50);
        assertThat(new RetentionSettings(UNLIMITED, UNLIMITED, UNLIMITED, UNLIMITED).effectiveLocalBytes()).isEqualTo(UNLIMITED);
    }

    @Test
    void eachKeyComesFromTheMostSpecificOverrideThatSetsIt() {
        RetentionSettings defaults = new RetentionSettings(1, 2, 3, 4);
        RetentionRules rules = RetentionRules.builder(defaults)
                .forStreams("acme/*/*", RetentionOverride.none().with("retention.ms", 40).with("retention.bytes", 30))
                .forStreams("acme/default/*", RetentionOverride.none().with("retention.ms", 400))
                .forStreams("acme/default/orders", RetentionOverride.none().with("local.retention.ms", 2000))
                .forShardDirectory(dir("acme", "default", "orders", 1),
                        RetentionOverride.none().with("local.retention.bytes", 10_000))
                .build();

        assertThat(rules.settingsFor(Path.of("/data", dir("acme", "default", "orders", 1))))
                .isEqualTo(new RetentionSettings(10_000, 2000, 30, 400));
        assertThat(rules.settingsFor(Path.of(dir("acme", "default", "orders", 0))))
                .isEqualTo(new RetentionSettings(1, 2000, 30, 400));
        assertThat(rules.settingsFor(Path.of(dir("acme", "default", "payments", 0))))
                .isEqualTo(new RetentionSettings(1, 2, 30, 400));
        assertThat(rules.settingsFor(Path.of(dir("acme", "billing", "orders", 0))))
                .isEqualTo(new RetentionSettings(1, 2, 30, 40));
        assertThat(rules.settingsFor(Path.of(dir("globex", "default", "orders", 0)))).isEqualTo(defaults);
        assertThat(rules.settingsFor(Path.of("shard-a"))).isEqualTo(defaults);
    }

    @Test
    void amongEquallySpecificPatternsTheFirstAddedWins() {
        RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                .forStreams("acme/*/orders", ms(1))
                .forStreams("*/default/orders", ms(2))
                .build();
        assertThat(rules.settingsFor(ShardName.of(dir("acme", "default", "orders", 0))).retentionMs()).isEqualTo(1);
        assertThat(rules.settingsFor(ShardName.of(dir("globex", "default", "orders", 0))).retentionMs()).isEqualTo(2);
    }

    @Test
    void anExactPatternMatchesEveryShardAndIncarnationOfThatStreamOnly() {
        StreamPattern p = StreamPattern.parse("acme/default/orders");
        assertThat(p.matches(ShardName.of(dir("acme", "default", "orders", 0)))).isTrue();
        assertThat(p.matches(ShardName.of(dir("acme", "default", "orders", 17)))).isTrue();
        assertThat(p.matches(ShardName.of(dir("acme", "default", "orders", 3, 0x6411a0ccf2e40L)))).isTrue();
        // Same rendered names, other exact names: the hash tells them apart.
        assertThat(p.matches(ShardName.of(dir("acme", "default", "orders!", 0)))).isFalse();
        assertThat(p.matches(ShardName.of(dir("acme", "default", "order", 0)))).isFalse();
        assertThat(p.matches(ShardName.of("acme_default_orders_0-0000000000000000"))).isFalse();
    }

    @Test
    void aWildcardPatternUsesExactNamesFromAMarkerAndRenderedNamesWithout() {
        StreamPattern acme = StreamPattern.parse("acme/*/*");
        String eu = dir("acme_eu", "default", "orders", 0);
        // Without a marker the rendered names run together: acme_eu_default_orders could be tenant acme.
        assertThat(acme.matches(ShardName.of(eu))).isTrue();
        StreamMarker marker = new StreamMarker("acme_eu", "default", "orders", OptionalLong.of(0), false,
                OptionalLong.empty());
        ShardName named = ShardName.of(eu).withStreamFrom(List.of(marker));
        assertThat(named.stream()).contains(new StreamId("acme_eu", "default", "orders"));
        assertThat(acme.matches(named)).isFalse();
        assertThat(StreamPattern.parse("acme_eu/*/*").matches(named)).isTrue();
        assertThat(StreamPattern.parse("*/*/orders").matches(named)).isTrue();
        // A marker of another stream tells nothing about this directory.
        StreamMarker other = new StreamMarker("acme", "default", "orders", OptionalLong.of(0), false, OptionalLong.empty());
        assertThat(ShardName.of(eu).withStreamFrom(List.of(other)).stream()).isEmpty();
    }

    @Test
    void aShardWhoseStreamIsNotKnownGetsTheLongestLimitsAnyReadingGivesAndSaysSo() {
        RetentionSettings defaults = new RetentionSettings(-1, -1, 5_000, -1);
        RetentionRules rules = RetentionRules.builder(defaults)
                .forStreams("acme/*/*", RetentionOverride.none().with("retention.bytes", 1_000).with("retention.ms", 60_000))
                .forStreams("acme_eu/*/*", RetentionOverride.none().with("retention.bytes", -1))
                .build();
        String eu = dir("acme_eu", "default", "orders", 0);
        // Without a marker both patterns may apply: acme/*/* would expire what acme_eu/*/* keeps for ever.
        assertThat(StreamPattern.parse("acme/*/*").match(ShardName.of(eu))).isEqualTo(StreamPattern.Match.POSSIBLE);
        assertThat(StreamPattern.parse("acme_eu/*/*").match(ShardName.of(eu))).isEqualTo(StreamPattern.Match.POSSIBLE);
        RetentionRules.Resolution r = rules.resolve(ShardName.of(eu));
        assertThat(r.settings().retentionBytes()).isEqualTo(-1);
        // retention.ms: only acme/*/* sets it, and may not apply, so the defaults' (no limit) may be in force.
        assertThat(r.settings().retentionMs()).isEqualTo(-1);
        assertThat(r.uncertain()).hasValueSatisfying(why -> assertThat(why).contains(eu).contains("acme/*/*")
                .contains("acme_eu/*/*").contains("retention.bytes=-1"));
        // With the marker the stream is known: acme_eu/*/* alone applies.
        StreamMarker marker = new StreamMarker("acme_eu", "default", "orders", OptionalLong.of(0), false,
                OptionalLong.empty());
        RetentionRules.Resolution known = rules.resolve(ShardName.of(eu).withStreamFrom(List.of(marker)));
        assertThat(known.settings()).isEqualTo(new RetentionSettings(-1, -1, -1, -1));
        assertThat(known.uncertain()).isEmpty();
        // Tenant acme's directories can be read one way only: acme/*/* applies for certain.
        String acme = dir("acme", "default", "orders", 0);
        assertThat(StreamPattern.parse("acme/*/*").match(ShardName.of(acme))).isEqualTo(StreamPattern.Match.CERTAIN);
        assertThat(rules.resolve(ShardName.of(acme))).isEqualTo(new RetentionRules.Resolution(
                new RetentionSettings(-1, -1, 1_000, 60_000), java.util.Optional.empty()));
    }

    @Test
    void aCertainOverrideBelowAPossibleOneEndsTheCandidates() {
        RetentionRules rules = RetentionRules.builder(new RetentionSettings(-1, -1, -1, -1))
                .forStreams("acme/*/orders", RetentionOverride.none().with("retention.bytes", 100))
                .forStreams("*/*/*", RetentionOverride.none().with("retention.bytes", 10))
                .build();
        // acme_eu_default_orders: acme/*/orders may apply (100), */*/* surely does (10): never the shorter 10
        // alone, and not the defaults' no limit either, which cannot be in force.
        assertThat(rules.settingsFor(ShardName.of(dir("acme_eu", "default", "orders", 0))).retentionBytes())
                .isEqualTo(100);
        // A pattern part with characters a directory cannot hold is never a certain match.
        assertThat(StreamPattern.parse("acme/*/orders.v2").match(ShardName.of(dir("acme", "x", "orders.v2", 0))))
                .isEqualTo(StreamPattern.Match.POSSIBLE);
        assertThat(StreamPattern.parse("*/*/*").match(ShardName.of(dir("a_b", "c", "d", 0))))
                .isEqualTo(StreamPattern.Match.CERTAIN);
    }

    /**
     * Whatever the names and overrides, a shard without its marker is never held to a shorter limit
     * than its marker would have given it: the marker's reading is one of those tried.
     */
    @Property(tries = 400)
    void withoutItsMarkerAShardIsNeverHeldToAShorterLimit(@ForAll("rendered") String tenant,
                                                            @ForAll("rendered") String namespace,
                                                            @ForAll("rendered") String stream,
                                                            @ForAll("patterns") List<String> patterns,
                                                            @ForAll("limits") List<Long> limits) {
        RetentionRules.Builder b = RetentionRules.builder(new RetentionSettings(-1, -1, limits.get(0), -1));
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < patterns.size(); i++) {
            if (seen.add(patterns.get(i))) {
                b.forStreams(patterns.get(i), RetentionOverride.none().with("retention.bytes", limits.get(1 + i % 3)));
            }
        }
        RetentionRules rules = b.build();
        String d = dir(tenant, namespace, stream, 0);
        StreamMarker marker = new StreamMarker(tenant, namespace, stream, OptionalLong.of(0), false, OptionalLong.empty());
        long known = rules.settingsFor(ShardName.of(d).withStreamFrom(List.of(marker))).retentionBytes();
        long unknown = rules.settingsFor(ShardName.of(d)).retentionBytes();
        assertThat(RetentionRules.longer(unknown, known)).as("%s without a marker: %d, with: %d", d, unknown, known)
                .isEqualTo(unknown);
    }

    @Provide
    Arbitrary<String> rendered() {
        return Arbitraries.of("acme", "acme_eu", "eu", "default", "default_x", "orders", "x", "a.b", "a_b", "b");
    }

    @Provide
    Arbitrary<List<String>> patterns() {
        Arbitrary<String> part = Arbitraries.of("*", "acme", "acme_eu", "eu", "default", "orders", "x", "a.b", "a_b", "b");
        return Combinators.combine(part, part, part).as((t, n, s) -> t + "/" + n + "/" + s).list().ofMinSize(1)
                .ofMaxSize(5);
    }

    @Provide
    Arbitrary<List<Long>> limits() {
        return Arbitraries.of(-1L, 0L, 10L, 1000L).list().ofSize(4);
    }

    @Test
    void wildcardsMatchRenderedNamesPartByPart() {
        assertThat(StreamPattern.parse("*/*/orders").matches(ShardName.of(dir("acme", "default", "orders", 2)))).isTrue();
        assertThat(StreamPattern.parse("*/*/orders").matches(ShardName.of(dir("acme", "default", "payments", 2)))).isFalse();
        assertThat(StreamPattern.parse("*/billing/*").matches(ShardName.of(dir("acme", "default", "orders", 2)))).isFalse();
        assertThat(StreamPattern.parse("*/*/*").matches(ShardName.of(dir("a", "b", "c", 0, 9)))).isTrue();
        assertThat(StreamPattern.parse("*/*/*").matches(ShardName.of("not-a-shard-name"))).isFalse();
        // Names with characters directory names cannot hold are rendered before comparing.
        assertThat(StreamPattern.parse("acme/*/orders.v2").matches(ShardName.of(dir("acme", "x", "orders.v2", 0)))).isTrue();
    }

    @Test
    void malformedPatternsAndRepeatedKeysAreRefusedWithTheirText() {
        assertThatThrownBy(() -> StreamPattern.parse("acme/orders")).hasMessageContaining("'acme/orders'")
                .hasMessageContaining("tenant/namespace/stream");
        assertThatThrownBy(() -> StreamPattern.parse("acme//orders")).hasMessageContaining("empty namespace");
        assertThatThrownBy(() -> RetentionRules.builder(RetentionSettings.defaults())
                .forStreams("a/b/c", ms(1)).forStreams("a/b/c", ms(2))).hasMessageContaining("given twice");
        assertThatThrownBy(() -> RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory("x/y", ms(1))).hasMessageContaining("not a path");
        assertThatThrownBy(() -> RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory("groups/.deleted", ms(1))).hasMessageContaining("not a path");
        // A shard under a container is named by its path there.
        RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                .forShardDirectory("dead-letters/" + dir("acme", "default", "dlq", 0), ms(5)).build();
        assertThat(rules.settingsFor(ShardName.of("dead-letters/" + dir("acme", "default", "dlq", 0))).retentionMs())
                .isEqualTo(5);
        assertThat(rules.settingsFor(ShardName.of(dir("acme", "default", "dlq", 0))).retentionMs())
                .isEqualTo(RetentionSettings.defaults().retentionMs());
    }

    @Test
    void shardNamesParseTheirNumberAndIncarnation() {
        ShardName n = ShardName.of(dir("acme", "default", "orders", -1, 0xffffffffffffffffL));
        assertThat(n.shard()).hasValue(-1);
        assertThat(n.incarnation()).hasValue(-1L);
        assertThat(n.rendered()).contains("acme_default_orders");
        assertThat(ShardName.of("shard-a").shard()).isEmpty();
    }

    @Property(tries = 300)
    void anExactPatternMatchesItsOwnStreamsDirectoriesAndNoOther(@ForAll("names") String tenant,
                                                                  @ForAll("names") String namespace,
                                                                  @ForAll("names") String stream,
                                                                  @ForAll("names") String otherStream,
                                                                  @ForAll int shard,
                                                                  @ForAll @IntRange(min = 0, max = 3) int incarnation) {
        String text = tenant + "/" + namespace + "/" + stream;
        StreamPattern p = StreamPattern.parse(text);
        ShardName own = ShardName.of(dir(tenant, namespace, stream, shard, incarnation));
        assertThat(p.matches(own)).isTrue();
        assertThat(own.shard()).hasValue(shard);
        assertThat(own.incarnation()).hasValue(incarnation);
        if (!otherStream.equals(stream)) {
            assertThat(p.matches(ShardName.of(dir(tenant, namespace, otherStream, shard, incarnation)))).isFalse();
        }
        // Every wildcard form matches the stream's own directories too.
        for (String w : List.of("*/" + namespace + "/" + stream, tenant + "/*/" + stream, tenant + "/" + namespace + "/*",
                "*/*/*")) {
            assertThat(StreamPattern.parse(w).matches(own)).as(w).isTrue();
        }
    }

    @Provide
    Arbitrary<String> names() {
        // No '/', which patterns cannot hold, and not '*', which stands for any name as a whole part.
        return Arbitraries.strings().withCharRange('a', 'e').withChars('_', '-', '.', 'é', ' ', '9').ofMinLength(1)
                .ofMaxLength(60).filter(s -> !s.equals("*"));
    }
}
