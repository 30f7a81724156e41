package dev.felix.offload.retention;

import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which objects an expired entry's delete covers: the index only where the segment had one. */
class BatchDeletesTest {

    private static ManifestEntry entry(long bytes, String key) {
        return new ManifestEntry(3, 100, 199, bytes, 1, 2, 0x1234, key);
    }

    @Test
    void aSegmentAboveFourMibGoesWithItsIndexASmallerOneAlone() {
        String key = new SegmentKeys("", "node-a").segmentKey("orders", 100, 3);
        assertThat(BatchDeletes.objectsOf(entry(SegmentKeys.INDEX_OBJECT_ABOVE_BYTES + 1, key)))
                .containsExactly(key, SegmentKeys.indexKeyFor(key));
        assertThat(BatchDeletes.objectsOf(entry(SegmentKeys.INDEX_OBJECT_ABOVE_BYTES, key))).containsExactly(key);
        assertThat(BatchDeletes.objectsOf(entry(64 * 1024, key))).containsExactly(key);
        assertThat(BatchDeletes.objectsOf(entry(SegmentKeys.INDEX_OBJECT_ABOVE_BYTES + 1, "legacy/blob.bin")))
                .containsExactly("legacy/blob.bin");
    }
}
