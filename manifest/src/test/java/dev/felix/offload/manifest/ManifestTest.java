package dev.felix.offload.manifest;

import dev.felix.offload.manifest.ManifestLookup.Kind;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The operations on the manifest value, by example and against a straightforward model. */
class ManifestTest {

    private static ManifestEntry entry(long segment, long base, long last) {
        return new ManifestEntry(segment, base, last, 1000 + segment, 10 * base, 10 * last, (int) segment,
                "node-1/shard/" + String.format("%020d-%020d.segment", base, segment));
    }

    // Offsets 10..19, 20..29 (adjacent), gap 30..39, 40..40 (one offset), gap 41..49, 50..59.
    private static final ManifestEntry A = entry(1, 10, 19);
    private static final ManifestEntry B = entry(2, 20, 29);
    private static final ManifestEntry C = entry(4, 40, 40);
    private static final ManifestEntry D = entry(6, 50, 59);
    private static final Manifest M = Manifest.of(List.of(A, B, C, D));

    @Nested
    class Building {

        @Test
        void theEmptyManifestHasNoEntriesAndNoTimestamps() {
            Manifest e = Manifest.empty();
            assertThat(e.entries()).isEmpty();
            assertThat(e.isEmpty()).isTrue();
            assertThat(e.oldestEntry()).isEmpty();
            assertThat(e.newestEntry()).isEmpty();
            assertThat(e.totals()).isEqualTo(new ManifestTotals(0, 0, OptionalLong.empty(), OptionalLong.empty()));
        }

        @Test
        void withEntryAppendsAboveTheNewestAndLeavesTheOriginalAlone() {
            Manifest one = Manifest.empty().withEntry(A);
            Manifest two = one.withEntry(B);
            assertThat(one.entries()).containsExactly(A);
            assertThat(two.entries()).containsExactly(A, B);
            assertThat(two.withEntry(C).withEntry(D)).isEqualTo(M);
        }

        @Test
        void withEntryRefusesAnEntryNotAboveTheNewest() {
            Manifest two = Manifest.of(List.of(A, B));
            assertThatThrownBy(() -> two.withEntry(entry(9, 29, 35))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> two.withEntry(entry(9, 20, 29))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> two.withEntry(entry(9, 0, 5))).isInstanceOf(IllegalArgumentException.class);
            assertThat(two.withEntry(entry(9, 30, 30)).size()).isEqualTo(3);
        }

