package dev.felix.offload.restore;

import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.pass.TestRoots;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Rebuilding a manifest from the store, on the filesystem store. */
class ShardRestoreTest {

    @TempDir
    Path tmp;

    private Path root;
    private FilesystemStore store;
    private Path shard;
    private Manifest original;
    private Map<Path, List<Record>> written;
    private final SegmentKeys keys = new SegmentKeys("", "node-a");

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        written = TestRoots.write(root, 1, 1500, 3);
        shard = written.keySet().iterator().next();
        PassReport report = new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults()
                .withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300)), StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.shards()).isNotEmpty();
        original = ManifestStore.read(shard);
        assertThat(original.size()).isGreaterThanOrEqualTo(4);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private ShardRestore.Result restore(boolean merge) throws Exception {
        return new ShardRestore(root, name(), keys, "", store, store, merge, ProgressListener.none()).run();
    }

    private String name() {
        return shard.getFileName().toString();
    }

    private void removeShard() throws Exception {
        try (var files = Files.list(shard)) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        Files.delete(shard);
    }

    @Test
    void rebuildsEveryFieldOfEveryEntryFromTheObjects() throws Exception {
        removeShard();

        ShardRestore.Result r = restore(false);

        assertThat(r.created()).isTrue();
        assertThat(r.restored()).isEqualTo(original.entries());
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(original.entries());
        assertThat(root.resolve(ShardRestore.WORK_DIR)).doesNotExist();
    }

    @Test
    void neverReplacesAManifestAndAMergeAddsEveryMissingEntryBelowTheLocalLog() throws Exception {
        List<ManifestEntry> all = original.entries();
        assertThatThrownBy(() -> restore(false)).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining("never replaces");
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(all);

        // A manifest from an old snapshot of a later state: only the newest two entries.
        ManifestStore.open(shard).save(Manifest.of(all.subList(all.size() - 2, all.size())));
        // And one object above what that manifest holds, which a merge must not add.
        ShardRestore.Result r = restore(true);

        assertThat(r.restored()).isEqualTo(all.subList(0, all.size() - 2));
        assertThat(r.present()).isEqualTo(all.subList(all.size() - 2, all.size()));
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(all);

        // One entry in the middle: the store's history below and above it, up to the local log, is all added
        // (entries above the newest one used to be left out, and read stopped there).
        ManifestStore.open(shard).save(Manifest.of(all.subList(1, 2)));
        ShardRestore.Result middle = restore(true);
        assertThat(middle.restored()).hasSize(all.size() - 1).doesNotContain(all.get(1));
        assertThat(middle.above()).isEmpty();
        assertThat(middle.whole()).isTrue();
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(all);
    }

    @Test
    void anObjectWhoseHeaderDisagreesWithItsKeyIsRefused() throws Exception {
        removeShard();
        ManifestEntry first = original.entries().get(0);
        byte[] bytes = store.readAll(first.objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
        store.put(keys.segmentKey(name(), 900_000, 50), UploadBody.ofBytes(bytes), PutOptions.defaults());

        assertThatThrownBy(() -> restore(false)).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining(keys.segmentKey(name(), 900_000, 50)).hasMessageContaining("base offset");
        assertThat(shard).doesNotExist();
    }

    @Test
    void aTruncatedOrDamagedObjectIsRefusedNamingItsKey() throws Exception {
        removeShard();
        ManifestEntry second = original.entries().get(1);
        byte[] bytes = store.readAll(second.objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
        store.put(second.objectKey(), UploadBody.ofBytes(Arrays.copyOf(bytes, bytes.length - 3)), PutOptions.defaults());

        assertThatThrownBy(() -> restore(false)).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining(second.objectKey()).hasMessageContaining("Truncated");

        bytes[bytes.length / 2] ^= 0x10;
        store.put(second.objectKey(), UploadBody.ofBytes(bytes), PutOptions.defaults());
        assertThatThrownBy(() -> restore(false)).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining(second.objectKey());
        assertThat(shard).doesNotExist();
    }

    @Test
    void keysWithoutTheNodeIdAreFoundAndOverlapsAcrossBothFormsAreRefused() throws Exception {
        removeShard();
        ManifestEntry first = original.entries().get(0);
        String legacy = first.objectKey().substring("node-a/".length());
        byte[] bytes = store.readAll(first.objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
        store.put(legacy, UploadBody.ofBytes(bytes), PutOptions.defaults());

        assertThatThrownBy(() -> restore(false)).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining("overlap").hasMessageContaining(legacy).hasMessageContaining(first.objectKey());

        store.delete(first.objectKey());
        ShardRestore.Result r = restore(false);
        assertThat(r.legacyKeys()).isEqualTo(1);
        assertThat(r.restored().get(0).objectKey()).isEqualTo(legacy);
        assertThat(r.restored().subList(1, r.restored().size())).isEqualTo(original.entries().subList(1, original.size()));
    }

    @Test
    void nothingUnderThePrefixIsARefusalThatCreatesNothing() throws Exception {
        ShardRestore restore = new ShardRestore(root, "acme_default_none_0-0123456789abcdef", keys, "", store, store,
                false, ProgressListener.none());
        assertThatThrownBy(restore::run).isInstanceOf(ShardRestore.RefusedException.class)
                .hasMessageContaining("nothing to restore");
        assertThat(root.resolve("acme_default_none_0-0123456789abcdef")).doesNotExist();
    }

    /** A lister whose listings leave out the keys {@code hidden} accepts: a store whose listings lag behind its writes. */
    private dev.felix.offload.store.ObjectLister lagging(java.util.function.Predicate<String> hidden) {
        return (prefix, continuation, maxKeys) -> {
            dev.felix.offload.store.ListPage page = store.listPage(prefix, continuation, maxKeys);
            return new dev.felix.offload.store.ListPage(page.entries().stream().filter(o -> !hidden.test(o.key()))
                    .toList(), page.continuation());
        };
    }

    @Test
    void anObjectEveryListingLeavesOutIsFoundByTheKeyTheChainImpliesOrItsHoleIsNamed() throws Exception {
        removeShard();
        List<ManifestEntry> all = original.entries();
        ManifestEntry late = all.get(all.size() / 2);

        ShardRestore.Result found = new ShardRestore(root, name(), keys, "", lagging(k -> k.equals(late.objectKey())),
                store, false, ProgressListener.none()).run();
        assertThat(found.lateKeys()).containsExactly(late.objectKey());
        assertThat(found.whole()).isTrue();
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(all);

        // Not even the key answers (the object is not there yet): the hole is named, the rest restored.
        removeShard();
        byte[] bytes = store.readAll(late.objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
        store.delete(late.objectKey());
        ShardRestore.Result holed = new ShardRestore(root, name(), keys, "", store, store, false,
                ProgressListener.none()).run();
        assertThat(holed.whole()).isFalse();
        assertThat(holed.holes()).containsExactly(new ShardRestore.Hole(late.baseOffset(), late.lastOffset(), false));
        assertThat(ManifestStore.read(shard).size()).isEqualTo(all.size() - 1);

        // It shows up: a merge records it, and the history is whole.
        store.put(late.objectKey(), UploadBody.ofBytes(bytes), PutOptions.defaults());
        ShardRestore.Result merged = new ShardRestore(root, name(), keys, "", store, store, true,
                ProgressListener.none()).run();
        assertThat(merged.restored()).containsExactly(late);
        assertThat(merged.whole()).isTrue();
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(all);
    }
    /**
     * Objects are downloaded and scanned several at a time (the downloads here wait until four are
     * under way at once, 30 s at most, so one at a time shows a most of one), and the outcome is the
     * one of one at a time: the same entries; and with two damaged objects, the refusal names the
     * first in key order, though the later one was read meanwhile, and nothing is written.
     */
    @Test
    void objectsAreReadSeveralAtATimeWithTheOutcomeOfOneAtATime() throws Exception {
        removeShard();
        java.util.concurrent.atomic.AtomicInteger under = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch four = new java.util.concurrent.CountDownLatch(4);
        dev.felix.offload.store.ForwardingObjectStore overlapping = new dev.felix.offload.store.ForwardingObjectStore(store) {
            @Override
            public dev.felix.offload.store.DownloadResult download(String key, Path target, OptionalLong expectedCrc32)
                    throws dev.felix.offload.store.StoreException {
                most.accumulateAndGet(under.incrementAndGet(), Math::max);
                four.countDown();
                try {
                    four.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    return super.download(key, target, expectedCrc32);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                } finally {
                    under.decrementAndGet();
                }
            }
        };
        ShardRestore.Result r = new ShardRestore(root, name(), keys, "", overlapping, overlapping, false,
                ProgressListener.none(), 4).run();
        assertThat(most.get()).as("downloads under way at once").isEqualTo(4);
        assertThat(r.restored()).isEqualTo(original.entries());
        assertThat(ManifestStore.read(shard).entries()).isEqualTo(original.entries());
        assertThat(root.resolve(ShardRestore.WORK_DIR)).doesNotExist();

        removeShard();
        List<ManifestEntry> all = original.entries();
        for (int i : new int[] {1, 3}) {
            byte[] bytes = store.readAll(all.get(i).objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
            store.put(all.get(i).objectKey(), UploadBody.ofBytes(Arrays.copyOf(bytes, bytes.length - 3)),
                    PutOptions.defaults());
        }
        for (int concurrency : new int[] {1, 4, 16}) {
            assertThatThrownBy(() -> new ShardRestore(root, name(), keys, "", store, store, false,
                    ProgressListener.none(), concurrency).run()).as("concurrency %d", concurrency)
                    .isInstanceOf(ShardRestore.RefusedException.class)
                    .hasMessageContaining(all.get(1).objectKey()).hasMessageNotContaining(all.get(3).objectKey());
            assertThat(shard).doesNotExist();
            assertThat(root.resolve(ShardRestore.WORK_DIR)).doesNotExist();
        }
    }
}
