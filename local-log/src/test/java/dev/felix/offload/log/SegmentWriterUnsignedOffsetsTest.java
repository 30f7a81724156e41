package dev.felix.offload.log;

import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A segment whose offsets run across 2^63 (offsets are u64). Its records write and read back fine.
 *
 * <p>EXPECTED TO FAIL against the current main code: {@link SegmentWriter#index()} builds the index
 * with {@link SegmentIndex#of}, which checks the order of offsets as signed longs and throws
 * IllegalArgumentException once an entry passes 2^63.
 *
 */
class SegmentWriterUnsignedOffsetsTest {

    @TempDir
    Path shard;

    @Test
    void indexOfASegmentWhoseOffsetsCrossTwoToThe63HasAnEntryPerRecord() throws IOException {
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(shard, 0), SegmentHeader.v3(Long.MAX_VALUE - 1, 1), 1)) {
            w.append(Record.plain(Long.MAX_VALUE - 1, 1, new byte[] {1}));
            w.append(Record.plain(Long.MAX_VALUE, 1, new byte[] {2}));
            w.append(Record.plain(Long.MIN_VALUE, 1, new byte[] {3})); // 2^63
            assertThat(w.nextOffset()).isEqualTo(Long.MIN_VALUE + 1);

            SegmentIndex index = w.index();
            assertThat(index.size()).isEqualTo(3);
            assertThat(index.offsetAt(2)).isEqualTo(Long.MIN_VALUE);
        }
    }
}
