package dev.felix.offload.log.recovery;

import dev.felix.offload.log.SegmentBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shard inspected from its directory alone is named as the data root's listing names it: by its
 * path under the root, so a dead-letter or group shard is not taken for a root-level one of the
 * same directory name.
 */
class ShardInspectorNamingTest {

    @TempDir
    Path root;

    @Test
    void aShardUnderDeadLettersIsNamedByItsPathUnderTheRoot() throws IOException {
        Path shard = root.resolve("dead-letters").resolve("acme_default_dlq_0-2222222222222222");
        SegmentBytes.writeSegment(shard, 0, new byte[33]);
        assertThat(ShardInspector.inspect(shard, RecoveryOptions.DEFAULT).name())
                .isEqualTo("dead-letters/acme_default_dlq_0-2222222222222222");
    }

    @Test
    void aShardUnderGroupsIsNamedByItsPathUnderTheRoot() throws IOException {
        Path shard = root.resolve("groups").resolve("acme_default_g1_0-1111111111111111");
        SegmentBytes.writeSegment(shard, 0, new byte[33]);
        assertThat(ShardInspector.inspect(shard, RecoveryOptions.DEFAULT).name())
                .isEqualTo("groups/acme_default_g1_0-1111111111111111");
    }

    @Test
    void aRootLevelShardKeepsItsDirectoryName() throws IOException {
        Path shard = root.resolve("acme_default_orders_0-0d3aed4b998d2798");
        SegmentBytes.writeSegment(shard, 0, new byte[33]);
        assertThat(ShardInspector.inspect(shard, RecoveryOptions.DEFAULT).name())
                .isEqualTo("acme_default_orders_0-0d3aed4b998d2798");
    }
}
