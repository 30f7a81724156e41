package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.pass.ShardOffload;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.StepHook;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Offload passes and retention (which expires remote entries) beside a thread that does, through the file system, what the broker does to a
 * shard: truncations (the entries at or after the cut leave the manifest, then the segments from the
 * cut on are replaced by a new history) and resets (every entry leaves, every segment is replaced).
 * However the two interleave, no entry the broker dropped ever comes back, and no segment of the
 * current history is unlinked without an entry in the manifest the broker holds.
 */
class ManifestRaceTest {

    @TempDir
    Path tmp;

    /** The broker's side: writes new histories and drops entries, checking the invariants as it goes. */
    private static final class Broker implements Runnable {
        private final Path shard;
        private final Path scratch;
        private final SplittableRandom random = new SplittableRandom(42);
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Set<Long> dropped = new HashSet<>();
        private final Set<Long> live = new HashSet<>();
        private final Set<Long> raced = new HashSet<>();
        final AtomicInteger brokersWindow = new AtomicInteger();
        final Set<Long> unlinkedUnnamed = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        final AtomicInteger resets = new AtomicInteger();
        final AtomicInteger truncations = new AtomicInteger();
        private long nextId;
        private int histories;

        Broker(Path shard, Path scratch) {
            this.shard = shard;
            this.scratch = scratch;
        }

        /** Writes a new history of {@code segments} sealed segments plus an active one, from {@code base}. */
        void placeHistory(long base, int segments) throws Exception {
            Path dir = scratch.resolve("h" + histories++);
            try (ShardLog log = ShardLog.open(dir, TestData.SMALL_SEGMENTS)) {
                log.reset(base);
                while (log.segments().size() < segments + 1) {
                    byte[] payload = new byte[200 + random.nextInt(600)];
                    random.nextBytes(payload);
                    log.append(1000L + random.nextInt(1_000_000), payload);
                }
            }
            for (SegmentFile f : SegmentFile.list(dir)) {
                long id = nextId++;
                SegmentFile target = SegmentFile.in(shard, id);
                if (Files.exists(f.index())) {
                    Files.move(f.index(), target.index(), StandardCopyOption.ATOMIC_MOVE);
                }
                Files.move(f.log(), target.log(), StandardCopyOption.ATOMIC_MOVE);
                live.add(id);
            }
        }

        /** What the broker read of the manifest at the start of a step: its bytes (null for none) and content. */
        private record Read(byte[] bytes, Manifest manifest) {
        }

        private Read readManifest() throws Exception {
            Path file = ManifestStore.fileIn(shard);
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(file);
            } catch (NoSuchFileException absent) {
                return new Read(null, Manifest.empty());
            }
            return new Read(bytes, dev.felix.offload.manifest.ManifestCodec.decode(java.nio.ByteBuffer.wrap(bytes),
                    dev.felix.offload.log.format.CorruptionSite.inFile("broker", ManifestStore.FILE_NAME, 0)));
        }

        /**
         * Replaces the manifest as a careful broker does, through its own temporary and compare and
         * replace like the pass: false when the pass changed it since {@code read} (the step is then
         * taken again).
         */
        private boolean writeManifest(Read read, Manifest m) throws IOException {
            Path file = ManifestStore.fileIn(shard);
            try {
                dev.felix.offload.log.DurableFiles.replace(file, dev.felix.offload.log.DurableFiles.tempFor(file),
                        dev.felix.offload.manifest.ManifestCodec.encode(m), dev.felix.offload.log.DurableFiles.Sync.FULL,
                        step -> { }, () -> {
                            byte[] now;
                            try {
                                now = Files.readAllBytes(file);
                            } catch (NoSuchFileException absent) {
                                now = null;
                            }
                            if (!java.util.Arrays.equals(now, read.bytes())) {
                                throw new RacedException();
                            }
                        });
                return true;
            } catch (RacedException raced) {
                return false;
            }
        }

        private static final class RacedException extends IOException {
            private static final long serialVersionUID = 1L;
        }

        /**
         * The broker's own window, which no compare and replace can close: between its rewrite of the
         * manifest and its removal of the segments, a pass that loaded the new manifest may upload and
         * record a segment the broker is about to remove (it checks the file right before its rename,
         * so only while the file is still there). Entries recorded so, present when the broker's step
         * ends, are counted apart; any dropped entry appearing later is a stale write, a violation.
         */
        private void settle() throws Exception {
            for (ManifestEntry e : ManifestStore.read(shard).entries()) {
                if (dropped.contains(e.segmentId()) && raced.add(e.segmentId())) {
                    brokersWindow.incrementAndGet();
                }
            }
        }

        void check() throws Exception {
            List<Long> gone = new ArrayList<>();
            for (long id : live) {
                if (!Files.exists(SegmentFile.in(shard, id).log())) {
                    gone.add(id);
                }
            }
            Manifest m = ManifestStore.read(shard);
            Set<Long> named = new HashSet<>();
            for (ManifestEntry e : m.entries()) {
                named.add(e.segmentId());
                if (dropped.contains(e.segmentId()) && !raced.contains(e.segmentId())) {
                    violations.add("entry of segment " + e.segmentId() + " came back after the broker dropped it");
                }
            }
            for (long id : gone) {
                if (!named.contains(id)) {
                    unlinkedUnnamed.add(id); // unless remote retention expired it, judged at the end
                }
            }
        }

