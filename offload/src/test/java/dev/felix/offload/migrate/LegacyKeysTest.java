package dev.felix.offload.migrate;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.KeyOwnership;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LegacyKeysTest {

    @TempDir
    Path tmp;

    @Test
    void onlyASegmentOrIndexKeyWithoutANodeIdIsOneTheOperatorMayDelete() throws Exception {
        SegmentKeys keys = new SegmentKeys("tier", "n2");
        try (FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            LegacyKeys legacy = new LegacyKeys(new DataRoot(Files.createDirectories(tmp.resolve("root"))), store, keys,
                    new KeyOwnership(keys, List.of("n0")));
            String name = "00000000000000000100-00000000000000000002";
            assertThat(legacy.isLegacySegmentKey("tier/acme_x_0-0123456789abcdef/" + name + ".segment")).isTrue();
            assertThat(legacy.isLegacySegmentKey("tier/acme_x_0-0123456789abcdef/" + name + ".index")).isTrue();
            assertThat(legacy.isLegacySegmentKey("tier/dead-letters/acme_x_0-0123456789abcdef/" + name + ".segment"))
                    .isTrue();
            // another node's claim and lease, another node's segment, this node's, a former node's
            assertThat(legacy.isLegacySegmentKey("tier/n1/node.claim")).isFalse();
            assertThat(legacy.isLegacySegmentKey("tier/n1/node.lease.00000000000000000001.0123456789abcdef")).isFalse();
            assertThat(legacy.isLegacySegmentKey("tier/n1/acme_x_0-0123456789abcdef/" + name + ".segment")).isFalse();
            assertThat(legacy.isLegacySegmentKey("tier/n2/acme_x_0-0123456789abcdef/" + name + ".segment")).isFalse();
            assertThat(legacy.isLegacySegmentKey("tier/n0/acme_x_0-0123456789abcdef/" + name + ".segment")).isFalse();
            // other names, and keys outside the key prefix
            assertThat(legacy.isLegacySegmentKey("tier/acme_x_0-0123456789abcdef/notes.txt")).isFalse();
            assertThat(legacy.isLegacySegmentKey("acme_x_0-0123456789abcdef/" + name + ".segment")).isFalse();
        }
    }
}
