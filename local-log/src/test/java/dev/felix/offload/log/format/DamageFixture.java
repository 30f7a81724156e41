package dev.felix.offload.log.format;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.SegmentWriter;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A small v4 segment holding every record kind, written with {@link SegmentWriter}, with its bytes
 * and record boundaries: the subject of the cut and bit-flip tests.
 */
final class DamageFixture {

    static final long BASE = 100;
    static final long TS = 1_700_000_000_000_000L;

    final List<Record> records;
    final byte[] bytes;
    /** boundaries[k] is where record k starts; boundaries[records.size()] is the file size. */
    final long[] boundaries;

    private DamageFixture(List<Record> records, byte[] bytes, long[] boundaries) {
        this.records = records;
        this.bytes = bytes;
        this.boundaries = boundaries;
    }

    static List<Record> records() {
        return List.of(
                Record.generationStart(BASE, TS, 7),
                Record.plain(BASE + 1, TS + 1, "alpha".getBytes(StandardCharsets.UTF_8)),
                Record.batchOpen(BASE + 2, TS + 2, new BatchTag(42, 9, 3), "b0-payload".getBytes(StandardCharsets.UTF_8)),
                Record.batchContinue(BASE + 3, TS + 3, "b1".getBytes(StandardCharsets.UTF_8)),
                Record.batchContinue(BASE + 4, TS + 4, "b2".getBytes(StandardCharsets.UTF_8)),
                Record.plain(BASE + 5, TS + 5, new byte[0]));
    }

    /** Writes the segment with the real writer under {@code dir} and reads its bytes back. */
    static DamageFixture write(Path dir) throws IOException {
        Path scratch = Files.createDirectories(dir.resolve("fixture-writer"));
        SegmentFile file = SegmentFile.in(scratch, 0);
        List<Record> records = records();
        try (SegmentWriter w = SegmentWriter.create(file, SegmentHeader.v4(BASE, TS), SegmentWriter.DEFAULT_INDEX_SPACING_BYTES)) {
            for (Record r : records) {
                w.append(r);
            }
        }
        byte[] bytes = Files.readAllBytes(file.log());
        List<Long> starts = new ArrayList<>();
        long p = SegmentHeader.LENGTH;
        for (Record r : records) {
            starts.add(p);
            p += r.encodedLength();
        }
        starts.add(p);
        if (p != bytes.length) {
            throw new IllegalStateException("writer wrote " + bytes.length + " bytes, expected " + p);
        }
        return new DamageFixture(records, bytes, starts.stream().mapToLong(Long::longValue).toArray());
    }

    /** The index k of the record whose bytes contain {@code position} (or the count at the end). */
    int recordAt(long position) {
        int k = 0;
        while (k < records.size() && boundaries[k + 1] <= position) {
            k++;
        }
        return k;
    }
}
