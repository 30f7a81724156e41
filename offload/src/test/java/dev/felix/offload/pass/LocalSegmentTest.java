package dev.felix.offload.pass;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LocalSegmentTest {

    private static LocalSegment segment(long id, long base) {
        return new LocalSegment(SegmentFile.in(Path.of("/shard"), id), SegmentHeader.v4(base, 1), 100);
    }

    private static ManifestEntry entry(long id, long base, long last) {
        return new ManifestEntry(id, base, last, 100, 1, 2, 7, "n1/s/" + base + ".segment");
    }

    @Test
    void anEntryIsThisSegmentsOnlyWithItsIdAndItsBaseOffset() {
        Manifest m = Manifest.of(List.of(entry(1, 0, 9), entry(2, 10, 19), entry(4, 30, 39), entry(-2L, -20L, -11L)));
        assertThat(segment(1, 0).hasEntryIn(m)).isTrue();
        assertThat(segment(2, 10).hasEntryIn(m)).isTrue();
        assertThat(segment(4, 30).hasEntryIn(m)).isTrue();
        assertThat(segment(-2L, -20L).hasEntryIn(m)).as("offsets compare unsigned").isTrue();
        assertThat(segment(3, 10).hasEntryIn(m)).as("another segment at an entry's base").isFalse();
        assertThat(segment(2, 15).hasEntryIn(m)).as("the entry's id, another base inside it").isFalse();
        assertThat(segment(3, 20).hasEntryIn(m)).as("in a gap").isFalse();
        assertThat(segment(5, 40).hasEntryIn(m)).as("above every entry").isFalse();
        assertThat(segment(1, 0).hasEntryIn(Manifest.empty())).isFalse();
    }
}