        @Test
        void ofRefusesEntriesOutOfOrderOrOverlapping() {
            assertThatThrownBy(() -> Manifest.of(List.of(B, A))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Manifest.of(List.of(A, entry(3, 19, 25)))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> Manifest.of(List.of(A, A))).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void anEntryRefusesABaseAboveItsLastOrAKeyThatCannotBeStored() {
            assertThatThrownBy(() -> entry(1, 11, 10)).isInstanceOf(IllegalArgumentException.class);
            // Unsigned: 2^63 is above 5.
            assertThatThrownBy(() -> entry(1, Long.MIN_VALUE, 5)).isInstanceOf(IllegalArgumentException.class);
            assertThat(entry(1, 5, Long.MIN_VALUE).lastOffset()).isEqualTo(Long.MIN_VALUE);
            assertThatThrownBy(() -> new ManifestEntry(1, 1, 1, 1, 1, 1, 1, "a\uD800b"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("surrogate");
            assertThatThrownBy(() -> new ManifestEntry(1, 1, 1, 1, 1, 1, 1, "\uDC00"))
                    .isInstanceOf(IllegalArgumentException.class);
            for (String notRelative : List.of("", "../x", "a/../../x", "/abs", "a//b", "a/", "a\\b", "a\tb")) {
                assertThatThrownBy(() -> new ManifestEntry(1, 1, 1, 1, 1, 1, 1, notRelative))
                        .as(notRelative).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("object key");
            }
            String longest = "\u00e9".repeat(ManifestEntry.MAX_KEY_BYTES / 2) + "a"; // 65535 bytes
            assertThat(new ManifestEntry(1, 1, 1, 1, 1, 1, 1, longest).objectKey()).isEqualTo(longest);
            assertThatThrownBy(() -> new ManifestEntry(1, 1, 1, 1, 1, 1, 1, longest + "a"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65536 bytes");
        }

        @Test
        void theEntriesCannotBeChangedThroughTheList() {
            assertThatThrownBy(() -> M.entries().add(entry(9, 100, 101))).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> M.entries().set(0, D)).isInstanceOf(UnsupportedOperationException.class);
        }

        @Test
        void ofCopiesItsInput() {
            List<ManifestEntry> list = new ArrayList<>(List.of(A, B));
            Manifest m = Manifest.of(list);
            list.add(C);
            assertThat(m.entries()).containsExactly(A, B);
        }
    }

    @Nested
    class Find {

        @Test
        void anOffsetInsideAnEntryFindsIt() {
            assertThat(M.find(10)).isEqualTo(new ManifestLookup(Kind.ENTRY, A));
            assertThat(M.find(19)).isEqualTo(new ManifestLookup(Kind.ENTRY, A));
            assertThat(M.find(20)).isEqualTo(new ManifestLookup(Kind.ENTRY, B));
            assertThat(M.find(40)).isEqualTo(new ManifestLookup(Kind.ENTRY, C));
            assertThat(M.find(59)).isEqualTo(new ManifestLookup(Kind.ENTRY, D));
        }

        @Test
        void anOffsetBelowTheOldestEntryIsBelowNamingTheOldest() {
            assertThat(M.find(0)).isEqualTo(new ManifestLookup(Kind.BELOW, A));
            assertThat(M.find(9)).isEqualTo(new ManifestLookup(Kind.BELOW, A));
        }

        @Test
        void anOffsetBetweenEntriesIsAGapNamingTheNextEntry() {
            assertThat(M.find(30)).isEqualTo(new ManifestLookup(Kind.GAP, C));
            assertThat(M.find(39)).isEqualTo(new ManifestLookup(Kind.GAP, C));
            assertThat(M.find(41)).isEqualTo(new ManifestLookup(Kind.GAP, D));
        }

        @Test
        void anOffsetAboveTheNewestEntryIsAbove() {
            assertThat(M.find(60).kind()).isEqualTo(Kind.ABOVE);
            assertThat(M.find(60).entry()).isNull();
            // Unsigned: 2^63 is above every entry, not below.
            assertThat(M.find(Long.MIN_VALUE).kind()).isEqualTo(Kind.ABOVE);
            assertThat(M.find(-1L).kind()).isEqualTo(Kind.ABOVE);
        }

        @Test
        void nothingIsFoundInTheEmptyManifest() {
            assertThat(Manifest.empty().find(0).kind()).isEqualTo(Kind.ABOVE);
            assertThat(Manifest.empty().find(-1L).kind()).isEqualTo(Kind.ABOVE);
        }
    }

    @Nested
    class Truncation {

        @Test
        void aCutBetweenEntriesDropsEveryEntryAbove() {
            assertThat(M.truncatedAt(30).entries()).containsExactly(A, B);
            assertThat(M.truncatedAt(41).entries()).containsExactly(A, B, C);
        }

        @Test
        void anEntryStraddlingTheCutGoesWhole() {
            assertThat(M.truncatedAt(25).entries()).containsExactly(A);
            assertThat(M.truncatedAt(59).entries()).containsExactly(A, B, C);
            assertThat(M.truncatedAt(40).entries()).containsExactly(A, B);
        }

        @Test
        void aCutAtAnEntrysBaseDropsIt() {
            assertThat(M.truncatedAt(20).entries()).containsExactly(A);
            assertThat(M.truncatedAt(10).entries()).isEmpty();
        }

        @Test
        void aCutAboveEveryEntryChangesNothing() {
            assertThat(M.truncatedAt(60)).isSameAs(M);
            assertThat(M.truncatedAt(-1L)).isSameAs(M);
        }

        @Test
        void resetDropsEveryEntry() {
            assertThat(M.reset()).isEqualTo(Manifest.empty());
            assertThat(M.size()).isEqualTo(4);
        }
    }

    @Nested
    class RemoteRetention {

        @Test
        void entriesWhollyAtOrBelowTheOffsetGo() {
            assertThat(M.withoutEntriesThrough(19).entries()).containsExactly(B, C, D);
            assertThat(M.withoutEntriesThrough(35).entries()).containsExactly(C, D);
            assertThat(M.withoutEntriesThrough(40).entries()).containsExactly(D);
            assertThat(M.withoutEntriesThrough(59).entries()).isEmpty();
        }

        @Test
        void anEntryHoldingTheOffsetAndLaterOnesStays() {
            assertThat(M.withoutEntriesThrough(25).entries()).containsExactly(B, C, D);
            assertThat(M.withoutEntriesThrough(10).entries()).containsExactly(A, B, C, D);
        }

        @Test
        void anOffsetBelowEveryEntryChangesNothing() {
            assertThat(M.withoutEntriesThrough(9)).isSameAs(M);
        }
    }

    @Nested
    class Totals {

        @Test
        void totalsSumSizesAndSpanTheTimestamps() {
            ManifestTotals t = M.totals();
            assertThat(t.entries()).isEqualTo(4);
            assertThat(t.bytes()).isEqualTo(1001 + 1002 + 1004 + 1006);
            assertThat(t.oldestTimestampMicros()).hasValue(100);
            assertThat(t.newestTimestampMicros()).hasValue(590);
        }

        @Test
        void timestampsNeedNotRiseWithOffsetsSoTheExtremesAreTakenOverAllEntries() {
            ManifestEntry early = new ManifestEntry(1, 0, 9, 10, 500, 900, 0, "a");
            ManifestEntry late = new ManifestEntry(2, 10, 19, 20, 300, 700, 0, "b");
            ManifestTotals t = Manifest.of(List.of(early, late)).totals();
            assertThat(t.oldestTimestampMicros()).hasValue(300);
            assertThat(t.newestTimestampMicros()).hasValue(900);
            assertThat(Manifest.empty().withEntry(early).withEntry(late).totals()).isEqualTo(t);
        }

        @Test
        void totalsFollowEveryOperation() {
            assertThat(M.truncatedAt(30).totals().bytes()).isEqualTo(1001 + 1002);
            assertThat(M.withoutEntriesThrough(30).totals().entries()).isEqualTo(2);
            assertThat(M.reset().totals().entries()).isZero();
        }
    }

    // ---- against a model: a plain list scanned linearly ----

    @Provide
    Arbitrary<Manifest> manifests() {
        return ManifestArbitraries.manifests(25);
    }

    @Provide
    Arbitrary<Long> offsets() {
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 1_200), Arbitraries.longs());
    }

    /** The offsets worth asking about: every entry's edges and their neighbours, and one arbitrary. */
    private static List<Long> probes(Manifest m, long extra) {
        List<Long> probes = new ArrayList<>(List.of(extra, 0L, -1L, Long.MIN_VALUE, Long.MAX_VALUE));
        for (ManifestEntry e : m.entries()) {
            probes.addAll(List.of(e.baseOffset() - 1, e.baseOffset(), e.lastOffset(), e.lastOffset() + 1));
        }
        return probes;
    }

    private static ManifestLookup modelFind(List<ManifestEntry> entries, long offset) {
        for (int i = 0; i < entries.size(); i++) {
            ManifestEntry e = entries.get(i);
            if (e.holds(offset)) {
                return new ManifestLookup(Kind.ENTRY, e);
            }
            if (Long.compareUnsigned(offset, e.baseOffset()) < 0) {
                return new ManifestLookup(i == 0 ? Kind.BELOW : Kind.GAP, e);
            }
        }
        return new ManifestLookup(Kind.ABOVE, null);
    }

    @Property(tries = 300)
    void findAgreesWithALinearScan(@ForAll("manifests") Manifest m, @ForAll("offsets") long extra) {
        for (long offset : probes(m, extra)) {
            assertThat(m.find(offset)).as("find(%s)", Long.toUnsignedString(offset))
                    .isEqualTo(modelFind(m.entries(), offset));
        }
    }

    @Property(tries = 300)
    void truncatedAtKeepsExactlyTheEntriesEndingBelowTheCut(@ForAll("manifests") Manifest m, @ForAll("offsets") long extra) {
        for (long cut : probes(m, extra)) {
            List<ManifestEntry> expected = m.entries().stream()
                    .filter(e -> Long.compareUnsigned(e.lastOffset(), cut) < 0).toList();
            Manifest t = m.truncatedAt(cut);
            assertThat(t.entries()).containsExactlyElementsOf(expected);
            assertThat(t.totals()).isEqualTo(Manifest.of(expected).totals());
            // Nothing at or past the cut is held any more.
            assertThat(t.find(cut).kind()).isEqualTo(Kind.ABOVE);
        }
    }

    @Property(tries = 300)
    void withoutEntriesThroughKeepsExactlyTheEntriesEndingAboveTheOffset(@ForAll("manifests") Manifest m,
                                                                       @ForAll("offsets") long extra) {
        for (long offset : probes(m, extra)) {
            List<ManifestEntry> expected = m.entries().stream()
                    .filter(e -> Long.compareUnsigned(e.lastOffset(), offset) > 0).toList();
            Manifest r = m.withoutEntriesThrough(offset);
            assertThat(r.entries()).containsExactlyElementsOf(expected);
            assertThat(r.totals()).isEqualTo(Manifest.of(expected).totals());
        }
    }

    @Property(tries = 300)
    void appendingOneByOneBuildsTheSameManifestAndTotals(@ForAll("manifests") Manifest m) {
        Manifest built = Manifest.empty();
        for (ManifestEntry e : m.entries()) {
            built = built.withEntry(e);
        }
        assertThat(built).isEqualTo(m);
        assertThat(built.totals()).isEqualTo(m.totals());
        long bytes = 0;
        for (ManifestEntry e : m.entries()) {
            bytes += e.sizeBytes();
        }
        assertThat(m.totals().bytes()).isEqualTo(bytes);
        assertThat(m.totals().entries()).isEqualTo(m.size());
        if (!m.isEmpty()) {
            assertThat(m.totals().oldestTimestampMicros().getAsLong()).isEqualTo(m.entries().stream()
                    .mapToLong(ManifestEntry::oldestTimestampMicros).reduce((a, b) -> Long.compareUnsigned(a, b) <= 0 ? a : b)
                    .getAsLong());
            assertThat(m.totals().newestTimestampMicros().getAsLong()).isEqualTo(m.entries().stream()
                    .mapToLong(ManifestEntry::newestTimestampMicros).reduce((a, b) -> Long.compareUnsigned(a, b) >= 0 ? a : b)
                    .getAsLong());
        }
    }

    @Property(tries = 300)
    void withEntryRefusesEveryEntryThatOverlapsOrPrecedesTheNewest(@ForAll("manifests") Manifest m,
                                                                  @ForAll("offsets") long base) {
        if (m.isEmpty()) {
            return;
        }
        long newestLast = m.newestEntry().orElseThrow().lastOffset();
        ManifestEntry candidate = new ManifestEntry(0, base, base, 0, 0, 0, 0, "k");
        if (Long.compareUnsigned(base, newestLast) > 0) {
            assertThat(m.withEntry(candidate).newestEntry()).contains(candidate);
        } else {
            assertThatThrownBy(() -> m.withEntry(candidate)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
