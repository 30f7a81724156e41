package dev.felix.offload.manifest;

import dev.felix.offload.log.format.CorruptionException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Manifests decoded once per change of the file, and what the summary of one answers. */
class ManifestCacheTest {

    private static final String SHARD = "acme_default_orders_0-0d3aed4b998d2798";

    @TempDir
    Path root;
    Path shardDir;

    private static ManifestEntry entry(long segment, long base, long last) {
        return entry(segment, base, last, "node-1/" + SHARD + "/");
    }

    private static ManifestEntry entry(long segment, long base, long last, String dir) {
        return new ManifestEntry(segment, base, last, 4096 + segment, 1_700_000_000_000_000L + base,
                1_700_000_000_000_000L + last, (int) (segment * 0x01010101),
                dir + String.format("%020d-%020d.segment", base, segment));
    }

    @BeforeEach
    void shard() throws IOException {
        shardDir = Files.createDirectory(root.resolve(SHARD));
    }

    /** Writes the manifest as the broker or a pass would (a new file), dated {@code secondsAgo} ago. */
    private void write(Manifest m, long secondsAgo) throws IOException {
        Path temp = shardDir.resolve("temp");
        Files.write(temp, ManifestCodec.encode(m));
        Files.setLastModifiedTime(temp, FileTime.from(Instant.now().minusSeconds(secondsAgo)));
        Files.move(temp, ManifestStore.fileIn(shardDir), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void theSharedCacheKeepsAtMostASixteenthOfASmallHeap() {
        long mib = 1024L * 1024;
        // A one-shot retention pass at 30,000 shards under -Xmx64m ran out of memory with 32 MiB kept here.
        assertThat(ManifestCache.defaultManifestBytes(64 * mib)).isEqualTo(4 * mib);
        assertThat(ManifestCache.defaultManifestBytes(256 * mib)).isEqualTo(16 * mib);
        assertThat(ManifestCache.defaultManifestBytes(4096 * mib)).isEqualTo(ManifestCache.DEFAULT_MANIFEST_BYTES);
    }

    @Test
    void anUnchangedFileIsDecodedOnceHoweverOftenItIsAskedFor() throws Exception {
        ManifestCache cache = new ManifestCache(1 << 20);
        write(Manifest.of(List.of(entry(0, 0, 9), entry(1, 10, 19))), 60);
        for (int i = 0; i < 5; i++) {
            assertThat(cache.summary(shardDir).entries()).isEqualTo(2);
            assertThat(cache.manifest(shardDir).size()).isEqualTo(2);
        }
        assertThat(cache.decodes()).isEqualTo(1);
    }

    @Test
    void aReplacedFileIsDecodedAgain() throws Exception {
        ManifestCache cache = new ManifestCache(1 << 20);
        write(Manifest.of(List.of(entry(0, 0, 9))), 60);
        assertThat(cache.summary(shardDir).newest().orElseThrow().segmentId()).isZero();
        // The same size, an older time: only the inode and the time tell it apart.
        write(Manifest.of(List.of(entry(1, 10, 19))), 120);
        assertThat(cache.summary(shardDir).newest().orElseThrow().segmentId()).isEqualTo(1);
        assertThat(cache.manifest(shardDir).entries()).containsExactly(entry(1, 10, 19));
        assertThat(cache.decodes()).isEqualTo(2);
    }

    @Test
    void aFileChangedWithinTheLastSecondsIsReadAgainEveryTime() throws Exception {
        ManifestCache cache = new ManifestCache(1 << 20);
        write(Manifest.of(List.of(entry(0, 0, 9))), 0);
        cache.summary(shardDir);
        cache.summary(shardDir);
        cache.manifest(shardDir);
        assertThat(cache.decodes()).isEqualTo(3);
    }

    @Test
    void noFileIsTheEmptyManifestAndNoDirectoryIsAnError() throws Exception {
        ManifestCache cache = new ManifestCache(1 << 20);
        assertThat(cache.summary(shardDir)).isSameAs(ManifestSummary.EMPTY);
        assertThat(cache.manifest(shardDir).isEmpty()).isTrue();
        assertThatThrownBy(() -> cache.summary(root.resolve("missing"))).isInstanceOf(NoSuchFileException.class);
        assertThat(cache.decodes()).isZero();
    }

    @Test
    void aFileThatDoesNotDecodeFailsEveryTimeAndIsNotKept() throws Exception {
        ManifestCache cache = new ManifestCache(1 << 20);
        Files.write(ManifestStore.fileIn(shardDir), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        Files.setLastModifiedTime(ManifestStore.fileIn(shardDir), FileTime.from(Instant.now().minusSeconds(60)));
        assertThatThrownBy(() -> cache.summary(shardDir)).isInstanceOf(CorruptionException.class);
        assertThatThrownBy(() -> cache.manifest(shardDir)).isInstanceOf(CorruptionException.class);
        assertThat(cache.summaries()).isZero();
    }

    @Test
    void decodedManifestsStayWithinTheBoundSummariesStayForEveryShard() throws Exception {
        List<Path> dirs = new ArrayList<>();
        ManifestCache cache = new ManifestCache(8 * 1024);
        for (int s = 0; s < 40; s++) {
            shardDir = Files.createDirectory(root.resolve("shard-" + s));
            dirs.add(shardDir);
            List<ManifestEntry> entries = new ArrayList<>();
            for (int e = 0; e < 5; e++) {
                entries.add(entry(e, e * 10L, e * 10L + 9));
            }
            write(Manifest.of(entries), 60);
            cache.manifest(shardDir);
            assertThat(cache.manifestBytes()).isLessThanOrEqualTo(8 * 1024);
        }
        assertThat(cache.summaries()).isEqualTo(40);
        long decodes = cache.decodes();
        for (Path d : dirs) {
            assertThat(cache.summary(d).entries()).isEqualTo(5);
        }
        assertThat(cache.decodes()).isEqualTo(decodes); // summaries outlive the manifests they came from
        cache.retainOnly(dirs.subList(0, 3));
        assertThat(cache.summaries()).isEqualTo(3);
    }

    @Test
    void aStoreAlwaysDecodesTheBytesItReadsAndLeavesItsDecodingToTheReaders() throws Exception {
        // A store decides what may be unlinked: it never takes a decoding it did not make from its own bytes.
        write(Manifest.of(List.of(entry(0, 0, 9), entry(1, 10, 19))), 60);
        ManifestCache shared = ManifestCache.shared();
        long files = ManifestStore.decodes();
        for (int i = 0; i < 3; i++) {
            assertThat(ManifestStore.open(shardDir).manifest().size()).isEqualTo(2);
        }
        assertThat(ManifestStore.decodes() - files).isEqualTo(3);
        // ... and a reader of the same, unchanged file takes the store's decoding without decoding it again.
        long before = ManifestStore.decodes();
        assertThat(shared.summary(shardDir).entries()).isEqualTo(2);
        assertThat(shared.manifest(shardDir).size()).isEqualTo(2);
        assertThat(ManifestStore.decodes()).isEqualTo(before);
        // A file replaced behind the cache (as the broker does) is decoded again by both.
        write(Manifest.of(List.of(entry(0, 0, 9))), 90);
        assertThat(shared.summary(shardDir).entries()).isEqualTo(1);
        assertThat(ManifestStore.open(shardDir).manifest().size()).isEqualTo(1);
        assertThat(ManifestStore.decodes()).isEqualTo(before + 2);
    }

    @Test
    void aSummaryKnowsWhichSegmentsAreRecordedInRuns() {
        Manifest m = Manifest.of(List.of(entry(3, 0, 9), entry(4, 10, 19), entry(5, 20, 29), entry(9, 30, 39),
                entry(-2L, 40, 49), entry(-1L, 50, 59)));
        ManifestSummary s = ManifestSummary.of(m);
        assertThat(s.idRuns()).containsExactly(3, 5, 9, 9, -2L, -1L);
        for (long id : new long[] {3, 4, 5, 9, -2L, -1L}) {
            assertThat(s.records(id)).as("id %s", Long.toUnsignedString(id)).isTrue();
        }
        for (long id : new long[] {0, 2, 6, 8, 10, -3L, Long.MAX_VALUE, Long.MIN_VALUE}) {
            assertThat(s.records(id)).as("id %s", Long.toUnsignedString(id)).isFalse();
        }
        assertThat(s.entries()).isEqualTo(6);
        assertThat(s.bytes()).isEqualTo(m.totals().bytes());
        assertThat(s.oldest()).isEqualTo(m.oldestEntry());
        assertThat(s.newest()).isEqualTo(m.newestEntry());
        assertThat(ManifestSummary.EMPTY.records(0)).isFalse();
    }

    @Test
    void aSummaryNamesTheDirectoriesItsKeysLieIn() {
        Manifest own = Manifest.of(List.of(entry(0, 0, 9), entry(1, 10, 19)));
        assertThat(ManifestSummary.of(own).keyDirectories()).containsExactly("node-1/" + SHARD + "/");
        assertThat(ManifestSummary.of(own).keysOnlyUnder(List.of("node-1/" + SHARD + "/", SHARD + "/"))).isTrue();
        Manifest mixed = own.withEntry(entry(2, 20, 29, "node-0/other/"));
        assertThat(ManifestSummary.of(mixed).keysOnlyUnder(List.of("node-1/" + SHARD + "/"))).isFalse();
        List<ManifestEntry> many = new ArrayList<>();
        for (int i = 0; i <= ManifestSummary.MAX_KEY_DIRECTORIES; i++) {
            many.add(entry(i, i * 10L, i * 10L + 9, "node-" + i + "/" + SHARD + "/"));
        }
        ManifestSummary tooMany = ManifestSummary.of(Manifest.of(many));
        assertThat(tooMany.keyDirectories()).isEmpty();
        assertThat(tooMany.keysOnlyUnder(List.of("node-0/" + SHARD + "/"))).isFalse();
        assertThat(ManifestSummary.EMPTY.keysOnlyUnder(List.of())).isTrue();
    }
}
