package dev.felix.offload.copy;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The offsets a shard holds right now, as read from its directory: the local log's segments (each
 * segment's base from its own header, the newest one's end from a walk of its record headers) and
 * the entries of its manifest. What {@link ObjectRelease} asks before an object may go on the
 * grounds that its records are held elsewhere: the question is answered from the files, never
 * assumed from a name.
 *
 * <p>Offsets are unsigned; ranges are closed ({@code first..last}), so the top offset needs no
 * "one past".
 */
public final class HeldOffsets {

    /** A closed range of offsets and what holds it. */
    public record Range(long first, long last, Source source) {
        public Range {
            Objects.requireNonNull(source, "source");
            if (Long.compareUnsigned(first, last) > 0) {
                throw new IllegalArgumentException("empty range " + Long.toUnsignedString(first) + ".."
                        + Long.toUnsignedString(last));
            }
        }
    }

    /** What holds a range. */
    public enum Source {
        /** Segment files in the shard directory. */
        LOCAL,
        /** Objects the shard's manifest names. */
        ENTRIES
    }

    private static final Comparator<Range> BY_FIRST = (a, b) -> Long.compareUnsigned(a.first(), b.first());

    private final List<Range> local;
    private final List<Range> entries;

    private HeldOffsets(List<Range> local, List<Range> entries) {
        this.local = List.copyOf(local);
        this.entries = List.copyOf(entries);
    }

    /**
     * What the shard directory {@code dir} holds now: its local segments, and the entries of
     * {@code manifest} but those naming a key in {@code except} (the objects being judged, which
     * cannot hold their own records "elsewhere"). A local segment whose header cannot be read holds
     * nothing here: unknown counts as not held.
     */
    public static HeldOffsets of(Path dir, String shard, Manifest manifest, Set<String> except) throws IOException {
        List<Range> entries = new ArrayList<>();
        for (ManifestEntry e : manifest.entries()) {
            if (!except.contains(e.objectKey())) {
                entries.add(new Range(e.baseOffset(), e.lastOffset(), Source.ENTRIES));
            }
        }
        return new HeldOffsets(localRanges(dir, shard), entries);
    }

    /** For tests and callers that already know the ranges. */
    public static HeldOffsets of(List<Range> local, List<Range> entries) {
        return new HeldOffsets(local, entries);
    }

    /** The local log's ranges, one per segment that holds a record; empty when nothing is local. */
    static List<Range> localRanges(Path dir, String shard) throws IOException {
        List<SegmentFile> files = SegmentFile.list(dir);
        List<long[]> bases = new ArrayList<>(); // {id, base}
        for (SegmentFile f : files) {
            try {
                bases.add(new long[] {f.id(), readBase(f, shard)});
            } catch (NoSuchFileException gone) {
                // removed since the listing: holds nothing now
            } catch (CorruptionException damaged) {
                return List.of(); // a header that does not decode: what is local is unknown, so nothing is held
            }
        }
        List<Range> out = new ArrayList<>();
        for (int i = 0; i < bases.size(); i++) {
            long base = bases.get(i)[1];
            long end; // one past the segment's last record
            if (i + 1 < bases.size()) {
                end = bases.get(i + 1)[1];
            } else {
                SegmentFile newest = SegmentFile.in(dir, bases.get(i)[0]);
                try {
                    end = endOf(newest, shard);
                } catch (NoSuchFileException gone) {
                    continue;
                }
            }
            if (Long.compareUnsigned(end, base) > 0) {
                out.add(new Range(base, end - 1, Source.LOCAL));
            }
        }
        return out;
    }

    private static long readBase(SegmentFile f, String shard) throws IOException, CorruptionException {
        ByteBuffer head = ByteBuffer.allocate(SegmentHeader.LENGTH);
        try (FileChannel ch = FileChannel.open(f.log(), StandardOpenOption.READ)) {
            for (int n = 0; n >= 0 && head.hasRemaining(); ) {
                n = ch.read(head);
            }
        }
        return SegmentHeader.decode(head.flip(), new dev.felix.offload.log.format.CorruptionSite(shard, f.id(), 0))
                .baseOffset();
    }

    /** One past the last whole record of the newest segment (a torn tail being written does not count). */
    private static long endOf(SegmentFile f, String shard) throws IOException {
        try (SegmentScanner scanner = SegmentScanner.open(f.log(), shard, f.id(), ScanDepth.HEADERS)) {
            try {
                while (scanner.nextHeader() != null) {
                    // headers only, each verified
                }
            } catch (CorruptionException e) {
                if (e.kind() != CorruptionKind.TRUNCATED) {
                    return scanner.nextOffset(); // held up to the damage, not beyond
                }
            }
            return scanner.nextOffset();
        } catch (CorruptionException e) {
            return 0; // the header itself: nothing known to be held
        }
    }

    /** Whether every offset of {@code first..last} is held, locally or by an entry (or by both, in parts). */
    public boolean holds(long first, long last) {
        return firstNotHeld(first, last) == null;
    }

    /** Whether every offset of {@code first..last} is held by the local log alone. */
    public boolean holdsLocally(long first, long last) {
        return uncovered(local, first, last) == null;
    }

    /** The first offset of {@code first..last} held nowhere, or null when all are held. */
    public Long firstNotHeld(long first, long last) {
        List<Range> all = new ArrayList<>(local);
        all.addAll(entries);
        return uncovered(all, first, last);
    }

    /** The local log's first offset, when anything is local. */
    public java.util.OptionalLong localFirst() {
        return local.isEmpty() ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(local.get(0).first());
    }

    private static Long uncovered(List<Range> ranges, long first, long last) {
        List<Range> sorted = new ArrayList<>(ranges);
        sorted.sort(BY_FIRST);
        long want = first;
        for (Range r : sorted) {
            if (Long.compareUnsigned(r.first(), want) > 0) {
                break; // a hole at want
            }
            if (Long.compareUnsigned(r.last(), want) >= 0) {
                if (Long.compareUnsigned(r.last(), last) >= 0) {
                    return null;
                }
                want = r.last() + 1;
            }
        }
        return want;
    }

    @Override
    public String toString() {
        return "HeldOffsets[local " + describe(local) + ", entries " + describe(entries) + "]";
    }

    private static String describe(List<Range> ranges) {
        StringBuilder b = new StringBuilder();
        for (Range r : ranges) {
            b.append(b.length() == 0 ? "" : ",").append(Long.toUnsignedString(r.first())).append("..")
                    .append(Long.toUnsignedString(r.last()));
        }
        return b.length() == 0 ? "none" : b.toString();
    }
}
