package dev.felix.offload.log;

import dev.felix.offload.log.SegmentBytes.Outcome;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@link SegmentWriter} writes, and what it refuses to write. */
class SegmentWriterTest {

    private static final long TS = 1_700_000_000_000_000L;
    private static final byte[] P = "payload".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path shard;

    private SegmentWriter create(SegmentHeader header) throws IOException {
        return SegmentWriter.create(SegmentFile.in(shard, 0), header, SegmentWriter.DEFAULT_INDEX_SPACING_BYTES);
    }

    private Outcome<Record> readBack() throws IOException {
        return SegmentBytes.readRecords(SegmentFile.in(shard, 0).log(), shard.getFileName().toString(), 0);
    }

    @Test
    void createWritesAndSyncsTheHeaderBeforeAnyRecord() throws IOException {
        try (SegmentWriter w = create(SegmentHeader.v3(500, TS))) {
            assertThat(Files.readAllBytes(SegmentFile.in(shard, 0).log())).containsExactly(SegmentHeader.v3(500, TS).encode());
            assertThat(w.size()).isEqualTo(32);
            assertThat(w.nextOffset()).isEqualTo(500);
        }
    }

    @Test
    void createRefusesAnExistingSegmentFile() throws IOException {
        Files.write(SegmentFile.in(shard, 0).log(), new byte[] {1, 2, 3});
        assertThatThrownBy(() -> create(SegmentHeader.v3(0, TS))).isInstanceOf(FileAlreadyExistsException.class);
        assertThat(Files.readAllBytes(SegmentFile.in(shard, 0).log())).containsExactly(1, 2, 3);
    }

    @Test
    void refusesAnOffsetThatDoesNotFollowAndWritesNothing() throws IOException {
        try (SegmentWriter w = create(SegmentHeader.v3(10, TS))) {
            assertThatThrownBy(() -> w.append(Record.plain(11, TS, P))).as("skips one")
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> w.append(Record.plain(9, TS, P))).as("below the base")
                    .isInstanceOf(IllegalArgumentException.class);
            w.append(Record.plain(10, TS, P));
            long size = w.size();
            assertThatThrownBy(() -> w.append(Record.plain(10, TS, P))).as("repeats")
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> w.append(Record.plain(12, TS, P))).as("gap")
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(w.size()).isEqualTo(size);
            assertThat(w.nextOffset()).isEqualTo(11);
            assertThat(Files.size(SegmentFile.in(shard, 0).log())).isEqualTo(size);
        }
        Outcome<Record> out = readBack();
        assertThat(out.clean()).isTrue();
        assertThat(out.items()).containsExactly(Record.plain(10, TS, P));
    }

    @Test
    void refusesProducerMarksInAV2Segment() throws IOException {
        try (SegmentWriter w = create(new SegmentHeader(SegmentHeader.VERSION_2, 0, TS))) {
            assertThatThrownBy(() -> w.append(Record.batchOpen(0, TS, new BatchTag(1, 0, 2), P)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> w.append(Record.batchContinue(0, TS, P)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> w.append(Record.generationStart(0, TS, 1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(w.size()).isEqualTo(32);
            w.append(Record.plain(0, TS, P)); // plain records are fine in v2
        }
        Outcome<Record> out = readBack();
        assertThat(out.clean()).isTrue();
        assertThat(out.header().version()).isEqualTo(2);
        assertThat(out.items()).containsExactly(Record.plain(0, TS, P));
    }

    @Test
    void refusesAGenerationStartInAV3Segment() throws IOException {
        try (SegmentWriter w = create(SegmentHeader.v3(0, TS))) {
            assertThatThrownBy(() -> w.append(Record.generationStart(0, TS, 4)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(w.size()).isEqualTo(32);
            w.append(Record.batchOpen(0, TS, new BatchTag(1, 0, 2), P));
            w.append(Record.batchContinue(1, TS, P));
        }
        assertThat(readBack().items()).hasSize(2);
    }

    @Test
    void writesAGenerationStartInAV4Segment() throws IOException {
        try (SegmentWriter w = create(SegmentHeader.v4(7, TS))) {
            w.append(Record.generationStart(7, TS, 4));
            w.append(Record.plain(8, TS, P));
        }
        Outcome<Record> out = readBack();
        assertThat(out.clean()).isTrue();
        assertThat(out.items()).containsExactly(Record.generationStart(7, TS, 4), Record.plain(8, TS, P));
    }

    @Test
    void indexHasAnEntryForTheFirstRecordThenOneEverySpacingBytes() throws IOException {
        byte[] payload = new byte[100]; // each record is 128 bytes
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(shard, 0), SegmentHeader.v3(0, TS), 300)) {
            for (int i = 0; i < 10; i++) {
                w.append(Record.plain(i, TS, payload));
            }
            SegmentIndex idx = w.index();
            // positions 32,160,288,416,544,672,800,928,1056,1184: entries once 300 bytes past the last entry
            assertThat(idx.baseOffset()).isZero();
            assertThat(idx.size()).isEqualTo(4);
            assertThat(new long[] {idx.offsetAt(0), idx.offsetAt(1), idx.offsetAt(2), idx.offsetAt(3)})
                    .containsExactly(0, 3, 6, 9);
            assertThat(new long[] {idx.positionAt(0), idx.positionAt(1), idx.positionAt(2), idx.positionAt(3)})
                    .containsExactly(32, 416, 800, 1184);
            w.writeIndex();
        }
        assertThat(Files.list(shard).map(p -> p.getFileName().toString()).toList())
                .containsExactlyInAnyOrder("00000000000000000000.log", "00000000000000000000.index");
    }
}
