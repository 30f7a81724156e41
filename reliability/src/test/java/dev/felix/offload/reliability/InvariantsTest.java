package dev.felix.offload.reliability;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The checker the crash and fault tests rely on can fail: each promise, broken by hand on a root
 * that one in-process pass offloaded to the filesystem store, is reported.
 */
class InvariantsTest {

    @TempDir
    Path tmp;

    private Path root;
    private ShardWriter writer;
    private ObjectStore store;
    private Invariants invariants;

    @BeforeEach
    void offloadOnce() throws Exception {
        root = Files.createDirectories(tmp.resolve("data"));
        writer = new ShardWriter(root, new ShardKey("acme", "check", "stream-0", 0), 4096, 300, 11);
        writer.open();
        writer.append(300);
        writer.close();
        store = StoreTarget.filesystem(tmp.resolve("store")).open();
        new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults()
                .withLocalRetention(new LocalRetention.KeepSegments(2)).withUnlinkSettle(java.time.Duration.ofMillis(300)), StepHook.none(), Map.of(),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        invariants = new Invariants(root, List.of(writer), store);
        Invariants.Seen seen = invariants.check("after one pass");
        assertThat(seen.entries()).isGreaterThan(3);
        assertThat(seen.remoteRecords()).isPositive();
        assertThat(seen.orphans()).isZero();
    }

    private ManifestEntry firstEntry() throws Exception {
        return ManifestStore.read(writer.dir()).entries().get(0);
    }

    @Test
    void aRecordedObjectWithOtherBytesOfTheSameSizeIsReported() throws Exception {
        ManifestEntry e = firstEntry();
        byte[] bytes = store.readAll(e.objectKey(), (int) e.sizeBytes(), OptionalLong.empty());
        bytes[bytes.length / 2] ^= 1;
        store.put(e.objectKey(), UploadBody.ofBytes(bytes));
        assertThatThrownBy(() -> Invariants.checkFresh(root, List.of(writer), store, "rot"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("crc32");
    }

    @Test
    void aKeyNamedByTwoManifestsIsReported() throws Exception {
        // A second shard whose manifest names the first shard's oldest object (a copied shard directory).
        ShardWriter twin = new ShardWriter(root, new ShardKey("acme", "check", "stream-1", 0), 4096, 300, 12);
        twin.open();
        twin.append(10);
        twin.close();
        ManifestStore.open(twin.dir()).save(dev.felix.offload.manifest.Manifest.empty().withEntry(firstEntry()));
        assertThatThrownBy(() -> Invariants.checkFresh(root, List.of(writer, twin), store, "twins"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("named by the manifests of both");
    }

    @Test
    void aRecordedObjectThatIsGoneIsReported() throws Exception {
        store.delete(firstEntry().objectKey());
        assertThatThrownBy(() -> invariants.check("gone")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("no such object");
    }

    @Test
    void aLocalSegmentGoneWithoutAnEntryIsReported() throws Exception {
        List<SegmentFile> local = SegmentFile.list(writer.dir());
        SegmentFile newestSealed = local.get(local.size() - 2);
        // Forget its entry, as a pass that unlinked before recording would have left things.
        var manifest = ManifestStore.read(writer.dir());
        var kept = manifest.entries().stream().filter(x -> x.segmentId() != newestSealed.id()).toList();
        Files.delete(ManifestStore.fileIn(writer.dir()));
        ManifestStore fresh = ManifestStore.open(writer.dir());
        var m = dev.felix.offload.manifest.Manifest.empty();
        for (ManifestEntry x : kept) {
            m = m.withEntry(x);
        }
        fresh.save(m);
        Files.delete(newestSealed.log());
        assertThatThrownBy(() -> invariants.check("unlinked without an entry")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("gone locally");
    }

    @Test
    void anOrphanOfASegmentThatIsGoneLocallyIsReported() throws Exception {
        String node = Invariants.nodeId(root).orElseThrow();
        store.put(node + "/" + writer.name() + "/00000000000000000000-00000000000000000000.index.bak",
                UploadBody.ofBytes(new byte[] {1}));
        assertThatThrownBy(() -> invariants.check("stray")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("unexpected object");
    }
}
