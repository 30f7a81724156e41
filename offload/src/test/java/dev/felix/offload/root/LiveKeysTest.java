package dev.felix.offload.root;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a root's live manifests name, read with the node's keys (keys in a shard's own prefix answered
 * from its manifest when asked) against the same read holding every key: the same answer for every
 * key, with only the unusual keys held.
 */
class LiveKeysTest {

    private static final SegmentKeys KEYS = new SegmentKeys("", "node-a");

    @TempDir
    Path root;

    private final String a = new ShardKey("acme", "default", "a", 0).directoryName();
    private final String b = new ShardKey("acme", "default", "b", 0).directoryName();
    private final String dead = "dead-letters/" + new ShardKey("acme", "default", "d", 0).directoryName();
    private final String gone = new ShardKey("acme", "default", "gone", 0).directoryName();

    private static ManifestEntry entry(long id, long base, String key) {
        return new ManifestEntry(id, base, base + 9, 100, 1, 2, 7, key);
    }

    private void manifest(String shard, ManifestEntry... entries) throws Exception {
        Path dir = Files.createDirectories(root.resolve(shard));
        ManifestStore.open(dir).save(Manifest.of(List.of(entries)));
    }

    @Test
    void answersAsTheReadHoldingEveryKeyWhileHoldingOnlyKeysOutsideTheirShardsPrefixes() throws Exception {
        String crossNamed = KEYS.segmentKey(a, 10, 1);
        String legacy = b + "/00000000000000000020-00000000000000000002.segment";
        String otherNode = "node-b/" + b + "/00000000000000000030-00000000000000000003.segment";
        manifest(a, entry(0, 0, KEYS.segmentKey(a, 0, 0)), entry(1, 10, crossNamed));
        manifest(dead, entry(0, 0, KEYS.segmentKey(dead, 0, 0)));
        manifest(b, entry(0, 0, KEYS.segmentKey(b, 0, 0)), entry(1, 10, crossNamed), entry(2, 20, legacy),
                entry(3, 30, otherNode));

        LiveKeys every = LiveKeys.read(new DataRoot(root));
        LiveKeys lazy = LiveKeys.read(new DataRoot(root), KEYS);

        List<String> probes = new ArrayList<>(List.of(KEYS.segmentKey(a, 0, 0), crossNamed, KEYS.segmentKey(dead, 0, 0),
                KEYS.segmentKey(b, 0, 0), legacy, otherNode, KEYS.segmentKey(a, 20, 2), KEYS.segmentKey(gone, 0, 0),
                KEYS.nodePrefix() + "node.claim", "node-a/x", "elsewhere"));
        for (String k : List.copyOf(probes)) {
            if (k.endsWith(SegmentKeys.SEGMENT_SUFFIX)) {
                probes.add(SegmentKeys.indexKeyFor(k));
            }
        }
        for (String k : probes) {
            assertThat(lazy.shardsNaming(k)).as("shards naming %s", k).isEqualTo(every.shardsNaming(k));
            for (String deleter : List.of(a, b, dead, gone)) {
                assertThat(lazy.namedByOtherThan(deleter, k)).as("%s named by a shard other than %s", k, deleter)
                        .isEqualTo(every.shardsNaming(k).stream().anyMatch(s -> !s.equals(deleter)));
            }
        }
        assertThat(lazy.shardsNaming(crossNamed)).containsExactly(a, b);
        assertThat(lazy.shardsNaming(SegmentKeys.indexKeyFor(KEYS.segmentKey(dead, 0, 0)))).containsExactly(dead);
        assertThat(lazy.unreadable()).isEqualTo(every.unreadable()).isEmpty();
        // b's three keys outside its own prefix, each with its index; nothing of a's and the dead letters' own
        assertThat(lazy.keysHeld()).isEqualTo(6);
        assertThat(every.keysHeld()).isEqualTo(12);
    }

    @Test
    void aManifestUnreadableWhenAskedCountsAsNamingTheKey() throws Exception {
        manifest(a, entry(0, 0, KEYS.segmentKey(a, 0, 0)));
        LiveKeys lazy = LiveKeys.read(new DataRoot(root), KEYS);
        Files.write(ManifestStore.fileIn(root.resolve(a)), new byte[] {1, 2, 3});

        assertThat(lazy.shardsNaming(KEYS.segmentKey(a, 50, 5))).as("a key a's manifest may name now").containsExactly(a);
    }

    @Test
    void neitherASecondNameOfAShardNorADanglingLinkCountsAsAnUnreadableManifest() throws Exception {
        manifest(a, entry(0, 0, KEYS.segmentKey(a, 0, 0)));
        manifest(b, entry(0, 0, KEYS.segmentKey(b, 0, 0)));
        Files.createSymbolicLink(root.resolve("zz-second-name-of-a"), root.resolve(a));
        Files.createSymbolicLink(root.resolve("zz-dangling"), root.resolve("not-mounted"));

        LiveKeys lazy = LiveKeys.read(new DataRoot(root), KEYS);
        assertThat(lazy.unreadable()).as("a link names nothing of its own").isEmpty();
        assertThat(lazy.shardsNaming(KEYS.segmentKey(a, 0, 0))).containsExactly(a);
    }

    @Test
    void aReadLetGoWhileTheRootIsListedReadsNoManifest() throws Exception {
        int count = dev.felix.offload.log.DataRoot.ENTRIES_PER_ASK + 3;
        for (int i = 0; i < count; i++) {
            manifest(new ShardKey("acme", "default", "s" + i, 0).directoryName(), entry(0, 0, "elsewhere/" + i));
        }
        List<String> askedFrom = new ArrayList<>();
        java.util.Optional<LiveKeys> read = LiveKeys.read(new DataRoot(root), KEYS, () -> {
            askedFrom.add(StackWalker.getInstance().walk(frames -> frames.skip(1).findFirst()
                    .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
                    .orElseThrow()));
            return true;
        });
        assertThat(read).isEmpty();
        assertThat(askedFrom).as("the first ask comes while the root is listed").containsExactly("DataRoot.list");

        assertThat(LiveKeys.read(new DataRoot(root), KEYS, () -> false)).get()
                .satisfies(live -> assertThat(live.shardsNaming("elsewhere/7")).hasSize(1));
    }
}
