package dev.felix.offload.manifest;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.util.ArrayList;
import java.util.List;

/** jqwik generators of manifest entries and whole valid manifests. */
final class ManifestArbitraries {

    private ManifestArbitraries() {
    }

    /**
     * Object keys: mostly the shapes offload writes, some of any Unicode (never a lone surrogate), all
     * of them relative object names ({@link ManifestEntry#keyProblem}).
     */
    static Arbitrary<String> keys() {
        Arbitrary<String> anyUnicode = Arbitraries.integers().between(0, Character.MAX_CODE_POINT)
                .filter(cp -> cp < Character.MIN_SURROGATE || cp > Character.MAX_SURROGATE)
                .list().ofMaxSize(40)
                .map(cps -> {
                    StringBuilder s = new StringBuilder();
                    cps.forEach(s::appendCodePoint);
                    return s.toString();
                })
                .filter(k -> ManifestEntry.keyProblem(k) == null);
        Arbitrary<String> offloadShape = Combinators.combine(
                Arbitraries.of("", "node-1/", "broker-7/", "n\u00f6de/"),
                Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz0123456789_-").ofMinLength(1).ofMaxLength(30),
                Arbitraries.longs().greaterOrEqual(0), Arbitraries.longs().greaterOrEqual(0))
                .as((node, dir, base, id) -> node + dir + "/" + String.format("%020d-%020d.segment", base, id));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, offloadShape),
                net.jqwik.api.Tuple.of(1, anyUnicode));
    }

    /** An entry with these offsets and arbitrary other fields. */
    static Arbitrary<ManifestEntry> entry(long base, long last) {
        return Combinators.combine(Arbitraries.longs(), Arbitraries.longs(), Arbitraries.longs(), Arbitraries.longs(),
                        Arbitraries.integers(), keys())
                .as((segment, size, oldest, newest, crc, key) ->
                        new ManifestEntry(segment, base, last, size, oldest, newest, crc, key));
    }

    /**
     * Valid manifests of up to {@code maxEntries} entries: half with offsets spread over the whole u64
     * range (top bit set too), half dense, with adjacent entries, single-offset entries and small gaps.
     */
    static Arbitrary<Manifest> manifests(int maxEntries) {
        return Arbitraries.oneOf(spread(maxEntries), dense(maxEntries))
                .flatMap(bounds -> {
                    List<Arbitrary<ManifestEntry>> entries = new ArrayList<>();
                    for (long[] b : bounds) {
                        entries.add(entry(b[0], b[1]));
                    }
                    return Combinators.combine(entries).as(Manifest::of);
                });
    }

    /** Offsets drawn anywhere in the u64 range, sorted unsigned; each entry one or two of them. */
    private static Arbitrary<List<long[]>> spread(int maxEntries) {
        return Combinators.combine(
                Arbitraries.longs().list().uniqueElements().ofMaxSize(2 * maxEntries),
                Arbitraries.of(true, false).list().ofSize(2 * maxEntries))
                .as((values, singles) -> {
                    List<Long> sorted = new ArrayList<>(values);
                    sorted.sort(Long::compareUnsigned);
                    List<long[]> bounds = new ArrayList<>();
                    int i = 0;
                    while (i < sorted.size()) {
                        boolean single = singles.get(bounds.size()) || i + 1 == sorted.size();
                        long base = sorted.get(i);
                        long last = single ? base : sorted.get(i + 1);
                        bounds.add(new long[] {base, last});
                        i += single ? 1 : 2;
                    }
                    return bounds;
                });
    }

    /** Small offsets laid out gap, span, gap, span...: gaps of 0 make adjacent entries. */
    private static Arbitrary<List<long[]>> dense(int maxEntries) {
        return Combinators.combine(
                Arbitraries.longs().between(0, 1_000),
                Arbitraries.longs().between(0, 3).list().ofMaxSize(maxEntries),
                Arbitraries.longs().between(0, 5).list().ofSize(maxEntries))
                .as((start, gaps, spans) -> {
                    List<long[]> bounds = new ArrayList<>();
                    long next = start;
                    for (int i = 0; i < gaps.size(); i++) {
                        long base = next + gaps.get(i);
                        long last = base + spans.get(i);
                        bounds.add(new long[] {base, last});
                        next = last + 1;
                    }
                    return bounds;
                });
    }
}
