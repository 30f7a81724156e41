package dev.felix.offload.cli;

import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The daemon's scheduled scrub reads a rotating share of the objects in full even where the store
 * answers a kept CRC32: within {@code scrub.full-read-runs} runs every object is read, so a byte
 * flipped behind a checksum kept since upload is found.
 */
class ScrubRotatingShareTest {

    @TempDir
    Path tmp;

    /**
     * The filesystem store presented as a server that keeps CRC32s itself: its head answers the CRC32
     * written at upload, whatever rot came since, which is what a real server's kept checksum does
     * too. Records which keys were read.
     */
    static final class KeptChecksumStore extends ForwardingObjectStore {
        final FilesystemStore fs;
        final Set<String> read = ConcurrentHashMap.newKeySet();

        KeptChecksumStore(FilesystemStore fs) {
            super(fs);
            this.fs = fs;
        }

        @Override
        public Set<StoreCapability> capabilities() throws StoreException {
            Set<StoreCapability> caps = EnumSet.copyOf(fs.capabilities());
            caps.add(StoreCapability.CRC32_STORED);
            caps.add(StoreCapability.CRC32_KEPT_BY_SERVER);
            return caps;
        }

        @Override
        public String describe() {
            return "kept-checksum " + fs.describe();
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            read.add(key);
            return fs.readRange(key, range);
        }

        @Override
        public void readRangeInto(String key, ByteRange range, List<byte[]> targets, IntConsumer filled)
                throws StoreException {
            read.add(key);
            fs.readRangeInto(key, range, targets, filled);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            if (!key.endsWith(dev.felix.offload.root.NodeClaim.NAME)) {
                read.add(key); // the node claim is read once a run; only segment objects are counted
            }
            return fs.readAll(key, maxSize, expectedCrc32);
        }

        @Override
        public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
            read.add(key);
            return fs.download(key, target, expectedCrc32);
        }

    }

    @Test
    void withinNRunsEveryObjectIsReadInFullAndAFlippedByteBehindAKeptChecksumIsFound() throws Exception {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "2", "--shards-per-stream", "2",
                "--records", "1500", "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        Path storeDir = Files.createDirectories(tmp.resolve("store"));
        CliRun offload = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeDir.toUri().toString());
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        List<String> keys = new ArrayList<>();
        DataRoot dataRoot = new DataRoot(root);
        for (DataRoot.Shard s : dataRoot.streamShards()) {
            for (ManifestEntry e : ManifestStore.read(s.directory()).entries()) {
                keys.add(e.objectKey());
            }
        }
        int runs = 4;
        assertThat(keys).hasSizeGreaterThan(runs * 3);
        Map<String, String> env = Map.of();

        try (KeptChecksumStore store = new KeptChecksumStore(FilesystemStore.open(storeDir))) {
            Set<String> readOverall = new HashSet<>();
            long start = 9; // any start: N consecutive runs cover every share
            for (int run = 0; run < runs; run++) {
                store.read.clear();
                Scrub.Report r = new Scrub(dataRoot, store, env, 0, Clock.systemUTC(),
                        Scrub.Share.ofRun(start + run, runs)).run(StopSignal.never(), null);
                assertThat(r.clean()).as(r.anomalies().toString()).isTrue();
                assertThat(store.read).as("run %d reads a share, not everything", run).isNotEmpty()
                        .hasSizeLessThan(keys.size());
                assertThat(r.checkedBy().get("read-back")).isEqualTo(store.read.size());
                readOverall.addAll(store.read);
            }
            assertThat(readOverall).as("every object read in full within " + runs + " runs")
                    .containsExactlyInAnyOrderElementsOf(keys);

            // one byte flipped in place: the kept CRC32 still answers the upload's, so only a full read finds it
            String victim = keys.get(keys.size() / 2);
            Path file;
            try (Stream<Path> files = Files.walk(storeDir)) {
                file = files.filter(p -> p.toString().endsWith(victim)).findFirst().orElseThrow();
            }
            try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                f.seek(64);
                int b = f.read();
                f.seek(64);
                f.write(b ^ 0x10);
            }
            int foundIn = -1;
            int clean = 0;
            for (int run = 0; run < runs; run++) {
                Scrub.Report r = new Scrub(dataRoot, store, env, 0, Clock.systemUTC(),
                        Scrub.Share.ofRun(start + run, runs)).run(StopSignal.never(), null);
                if (r.anomalies().stream().anyMatch(a -> a.kind() == Scrub.Kind.CRC_MISMATCH && a.key().equals(Optional.of(victim)))) {
                    assertThat(foundIn).as("found in exactly one run of the rotation").isEqualTo(-1);
                    foundIn = run;
                } else {
                    assertThat(r.clean()).isTrue();
                    clean++;
                }
            }
            assertThat(foundIn).as("the flipped byte is found within " + runs + " runs").isNotNegative();
            assertThat(clean).isEqualTo(runs - 1);
            Scrub.Report none = new Scrub(dataRoot, store, env, 0, Clock.systemUTC(), Scrub.Share.NONE)
                    .run(StopSignal.never(), null);
            assertThat(none.clean()).as("without full reads the kept checksum hides the rot").isTrue();
        }
    }
}
