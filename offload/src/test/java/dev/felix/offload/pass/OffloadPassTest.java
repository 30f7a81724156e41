package dev.felix.offload.pass;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.copy.VerifyMode;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectNotFoundException;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffloadPassTest {

    @TempDir
    Path tmp;

    private Path root;
    private FilesystemStore store;

    private void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    private PassReport pass(OffloadSettings settings, StepHook hook) throws IOException {
        return new OffloadPass(new DataRoot(root), store, settings, hook, Map.of(NodeId.ENV, "node-a"),
                dir -> OptionalLong.empty()).run(ProgressListener.none());
    }

    private static OffloadSettings keepOne() {
        return OffloadSettings.defaults().withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ofMillis(300))
                .withRetries(3, Duration.ofMillis(1));
    }

    @Test
    void offloadsSealedSegmentsVerifiesRecordsAndUnlinksThenReadsEverythingBack() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 3, 400, 11);
        Map<Path, Map<Long, byte[]>> originals = new HashMap<>();
        for (Path shard : written.keySet()) {
            Map<Long, byte[]> bytes = new HashMap<>();
            for (SegmentFile f : SegmentFile.list(shard)) {
                bytes.put(f.id(), Files.readAllBytes(f.log()));
            }
            originals.put(shard, bytes);
        }

        PassReport report = pass(keepOne(), StepHook.none());

        assertThat(report.complete()).isTrue();
        assertThat(report.nodeId()).isEqualTo("node-a");
        for (Path shard : written.keySet()) {
            Manifest manifest = ManifestStore.read(shard);
            List<SegmentFile> left = SegmentFile.list(shard);
            assertThat(left).as("only the active segment stays").hasSize(1);
            assertThat(manifest.size()).isEqualTo(originals.get(shard).size() - 1);
            for (ManifestEntry e : manifest.entries()) {
                byte[] original = originals.get(shard).get(e.segmentId());
                assertThat(e.objectKey()).isEqualTo(String.format("node-a/%s/%020d-%020d.segment",
                        shard.getFileName(), e.baseOffset(), e.segmentId()));
                assertThat(store.readAll(e.objectKey(), Integer.MAX_VALUE - 16, OptionalLong.empty())).isEqualTo(original);
                assertThat(e.sizeBytes()).isEqualTo(original.length);
                assertThat(Integer.toUnsignedLong(e.objectCrc32())).isEqualTo(crc(original));
                assertThatThrownBy(() -> store.head(SegmentKeys.indexKeyFor(e.objectKey())))
                        .as("a segment of %d bytes has no index object", e.sizeBytes())
                        .isInstanceOf(ObjectNotFoundException.class);
            }
            // The shard still opens, its local base moved up.
            try (ShardLog log = ShardLog.open(shard, TestRoots.SMALL_SEGMENTS)) {
                assertThat(log.firstOffset()).isEqualTo(manifest.newestEntry().orElseThrow().lastOffset() + 1);
            }
        }
        assertThat(report.segmentsUnlinked()).isEqualTo(report.segmentsUploaded());
        TestRoots.assertEveryOffsetReadsBack(written, store);

        // A second pass finds nothing to do.
        PassReport again = pass(keepOne(), StepHook.none());
        assertThat(again.segmentsUploaded()).isZero();
        assertThat(again.complete()).isTrue();
    }

    @Test
    void anUploadNeverReplacesAnotherShardsObjectAtItsKey() throws Exception {
        setUp();
        Collisions.secondRootNeverReplacesTheFirstRootsObjects(tmp, store);
    }

    @Test
    void emptySealedSegmentsNeverBlockUnlinkingAndReadsAcrossThemAreContiguous() throws Exception {
        setUp();
        Path shard = root.resolve("acme_default_rolled_0-00000000000000aa");
        List<Record> records = TestRoots.writeWithEmptySegments(shard, 3, 120, 21);
        List<SegmentFile> before = SegmentFile.list(shard);
        long empties = before.stream().filter(f -> {
            try {
                return Files.size(f.log()) == 32;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }).count();
        assertThat(empties).as("two empty sealed segments between the three runs").isEqualTo(2);

        PassReport report = pass(keepOne(), StepHook.none());

        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(SegmentFile.list(shard)).as("only the active segment stays").hasSize(1);
        assertThat(report.segmentsUnlinked()).isEqualTo(before.size() - 1);
        assertThat(report.segmentsUploaded()).isEqualTo(before.size() - 1 - 2);
        Manifest manifest = ManifestStore.read(shard);
        for (int i = 1; i < manifest.size(); i++) {
            assertThat(manifest.entries().get(i).baseOffset())
                    .as("entries contiguous across the empty segments' places")
                    .isEqualTo(manifest.entries().get(i - 1).lastOffset() + 1);
        }
        TestRoots.assertEveryOffsetReadsBack(Map.of(shard, records), store);
    }

    /**
     * The segments after an empty sealed segment are recorded later than those before it (here the
     * first of them waits 200 ms before its entry is written): the one-shot pass still waits until
     * every entry it recorded has settled and leaves only the active segment. (It once waited only for
     * those before the empty segment, and left the later ones behind with the pass reported complete.)
     */
    @Test
    void entriesRecordedLaterBeyondAnEmptySegmentSettleBeforeTheCommandEnds() throws Exception {
        setUp();
        Path shard = root.resolve("acme_default_rolled_0-00000000000000ab");
        List<Record> records = TestRoots.writeWithEmptySegments(shard, 3, 120, 22);
        List<SegmentFile> before = SegmentFile.list(shard);
        long firstEmpty = -1;
        for (SegmentFile f : before) {
            if (Files.size(f.log()) == 32) {
                firstEmpty = f.id();
                break;
            }
        }
        assertThat(firstEmpty).as("an empty sealed segment").isPositive();
        long late = firstEmpty + 1;
        StepHook slow = (step, s, id) -> {
            if (step == OffloadStep.INDEX_UPLOADED && id == late) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };

        PassReport report = pass(keepOne(), slow);

        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(SegmentFile.list(shard)).as("only the active segment stays: %s", report).hasSize(1);
        TestRoots.assertEveryOffsetReadsBack(Map.of(shard, records), store);
    }

    @Test
    void shardsUnderContainersAreOffloadedUnderTheirPathAndCachesAreLeftAlone() throws Exception {
        setUp();
        Map<Path, List<Record>> top = TestRoots.write(root, 1, 200, 31);
        Map<Path, List<Record>> dead = TestRoots.write(Files.createDirectories(root.resolve("dead-letters")), 1, 200, 32);
        Map<Path, List<Record>> cache = TestRoots.write(Files.createDirectories(root.resolve("caches")), 1, 200, 33);
        Path cacheDir = cache.keySet().iterator().next();
        List<SegmentFile> cacheSegments = SegmentFile.list(cacheDir);

        PassReport report = pass(keepOne(), StepHook.none());

        assertThat(report.complete()).isTrue();
        String dir = top.keySet().iterator().next().getFileName().toString();
        assertThat(report.shards()).extracting(ShardResult::shard).containsExactly(dir, "dead-letters/" + dir);
        assertThat(report.cacheShardsLeftAlone()).containsExactly("caches/" + dir);
        Path deadDir = dead.keySet().iterator().next();
        for (ManifestEntry e : ManifestStore.read(deadDir).entries()) {
            assertThat(e.objectKey()).startsWith("node-a/dead-letters/" + dir + "/");
        }
        for (ManifestEntry e : ManifestStore.read(top.keySet().iterator().next()).entries()) {
            assertThat(e.objectKey()).startsWith("node-a/" + dir + "/");
        }
        assertThat(SegmentFile.list(cacheDir)).isEqualTo(cacheSegments);
        assertThat(Files.exists(ManifestStore.fileIn(cacheDir))).isFalse();
        TestRoots.assertEveryOffsetReadsBack(top, store);
        TestRoots.assertEveryOffsetReadsBack(dead, store);
    }

    @Test
    void aTruncationByTheBrokerDuringThePassIsNeverUndoneNorItsSegmentUnlinked() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 400, 41);
        Path shard = written.keySet().iterator().next();
        List<SegmentFile> segments = SegmentFile.list(shard);
        assertThat(segments).hasSizeGreaterThanOrEqualTo(4);
        SegmentFile cutIn = segments.get(segments.size() - 2); // the newest sealed segment
        long cut = SegmentScan.of(cutIn.log(), "s", cutIn.id(), ScanDepth.RECORDS).baseOffset() + 3;
        AtomicInteger truncations = new AtomicInteger();
        // Once the pass recorded the newest sealed segment (and before it unlinks anything), the broker
        // truncates the log inside that segment: the entries holding offsets at or after the cut leave the
        // manifest first, then the segments are cut.
        StepHook broker = (step, s, segmentId) -> {
            if (step == OffloadStep.RECORDED && segmentId == cutIn.id() && truncations.getAndIncrement() == 0) {
                try {
                    Manifest m = ManifestStore.read(shard);
                    List<ManifestEntry> kept = m.entries().stream().filter(e -> e.lastOffset() < cut).toList();
                    dev.felix.offload.log.DurableFiles.replace(ManifestStore.fileIn(shard),
                            dev.felix.offload.manifest.ManifestCodec.encode(Manifest.of(kept)),
                            dev.felix.offload.log.DurableFiles.Sync.FULL);
                    try (ShardLog log = ShardLog.open(shard, TestRoots.SMALL_SEGMENTS)) {
                        log.truncate(cut);
                    }
                } catch (CorruptionException e) {
                    throw new IOException(e);
                }
            }
        };

        PassReport report = pass(keepOne(), broker);

        assertThat(truncations.get()).isEqualTo(1);
        assertThat(report.complete()).as(report.toString()).isTrue();
        Manifest manifest = ManifestStore.read(shard);
        assertThat(manifest.entries()).as("no entry the broker dropped came back")
                .allMatch(e -> e.lastOffset() < cut);
        assertThat(cutIn.log()).as("the segment the broker truncated is its log's newest now, never unlinked")
                .exists();
        List<Record> before = written.get(shard).stream().filter(r -> r.offset() < cut).toList();
        TestRoots.assertEveryOffsetReadsBack(Map.of(shard, before), store);
    }

    @ParameterizedTest
    @EnumSource(OffloadStep.class)
    void aCrashAfterAnyStepLeavesAConsistentShardThatTheNextPassCompletes(OffloadStep crashAt) throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 300, 5);
        Path shard = written.keySet().iterator().next();
        int segments = SegmentFile.list(shard).size();
        AtomicInteger seen = new AtomicInteger();
        StepHook crash = (step, s, segmentId) -> {
            if (step == crashAt && seen.incrementAndGet() == 2) {
                throw new IOException("simulated crash after " + step);
            }
        };
        PassReport broken = pass(keepOne(), crash);
        assertThat(broken.complete()).isFalse();
        assertConsistent(shard, written.get(shard));

        PassReport resumed = pass(keepOne(), StepHook.none());
        assertThat(resumed.complete()).as(resumed.toString()).isTrue();
        assertConsistent(shard, written.get(shard));
        assertThat(ManifestStore.read(shard).size()).isEqualTo(segments - 1);
        assertThat(SegmentFile.list(shard)).hasSize(1);
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    /** Every manifest entry names an object of its size and CRC; no local segment is gone without an entry. */
    private void assertConsistent(Path shard, List<Record> written) throws Exception {
        Manifest manifest = ManifestStore.read(shard);
        for (ManifestEntry e : manifest.entries()) {
            byte[] object = store.readAll(e.objectKey(), Integer.MAX_VALUE - 16, OptionalLong.empty());
            assertThat(object.length).isEqualTo(e.sizeBytes());
            assertThat(crc(object)).isEqualTo(Integer.toUnsignedLong(e.objectCrc32()));
        }
        long localFirst;
        try (ShardLog log = ShardLog.open(shard, TestRoots.SMALL_SEGMENTS)) {
            localFirst = log.firstOffset();
            assertThat(log.nextOffset()).isEqualTo(written.size());
        }
        long remoteNext = manifest.newestEntry().map(e -> e.lastOffset() + 1).orElse(0L);
        assertThat(remoteNext).as("nothing below the local base is missing from the manifest")
                .isGreaterThanOrEqualTo(localFirst);
        if (!manifest.isEmpty()) {
            assertThat(manifest.oldestEntry().orElseThrow().baseOffset()).isZero();
        }
    }

    @Test
    void aCorruptSegmentIsNeverUploadedAndOtherShardsGoOn() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 2, 300, 9);
        Path bad = written.keySet().iterator().next();
        SegmentFile firstFile = SegmentFile.list(bad).get(0);
        SegmentFile second = SegmentFile.list(bad).get(1);
        byte[] bytes = Files.readAllBytes(second.log());
        bytes[bytes.length - 2] ^= 0x10;
        Files.write(second.log(), bytes);

        PassReport report = pass(keepOne(), StepHook.none());

        ShardResult badResult = report.shards().stream().filter(s -> s.shard().equals(bad.getFileName().toString()))
                .findFirst().orElseThrow();
        assertThat(badResult.complete()).isFalse();
        assertThat(badResult.problem()).contains("RecordChecksum", "segment " + second.id(), "byte ");
        assertThat(badResult.uploaded()).extracting(SegmentUpload::segmentId).containsExactly(firstFile.id());
        long secondBase = SegmentScan.of(second.log(), "s", second.id(), ScanDepth.HEADERS).baseOffset();
        String secondKey = new SegmentKeys("", "node-a").segmentKey(bad.getFileName().toString(), secondBase, second.id());
        assertThatThrownBy(() -> store.head(secondKey)).isInstanceOf(ObjectNotFoundException.class);
        assertThat(Files.exists(second.log())).as("the corrupt segment stays for an operator").isTrue();
        ShardResult good = report.shards().stream().filter(s -> !s.shard().equals(bad.getFileName().toString()))
                .findFirst().orElseThrow();
        assertThat(good.complete()).isTrue();
        assertThat(report.complete()).isFalse();
    }

    @Test
    void aCopyThatFailsVerificationIsDeletedAndUploadedAgain() throws Exception {
        setUp();
        TestRoots.write(root, 1, 200, 3);
        ObjectStore honest = store;
        AtomicInteger corrupted = new AtomicInteger();
        // The oldest segment's first put (base offset 0): uploads of younger segments may run beside it.
        ObjectStore flaky = new CorruptingStore(honest, key -> key.endsWith(".segment")
                && key.contains("/00000000000000000000-") && corrupted.getAndIncrement() == 0);
        PassReport report = new OffloadPass(new DataRoot(root), flaky, keepOne().withVerify(VerifyMode.READ_BACK),
                StepHook.none(), Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isTrue();
        List<SegmentUpload> ups = report.shards().get(0).uploaded();
        assertThat(ups.get(0).attempts()).isEqualTo(2);
        assertThat(ups.get(0).verifiedBy().label()).isEqualTo("read-back");
        assertThat(ups.subList(1, ups.size())).allMatch(u -> u.attempts() == 1);
    }

    @Test
    void aCopyThatNeverVerifiesIsNeverRecordedAndNothingIsUnlinked() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 200, 3);
        Path shard = written.keySet().iterator().next();
        int before = SegmentFile.list(shard).size();
        ObjectStore broken = new CorruptingStore(store, key -> key.endsWith(".segment"));
        PassReport report = new OffloadPass(new DataRoot(root), broken, keepOne().withVerify(VerifyMode.AUTO),
                StepHook.none(), Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isFalse();
        assertThat(report.shards().get(0).problem()).contains("failed verification 3 times");
        assertThat(report.shards().get(0).stop()).isInstanceOfSatisfying(ShardStop.VerificationFailed.class,
                v -> assertThat(v.attempts()).isEqualTo(3));
        assertThat(ManifestStore.read(shard).isEmpty()).isTrue();
        assertThat(SegmentFile.list(shard)).hasSize(before);
    }

    /**
     * A server that keeps the CRC32 a put carries without checking it answers that CRC32 back for a
     * damaged copy: its word proves nothing, so the copy is read back, the damage found, and nothing
     * recorded on its strength.
     */
    @Test
    void aStoredCrc32FromAServerThatNeverChecksOneIsNoProof() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 200, 3);
        Path shard = written.keySet().iterator().next();
        int before = SegmentFile.list(shard).size();
        ObjectStore echoing = new CorruptingStore(store, key -> key.endsWith(".segment"), true);
        PassReport report = new OffloadPass(new DataRoot(root), echoing, keepOne().withVerify(VerifyMode.AUTO),
                StepHook.none(), Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isFalse();
        assertThat(report.shards().get(0).problem()).contains("failed verification");
        assertThat(ManifestStore.read(shard).isEmpty()).as("nothing recorded on the server's unchecked word").isTrue();
        assertThat(SegmentFile.list(shard)).hasSize(before);
    }

    @Test
    void segmentsAtOrAboveTheCommitOffsetWait() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 400, 4);
        Path shard = written.keySet().iterator().next();
        long commit = 150;
        PassReport report = new OffloadPass(new DataRoot(root), store, keepOne(), StepHook.none(),
                Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.of(commit)).run(ProgressListener.none());
        assertThat(report.complete()).as("segments not yet committed are not eligible").isTrue();
        Manifest manifest = ManifestStore.read(shard);
        assertThat(manifest.entries()).isNotEmpty().allMatch(e -> e.lastOffset() < commit);
    }

    /**
     * A stop that lands the moment a segment's put returned (the daemon's SIGTERM refuses every request
     * after it): the segment's index goes after its proven copy, so no index object is left beside a
     * segment no entry names. (With the index put first, the index was left alone.)
     */
    @Test
    void aStopRightAfterAPutLeavesNoIndexBesideAnUnrecordedSegment() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 400, 4);
        Path shard = written.keySet().iterator().next();
        java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
        ObjectStore stopping = new dev.felix.offload.store.ForwardingObjectStore(store) {
            @Override
            protected ObjectStore target() throws dev.felix.offload.store.StoreException {
                if (stopped.get()) {
                    throw new dev.felix.offload.store.StoreStoppedException("not sent: the process is stopping", null);
                }
                return super.target();
            }

            @Override
            public dev.felix.offload.store.PutResult put(String key, dev.felix.offload.store.UploadBody body,
                    dev.felix.offload.store.PutOptions options) throws dev.felix.offload.store.StoreException {
                try {
                    return super.put(key, body, options);
                } finally {
                    stopped.set(true);
                }
            }
        };
        PassReport report = new OffloadPass(new DataRoot(root), stopping, keepOne(), StepHook.none(),
                Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none(), stopped::get);
        assertThat(report.complete()).isFalse();
        java.util.Set<String> named = new java.util.HashSet<>();
        ManifestStore.read(shard).entries().forEach(e -> named.add(e.objectKey()));
        List<String> keys = store.list("").toList().stream().map(dev.felix.offload.store.ObjectSummary::key).toList();
        assertThat(keys).as("what the stopped pass left in the store").isNotEmpty();
        for (String key : keys) {
            if (key.endsWith(".index")) {
                String segment = key.substring(0, key.length() - ".index".length()) + ".segment";
                assertThat(named).as("the segment beside index %s (stored: %s)", key, keys).contains(segment);
            }
        }
        assertThat(pass(keepOne(), StepHook.none()).complete()).isTrue();
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    @Test
    void aStopEndsThePassBetweenSegmentsAndTheNextPassGoesOn() throws Exception {
        setUp();
        // Enough segments that those already uploading when the stop comes (at most
        // InFlightUploads.MAX_UPLOADS) cannot be all of them.
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 2000, 6);
        Path shard = written.keySet().iterator().next();
        assertThat(SegmentFile.list(shard).size()).isGreaterThan(2 + InFlightUploads.MAX_UPLOADS + 1);
        AtomicInteger recorded = new AtomicInteger();
        java.util.Set<Long> begun = java.util.concurrent.ConcurrentHashMap.newKeySet();
        StepHook count = (step, s, id) -> {
            if (step == OffloadStep.RECORDED) {
                recorded.incrementAndGet();
            }
            if (step == OffloadStep.UPLOADED) {
                begun.add(id);
            }
        };
        PassReport stopped = new OffloadPass(new DataRoot(root), store, keepOne(), count, Map.of(NodeId.ENV, "node-a"),
                // Stopped once two uploads are under way (verified segments are recorded in batches, so
                // waiting for two to be recorded could let every upload begin first).
                dir -> OptionalLong.empty()).run(ProgressListener.none(), () -> begun.size() >= 2);
        assertThat(stopped.complete()).isFalse();
        assertThat(stopped.shards().get(0).problem()).contains("stopped before segment");
        assertThat(stopped.shards().get(0).stop()).isInstanceOf(ShardStop.Requested.class);
        // Segments whose uploads had begun when the stop came are finished and recorded, oldest first;
        // no other segment began.
        Manifest afterStop = ManifestStore.read(shard);
        assertThat(afterStop.size()).isGreaterThanOrEqualTo(2).isEqualTo(begun.size());
        assertThat(afterStop.entries()).extracting(ManifestEntry::segmentId).containsExactlyInAnyOrderElementsOf(begun);
        long firstLeft = SegmentFile.list(shard).stream().mapToLong(SegmentFile::id).filter(id -> !begun.contains(id))
                .min().orElseThrow();
        assertThat(stopped.shards().get(0).stop()).isEqualTo(new ShardStop.Requested(firstLeft));
        assertConsistent(shard, written.get(shard));
        assertThat(pass(keepOne(), StepHook.none()).complete()).isTrue();
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    @Test
    void aSecondConcurrentPassIsRefused() throws Exception {
        setUp();
        TestRoots.write(root, 1, 50, 1);
        try (RootLock held = RootLock.acquire(root)) {
            assertThatThrownBy(() -> pass(keepOne(), StepHook.none())).isInstanceOf(RootLock.HeldException.class)
                    .hasMessageContaining("pid " + ProcessHandle.current().pid());
        }
        assertThat(pass(keepOne(), StepHook.none()).complete()).isTrue();
    }

    @Test
    void keepBytesLeavesTheNewestSegmentsThatFit() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 400, 8);
        Path shard = written.keySet().iterator().next();
        PassReport report = pass(keepOne().withLocalRetention(new LocalRetention.KeepBytes(40 * 1024)).withUnlinkSettle(java.time.Duration.ofMillis(300)), StepHook.none());
        assertThat(report.complete()).isTrue();
        long local = 0;
        for (SegmentFile f : SegmentFile.list(shard)) {
            local += Files.size(f.log());
        }
        assertThat(local).isLessThanOrEqualTo(40 * 1024);
        assertThat(SegmentFile.list(shard).size()).isGreaterThan(1);
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    @Test
    void theNodeIdComesFromTheEnvironmentOrAFileCreatedOnce() throws Exception {
        setUp();
        DataRoot dataRoot = new DataRoot(root);
        String created = NodeId.resolve(dataRoot, Map.of());
        assertThat(created).startsWith("node-");
        assertThat(NodeId.resolve(dataRoot, Map.of())).isEqualTo(created);
        assertThat(Files.readString(root.resolve("node-id"))).isEqualTo(created + "\n");
        assertThat(NodeId.resolve(dataRoot, Map.of(NodeId.ENV, "broker-7"))).isEqualTo("broker-7");
        for (String bad : List.of("a/b", "a b", "tab\there", "", "..", "nul\u0000")) {
            assertThatThrownBy(() -> NodeId.resolve(dataRoot, Map.of(NodeId.ENV, bad)))
                    .isInstanceOf(NodeId.InvalidNodeIdException.class).hasMessageContaining(NodeId.ENV);
        }
    }

    @Test
    void aCorruptedObjectIsCaughtOnReadNamingTheKeyAndPosition() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 300, 2);
        pass(keepOne(), StepHook.none());
        Path shard = written.keySet().iterator().next();
        ManifestEntry first = ManifestStore.read(shard).oldestEntry().orElseThrow();
        Path object = store.root().resolve(first.objectKey());
        byte[] bytes = Files.readAllBytes(object);
        bytes[200] ^= 0x01;
        Files.write(object, bytes);
        TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 4096, 1 << 20));
        assertThatThrownBy(() -> reader.read(0, 1000, Long.MAX_VALUE)).isInstanceOf(CorruptionException.class)
                .hasMessageContaining(first.objectKey()).hasMessageContaining("byte ");
    }

    @Test
    void readsBelowTheOldestCopyAreTrimmedAndInAGapAreAGapNamingTheNextOffset() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 300, 2);
        pass(keepOne(), StepHook.none());
        Path shard = written.keySet().iterator().next();
        ManifestStore manifests = ManifestStore.open(shard);
        List<ManifestEntry> entries = manifests.manifest().entries();
        assertThat(entries.size()).isGreaterThanOrEqualTo(3);
        // Drop the oldest entry (as remote retention would) and a middle one (a gap).
        manifests.save(Manifest.of(List.of(entries.get(1), entries.get(3 < entries.size() ? 3 : 2))));
        TieredReader reader = new TieredReader(shard, store, new ChunkCache(store, 4096, 1 << 20));
        assertThat(reader.read(0, 10, 1000)).isEqualTo(new TieredRead.Trimmed(entries.get(1).baseOffset()));
        if (entries.size() > 3) {
            // A hole inside the history is a gap, not the history's start: it names what is missing.
            assertThat(reader.read(entries.get(2).baseOffset(), 10, 1000))
                    .isEqualTo(new TieredRead.Gap(entries.get(2).baseOffset(), entries.get(3).baseOffset() - 1,
                            entries.get(3).baseOffset()));
            // A read that reaches the hole stops before it with what it read; the next read names the hole.
            TieredRead.Records upTo = (TieredRead.Records) reader.read(entries.get(1).lastOffset(), 10, 1 << 20);
            assertThat(upTo.nextOffset()).isEqualTo(entries.get(2).baseOffset());
        }
    }

    @Test
    void aSingleRecordReadFetchesOneChunkNotTheObject() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, "orders", 1, 22_000, 12, TestRoots.LARGE_SEGMENTS, 1024);
        pass(keepOne(), StepHook.none());
        Path shard = written.keySet().iterator().next();
        ManifestEntry entry = ManifestStore.read(shard).oldestEntry().orElseThrow();
        assertThat(entry.sizeBytes()).isGreaterThan(SegmentKeys.INDEX_OBJECT_ABOVE_BYTES);
        ChunkCache cache = new ChunkCache(store, 4096, 1 << 20);
        TieredReader reader = new TieredReader(shard, store, cache);
        long middle = (entry.baseOffset() + entry.lastOffset()) / 2;
        TieredRead.Records one = (TieredRead.Records) reader.read(middle, 1, 1);
        assertThat(one.records()).singleElement().extracting(r -> r.record().offset()).isEqualTo(middle);
        assertThat(one.records().get(0).remote()).isTrue();
        assertThat(cache.gets()).as("the record's chunk, or two if it straddles a boundary").isBetween(1L, 2L);
        assertThat(cache.bytesFetched()).isLessThanOrEqualTo(2 * 4096);
    }

    @Test
    void segmentsOfAtMostOneChunkGoWithoutAnIndexObjectAndAreReadWithoutAskingForOne() throws Exception {
        setUp();
        Map<Path, List<Record>> small = TestRoots.write(root, 1, 1500, 21);
        Map<Path, List<Record>> big = TestRoots.write(root, "invoices", 1, 22_000, 22, TestRoots.LARGE_SEGMENTS, 1024);
        Path moved = big.keySet().iterator().next();
        Map<Path, List<Record>> written = new HashMap<>(small);
        written.putAll(big);
        List<String> puts = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        List<String> asked = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        ObjectStore counting = new dev.felix.offload.store.ForwardingObjectStore(store) {
            @Override
            public dev.felix.offload.store.PutResult put(String key, dev.felix.offload.store.UploadBody body,
                    dev.felix.offload.store.PutOptions options) throws dev.felix.offload.store.StoreException {
                puts.add(key);
                return super.put(key, body, options);
            }

            @Override
            public ObjectHead head(String key) throws dev.felix.offload.store.StoreException {
                asked.add(key);
                return super.head(key);
            }

            @Override
            public byte[] readRange(String key, dev.felix.offload.store.ByteRange range)
                    throws dev.felix.offload.store.StoreException {
                asked.add(key);
                return super.readRange(key, range);
            }

            @Override
            public void readRangeInto(String key, dev.felix.offload.store.ByteRange range, List<byte[]> targets,
                    java.util.function.IntConsumer filled) throws dev.felix.offload.store.StoreException {
                asked.add(key);
                super.readRangeInto(key, range, targets, filled);
            }

            @Override
            public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32)
                    throws dev.felix.offload.store.StoreException {
                asked.add(key);
                return super.readAll(key, maxSize, expectedCrc32);
            }
        };
        PassReport report = new OffloadPass(new DataRoot(root), counting, keepOne(), StepHook.none(),
                Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isTrue();

        Path smallShard = small.keySet().iterator().next();
        List<ManifestEntry> smallEntries = ManifestStore.read(smallShard).entries();
        List<ManifestEntry> largeEntries = ManifestStore.read(moved).entries();
        assertThat(smallEntries).hasSizeGreaterThan(10).allMatch(e -> e.sizeBytes() <= SegmentKeys.INDEX_OBJECT_ABOVE_BYTES);
        assertThat(largeEntries).isNotEmpty().allMatch(e -> e.sizeBytes() > SegmentKeys.INDEX_OBJECT_ABOVE_BYTES);
        assertThat(puts).as("one put per small segment, none for an index").containsAll(
                smallEntries.stream().map(ManifestEntry::objectKey).toList());
        assertThat(puts.stream().filter(k -> k.endsWith(".index") && k.contains("/" + smallShard.getFileName() + "/")))
                .isEmpty();
        for (ManifestEntry e : largeEntries) {
            assertThat(store.head(SegmentKeys.indexKeyFor(e.objectKey())).size()).as("the index beside %s", e.objectKey())
                    .isPositive();
        }

        asked.clear();
        ChunkCache cache = new ChunkCache(counting, ChunkCache.DEFAULT_CHUNK_BYTES, 64L << 20);
        TieredReader reader = new TieredReader(smallShard, counting, cache);
        List<Record> records = written.get(smallShard);
        ManifestEntry middle = smallEntries.get(smallEntries.size() / 2);
        long want = (middle.baseOffset() + middle.lastOffset()) / 2;
        TieredRead.Records one = (TieredRead.Records) reader.read(want, 1, 1);
        assertThat(one.records()).singleElement().extracting(r -> r.record().offset()).isEqualTo(want);
        assertThat(one.records().get(0).record()).isEqualTo(records.stream().filter(r -> r.offset() == want).findFirst()
                .orElseThrow());
        assertThat(asked).as("what the read of one record of a small segment asked the store for")
                .noneMatch(k -> k.endsWith(".index"));
        assertThat(cache.gets()).as("the whole small segment in one GET").isEqualTo(1);
        assertThat(cache.bytesFetched()).isEqualTo(middle.sizeBytes());
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    @Test
    void theKeysOfTheNextSegmentsAreInTheJournalBeforeTheFirstOfThemIsPut() throws Exception {
        setUp();
        Map<Path, List<Record>> written = TestRoots.write(root, 1, 1500, 31);
        Path shard = written.keySet().iterator().next();
        List<java.util.Set<String>> journalAtPut = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        ObjectStore watching = new dev.felix.offload.store.ForwardingObjectStore(store) {
            @Override
            public dev.felix.offload.store.PutResult put(String key, dev.felix.offload.store.UploadBody body,
                    dev.felix.offload.store.PutOptions options) throws dev.felix.offload.store.StoreException {
                try {
                    java.util.Set<String> journal = dev.felix.offload.root.PendingKeys.read(root).orElseThrow();
                    assertThat(journal).as("the journal when %s is put", key).contains(key);
                    journalAtPut.add(journal);
                } catch (IOException | CorruptionException e) {
                    throw new AssertionError(e);
                }
                return super.put(key, body, options);
            }
        };
        PassReport report = new OffloadPass(new DataRoot(root), watching, keepOne(), StepHook.none(),
                Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(report.complete()).isTrue();
        List<String> keys = ManifestStore.read(shard).entries().stream().map(ManifestEntry::objectKey).toList();
        assertThat(keys).hasSizeGreaterThan(10).hasSizeLessThanOrEqualTo(JournalAhead.SEGMENTS);
        assertThat(journalAtPut).hasSize(keys.size());
        assertThat(journalAtPut.get(0)).as("one journal write before the first put covers every segment's key")
                .containsAll(keys);
    }

    private static long crc(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes);
        return crc.getValue();
    }
}