        void step() throws Exception {
            check();
            Read read = readManifest();
            Manifest m = read.manifest();
            List<SegmentFile> local = SegmentFile.list(shard);
            if (random.nextInt(3) == 0 || local.size() < 2) {
                // Reset: every entry goes first, then every segment.
                if (!writeManifest(read, Manifest.empty())) {
                    return;
                }
                for (ManifestEntry e : m.entries()) {
                    dropped.add(e.segmentId());
                }
                dropped.addAll(live);
                for (SegmentFile f : SegmentFile.list(shard)) {
                    Files.deleteIfExists(f.index());
                    Files.deleteIfExists(f.log());
                    dropped.add(f.id());
                }
                live.clear();
                settle();
                placeHistory(1_000_000L * (histories + 1), 3 + random.nextInt(4));
                resets.incrementAndGet();
            } else {
                // Truncation at a local segment's base: the entries reaching the cut go first, then the segments.
                SegmentFile at = local.get(random.nextInt(local.size()));
                long cut;
                try {
                    cut = baseOf(at);
                } catch (NoSuchFileException gone) {
                    return; // unlinked by the pass meanwhile; try again
                }
                List<ManifestEntry> kept = new ArrayList<>();
                List<Long> droppedNow = new ArrayList<>();
                for (ManifestEntry e : m.entries()) {
                    if (Long.compareUnsigned(e.lastOffset(), cut) < 0) {
                        kept.add(e);
                    } else {
                        droppedNow.add(e.segmentId());
                    }
                }
                if (!writeManifest(read, Manifest.of(kept))) {
                    return;
                }
                dropped.addAll(droppedNow);
                live.removeAll(droppedNow);
                for (SegmentFile f : SegmentFile.list(shard)) {
                    if (Long.compareUnsigned(f.id(), at.id()) >= 0) {
                        Files.deleteIfExists(f.index());
                        Files.deleteIfExists(f.log());
                        live.remove(f.id());
                        dropped.add(f.id());
                    }
                }
                settle();
                placeHistory(cut, 2 + random.nextInt(3));
                truncations.incrementAndGet();
            }
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    step();
                    Thread.sleep(random.nextInt(30));
                }
                check();
            } catch (Throwable t) {
                violations.add("broker failed: " + t);
            }
        }
    }

    private static long baseOf(SegmentFile f) throws IOException {
        byte[] head = new byte[32];
        try (var in = Files.newInputStream(f.log())) {
            int n = in.readNBytes(head, 0, 32);
            if (n < 32) {
                throw new NoSuchFileException(f.log().toString());
            }
        }
        return java.nio.ByteBuffer.wrap(head).getLong(8);
    }

    @Test
    void noEntryTheBrokerDroppedEverComesBackAndNothingIsUnlinkedOnTheStrengthOfOne() throws Exception {
        Path shard = Files.createDirectories(tmp.resolve("root").resolve("acme_default_orders_0-00000000000000aa"));
        FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        Broker broker = new Broker(shard, Files.createDirectories(tmp.resolve("scratch")));
        broker.placeHistory(0, 6);
        SegmentKeys keys = new SegmentKeys("", "node-a");
        // Entries settle for 200 ms before their segments go (5 s by default): this broker compares before it
        // renames and rewrites in milliseconds, and the test needs many unlinks within its 6 seconds.
        OffloadSettings settings = OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1))
                .withRetries(2, Duration.ofMillis(1)).withUnlinkSettle(Duration.ofMillis(200));

        Thread thread = new Thread(broker, "broker");
        thread.start();
        RetentionSettings retention = new RetentionSettings(RetentionSettings.UNLIMITED, RetentionSettings.UNLIMITED,
                40_000, RetentionSettings.UNLIMITED);
        int expired = 0;
        Set<Long> expiredIds = new HashSet<>();
        int passes = 0;
        int completed = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        try {
            while (System.nanoTime() < deadline && broker.violations.isEmpty()) {
                try {
                    ShardResult r = new ShardOffload(shard.getFileName().toString(), shard, store, keys, settings,
                            StepHook.none(), null, ProgressListener.none(), OptionalLong.empty(), () -> false).run();
                    if (r.complete()) {
                        completed++;
                    }
                } catch (IOException vanished) {
                    // A segment the broker removed under the pass; the next pass sees the directory as it is.
                }
                // Remote retention saves the manifest without its oldest entries: from a stale manifest,
                // that save would write back every entry the broker dropped meanwhile.
                ShardRetentionResult kept = new ShardRetention(shard, store, retention,
                        java.time.Clock.systemUTC(), RetentionHook.none(), 1000,
                        new dev.felix.offload.root.KeyOwnership(keys), TestData.live(shard))
                        .settling(Duration.ofMillis(200)).run(StopSignal.never());
                expired += kept.remote().expiredSegments().size();
                expiredIds.addAll(kept.remote().expiredSegments());
                passes++;
            }
        } finally {
            broker.stop.set(true);
            thread.join(30_000);
        }
        for (long id : broker.unlinkedUnnamed) {
            if (!expiredIds.contains(id)) {
                broker.violations.add("segment " + id + " was unlinked without an entry in the broker's manifest");
            }
        }
        assertThat(broker.violations).as("after %d passes (%d complete), %d resets and %d truncations (%d entries "
                        + "recorded in the broker's own window)", passes, completed, broker.resets.get(),
                broker.truncations.get(), broker.brokersWindow.get()).isEmpty();
        assertThat(broker.resets.get() + broker.truncations.get()).isGreaterThan(20);
        assertThat(passes).isGreaterThan(20);
        assertThat(expired).as("retention expired entries meanwhile").isPositive();
        try (Stream<Path> objects = Files.walk(tmp.resolve("store"))) {
            assertThat(objects.filter(p -> p.toString().endsWith(".segment")).count())
                    .as("the passes did upload").isPositive();
        }
    }
}
