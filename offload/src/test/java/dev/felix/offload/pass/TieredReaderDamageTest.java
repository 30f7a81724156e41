package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionKind;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reads below the local base over copies that are not as they should be: an index that lies, bytes
 * damaged on their way once, an object shorter than its entry. The records that come back are
 * always the ones written, or the damage is named.
 */
class TieredReaderDamageTest {

    @TempDir
    Path tmp;

    private Path shard;
    private List<Record> written;
    private FilesystemStore store;
    private ManifestEntry oldest;

    @BeforeEach
    void offload() throws Exception {
        offload("root", false);
    }

    /**
     * One shard offloaded from root {@code name}: of small segments, or of segments large enough for
     * an index object each ({@link SegmentKeys#hasIndexObject}).
     */
    private void offload(String name, boolean large) throws Exception {
        Path root = Files.createDirectories(tmp.resolve(name));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve(name + "-store")));
        Map<Path, List<Record>> shards = large ? TestRoots.write(root, "orders", 1, 12_000, 5, TestRoots.LARGE_SEGMENTS, 1024)
                : TestRoots.write(root, 1, 300, 5);
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300))
                .withRetries(3, Duration.ofMillis(1));
        new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
        shard = shards.keySet().iterator().next();
        written = shards.get(shard);
        oldest = ManifestStore.read(shard).oldestEntry().orElseThrow();
    }

    private List<Record> readAll(TieredReader reader) throws Exception {
        List<Record> seen = new ArrayList<>();
        long next = 0;
        for (int guard = 0; guard < 10_000 && seen.size() < written.size(); guard++) {
            TieredRead.Records r = (TieredRead.Records) reader.read(next, 5, 2000);
            assertThat(r.records()).as("progress at %d", next).isNotEmpty();
            r.records().forEach(sr -> seen.add(sr.record()));
            next = r.nextOffset();
        }
        return seen;
    }

    @Test
    void remoteIndexesThatPointIntoTheMiddleOfRecordsAreDistrustedAndEveryRecordStillComesBack() throws Exception {
        offload("large", true);
        int lied = 0;
        for (ManifestEntry e : ManifestStore.read(shard).entries()) {
            Path index = store.root().resolve(SegmentKeys.indexKeyFor(e.objectKey()));
            byte[] bytes = Files.readAllBytes(index);
            ByteBuffer b = ByteBuffer.wrap(bytes);
            for (int at = SegmentIndex.HEADER_LENGTH; at + SegmentIndex.ENTRY_LENGTH <= bytes.length;
                 at += SegmentIndex.ENTRY_LENGTH) {
                int position = at + SegmentIndex.ENTRY_POSITION_OFFSET;
                if (b.getLong(position) > SegmentHeader.LENGTH) {
                    b.putLong(position, b.getLong(position) + 5);
                    lied++;
                }
            }
            Files.write(index, bytes);
        }
        assertThat(lied).as("entries made to lie").isPositive();

        TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 4096, 1 << 20));
        assertThat(readAll(reader)).isEqualTo(written);
        for (int i = 0; i < written.size(); i += 97) {
            TieredRead.Records one = (TieredRead.Records) reader.read(i, 1, 1);
            assertThat(one.records()).singleElement().extracting(TieredRead.SourcedRecord::record)
                    .isEqualTo(written.get(i));
        }
    }

    /** The store, except that the first read of one byte of one object comes back with a bit flipped. */
    private static final class DamagingOnce implements ObjectFetcher {
        final ObjectFetcher store;
        final String key;
        final long position;
        final AtomicInteger readsOfIt = new AtomicInteger();

        DamagingOnce(ObjectFetcher store, String key, long position) {
            this.store = store;
            this.key = key;
            this.position = position;
        }

        @Override
        public ObjectHead head(String k) throws StoreException {
            return store.head(k);
        }

        @Override
        public byte[] readRange(String k, ByteRange range) throws StoreException {
            byte[] bytes = store.readRange(k, range);
            if (k.equals(key) && position >= range.offset() && position < range.offset() + range.length()
                    && readsOfIt.getAndIncrement() == 0) {
                bytes[(int) (position - range.offset())] ^= 0x04;
            }
            return bytes;
        }

        @Override
        public byte[] readAll(String k, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            return store.readAll(k, maxSize, expectedCrc32);
        }

        @Override
        public DownloadResult download(String k, Path target, OptionalLong expectedCrc32) throws StoreException {
            return store.download(k, target, expectedCrc32);
        }
    }

    @Test
    void bytesDamagedOnTheirWayOnceAreFetchedAgainAndServeTheRightRecords() throws Exception {
        DamagingOnce damaging = new DamagingOnce(store, oldest.objectKey(), 200);
        TieredReader reader = new TieredReader(shard, damaging, new ChunkCache(damaging, 4096, 1 << 20, 0));

        assertThat(readAll(reader)).isEqualTo(written);
        assertThat(damaging.readsOfIt.get()).as("the damaged range fetched once more").isEqualTo(2);
    }

    @Test
    void anObjectShorterThanItsEntryIsATruncationNamingItsKey() throws Exception {
        Path object = store.root().resolve(oldest.objectKey());
        byte[] bytes = Files.readAllBytes(object);
        Files.write(object, Arrays.copyOf(bytes, bytes.length - 10));
        TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 4096, 1 << 20));

        assertThatThrownBy(() -> reader.read(0, 100_000, Long.MAX_VALUE))
                .isInstanceOfSatisfying(CorruptionException.class, e -> {
                    assertThat(e.kind()).isEqualTo(CorruptionKind.TRUNCATED);
                    assertThat(e.getMessage()).contains(oldest.objectKey()).contains("recorded by its manifest entry");
                });
    }
}
