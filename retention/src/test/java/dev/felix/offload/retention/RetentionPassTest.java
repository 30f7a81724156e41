package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.side.StreamMarker;
import dev.felix.offload.log.side.StreamMarkerFile;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The whole retention pass over a root. */
class RetentionPassTest {

    private static final NodeClaimCheck.Policy CLAIM = new NodeClaimCheck.Policy("test store", false);

    @TempDir
    Path tmp;

    private Path root;
    private FilesystemStore store;
    private final Clock clock = Clock.fixed(TestData.FIRST_RECORD.plus(Duration.ofHours(6)), ZoneOffset.UTC);

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RetentionPass pass(RetentionRules rules, RetentionPassSettings settings) {
        return new RetentionPass(new DataRoot(root), store, rules, settings, clock, TestData.ENV, RetentionHook.none());
    }

    @Test
    void onePassAppliesEachShardsSettingsFinishesDeletedStreamsAndSweepsOrphans() throws Exception {
        Path orders = TestData.shardOf(root, "orders", 0);
        Path payments = TestData.shardOf(root, "payments", 0);
        Path audit = root.resolve(new ShardKey("acme_eu", "default", "audit", 0).directoryName());
        List<Record> ordersWritten = TestData.write(orders, 300, Duration.ofMinutes(1), 1);
        List<Record> paymentsWritten = TestData.write(payments, 300, Duration.ofMinutes(1), 2);
        TestData.write(audit, 300, Duration.ofMinutes(1), 3);
        Path gone = TestData.shardOf(root, "gone", 0);
        TestData.write(gone, 100, Duration.ofMinutes(1), 4);
        TestData.offload(root, store);
        Files.createDirectories(root.resolve(".deleted"));
        Files.move(gone, root.resolve(".deleted").resolve(gone.getFileName()));
        // An upload's leftover of offsets the shard still holds once retention is done (the newest stay).
        String orphan = new SegmentKeys("", TestData.NODE).segmentKey(orders.getFileName().toString(), 290, 99);
        store.put(orphan, UploadBody.ofBytes(new byte[] {1}), PutOptions.defaults());
        // The marker says acme_eu is a tenant of its own, so acme/*/* does not take its shards in.
        StreamMarkerFile.save(root, new StreamMarker("acme_eu", "default", "audit", OptionalLong.of(0), false,
                OptionalLong.empty()));
        long auditBytes = TestData.localBytes(audit);

        RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults())
                .forStreams("acme/*/*", RetentionOverride.none().with(RetentionSettings.RETENTION_MS,
                        Duration.ofHours(3).toMillis()))
                .forStreams("acme/default/payments", RetentionOverride.none().with(RetentionSettings.RETENTION_MS,
                        UNLIMITED).with(RetentionSettings.LOCAL_RETENTION_BYTES, 0))
                .build();
        RetentionReport report = pass(rules, RetentionPassSettings.defaults()
                .withOrphanSweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO))).run(StopSignal.never());

        assertThat(report.succeeded()).as(report.failures().toString()).isTrue();
        assertThat(report.nodeId()).isEqualTo(TestData.NODE);
        // In name order: acme_default_orders, acme_default_payments, acme_eu_default_audit.
        assertThat(report.shards()).extracting(ShardRetentionResult::shard).containsExactly(
                orders.getFileName().toString(), payments.getFileName().toString(), audit.getFileName().toString());
        ShardRetentionResult o = report.shards().get(0);
        ShardRetentionResult p = report.shards().get(1);
        assertThat(o.settings().retentionMs()).isEqualTo(Duration.ofHours(3).toMillis());
        assertThat(o.remote().expiredSegments()).isNotEmpty();
        assertThat(p.settings()).isEqualTo(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED));
        assertThat(SegmentFile.list(payments)).hasSize(1);
        assertThat(p.remote().expiredSegments()).isEmpty();
        assertThat(report.shards().get(2).settings()).isEqualTo(RetentionSettings.defaults());
        assertThat(TestData.localBytes(audit)).isEqualTo(auditBytes);

        assertThat(report.localSegmentsDeleted()).isEqualTo(o.local().removedSegments().size() + p.local().removedSegments().size());
        assertThat(report.localBytesDeleted()).isEqualTo(o.local().removedBytes() + p.local().removedBytes());
        assertThat(report.remoteSegmentsDeleted()).isEqualTo(o.remote().expiredSegments().size());
        assertThat(report.remoteBytesDeleted()).isEqualTo(o.remote().expiredBytes());
        assertThat(report.deletedStreamDirectoriesFinished()).isEqualTo(1);
        assertThat(report.remoteObjectsDeleted())
                .isEqualTo(o.remote().objectsDeleted() + report.deletedStreams().objectsDeleted());
        assertThat(report.orphansFound()).isEqualTo(1);
        assertThat(report.orphansDeleted()).isEqualTo(1);
        assertThat(root.resolve(".deleted").resolve(gone.getFileName()).resolve(DeletedStreams.DONE_FILE))
                .as("recorded as done; the broker removes the directory").exists();

        for (Path shard : List.of(orders, payments, audit)) {
            TestData.assertEveryEntryHasItsObject(shard, store);
        }
        TestData.assertReadsExactlyFrom(orders, ordersWritten,
                ManifestStore.read(orders).oldestEntry().orElseThrow().baseOffset(), store);
        TestData.assertReadsExactlyFrom(payments, paymentsWritten, 0, store);
        // Only what manifests name is left under the node's prefix.
        long named = 0;
        for (Path shard : List.of(orders, payments, audit)) {
            named += ManifestStore.read(shard).entries().stream().mapToInt(e -> TestData.storedKeysOf(e).size()).sum();
        }
        assertThat(TestData.keys(store, new SegmentKeys("", TestData.NODE).nodePrefix())).hasSize((int) named);
    }

    @Test
    @SuppressWarnings("try")
    void thePassRefusesToRunWhileAnotherHoldsTheRoot() throws Exception {
        TestData.write(TestData.shardOf(root, "orders", 0), 50, Duration.ofSeconds(1), 1);
        try (RootLock held = RootLock.acquire(root)) {
            assertThatThrownBy(() -> pass(RetentionRules.of(RetentionSettings.defaults()), RetentionPassSettings.defaults())
                    .run(StopSignal.never())).isInstanceOf(RootLock.HeldException.class);
        }
    }

    @Test
    void aStopRequestEndsThePassBetweenShards() throws Exception {
        for (String stream : List.of("a", "b", "c")) {
            TestData.write(TestData.shardOf(root, stream, 0), 300, Duration.ofMinutes(1), stream.hashCode());
        }
        TestData.offload(root, store);
        AtomicInteger removed = new AtomicInteger();
        RetentionHook counting = (step, shard, detail) -> {
            if (step == RetentionStep.LOCAL_SEGMENT_REMOVED) {
                removed.incrementAndGet();
            }
        };
        RetentionPass pass = new RetentionPass(new DataRoot(root), store,
                RetentionRules.of(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED)), RetentionPassSettings.defaults(),
                clock, TestData.ENV, counting);

        RetentionReport report = pass.run(() -> removed.get() > 0);

        assertThat(report.stopped()).isTrue();
        assertThat(report.shards()).hasSize(1);
        assertThat(report.localSegmentsDeleted()).isEqualTo(1);
        assertThat(report.orphanSweep()).isEmpty();
        assertThat(report.succeeded()).isTrue();
    }

    @Test
    void aShardThatFailsIsReportedAndTheOthersGoOn() throws Exception {
        Path broken = TestData.shardOf(root, "broken", 0);
        Path fine = TestData.shardOf(root, "fine", 0);
        TestData.write(broken, 300, Duration.ofMinutes(1), 1);
        TestData.write(fine, 300, Duration.ofMinutes(1), 2);
        TestData.offload(root, store);
        Files.write(ManifestStore.fileIn(broken), new byte[] {9, 9, 9, 9});

        RetentionReport report = pass(RetentionRules.of(new RetentionSettings(0, UNLIMITED, UNLIMITED, UNLIMITED)),
                RetentionPassSettings.defaults()).run(StopSignal.never());

        // The shard fails, and the sweep leaves the keys under its prefix alone.
        assertThat(report.failures()).containsOnlyKeys(broken.getFileName().toString(), "orphan-sweep");
        assertThat(report.failures().get("orphan-sweep")).contains(broken.getFileName().toString());
        assertThat(report.failureList()).extracting(RetentionReport.Failure::site, RetentionReport.Failure::where)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(RetentionReport.Failure.Site.SHARD, broken.getFileName().toString()),
                        org.assertj.core.groups.Tuple.tuple(RetentionReport.Failure.Site.ORPHAN_SWEEP, "orphan-sweep"));
        assertThat(report.succeeded()).isFalse();
        assertThat(SegmentFile.list(fine)).hasSize(1);
    }

    private PassReport offloadCheckingClaim() throws Exception {
        return new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults(), StepHook.none(), TestData.ENV,
                dir -> OptionalLong.empty()).checkingClaim(CLAIM).run(ProgressListener.none());
    }

    /** Records stamped at the clock's "now": inside any time limit. */
    private void appendRecent(Path shard, int records) throws Exception {
        SplittableRandom random = new SplittableRandom(records);
        long now = TestData.micros(clock.instant());
        try (ShardLog log = ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
            for (int i = 0; i < records; i++) {
                byte[] payload = new byte[200 + random.nextInt(200)];
                random.nextBytes(payload);
                log.append(now, payload);
            }
        }
    }

    /**
     * A pass that hands the root over between shards: the pass it lets in runs over the root (its lock
     * is free), records what it uploads and advances the node's lease; retention goes on with a lease of
     * its own and the manifests as they are now, refusing nothing as a copied root and deleting nothing
     * the other pass recorded.
     */
    @Test
    void anOffloadLetInBetweenShardsRecordsAndRetentionGoesOnUnderItsOwnLease() throws Exception {
        List<Path> shards = new ArrayList<>();
        for (String stream : List.of("a", "b", "c")) {
            Path shard = TestData.shardOf(root, stream, 0);
            TestData.write(shard, 300, Duration.ofMinutes(1), stream.hashCode());
            shards.add(shard);
        }
        offloadCheckingClaim();
        int aBefore = ManifestStore.read(shards.get(0)).size();

        AtomicInteger asked = new AtomicInteger();
        List<PassReport> letIn = new ArrayList<>();
        RootHandover handover = new RootHandover() {
            @Override
            public boolean wanted() {
                return asked.incrementAndGet() == 2; // after the first shard, once
            }

            @Override
            public boolean handOver(StopSignal stop) {
                try {
                    // the shard retention has just expired entries of gets new segments, and the offload records them
                    appendRecent(shards.get(0), 200);
                    letIn.add(offloadCheckingClaim()); // takes the root's lock: retention let it go
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return true;
            }
        };
        RetentionRules rules = RetentionRules.of(RetentionSettings.defaults().with(RetentionSettings.RETENTION_MS, Duration.ofHours(3).toMillis()));
        RetentionReport report = new RetentionPass(new DataRoot(root), store, rules, RetentionPassSettings.defaults(),
                clock, TestData.ENV, RetentionHook.none()).checkingClaim(CLAIM).handingOverTo(handover)
                .run(StopSignal.never());

        assertThat(letIn).hasSize(1);
        assertThat(letIn.get(0).segmentsUploaded()).isPositive();
        assertThat(report.succeeded()).as(report.failures().toString()).isTrue();
        for (ShardRetentionResult s : report.shards()) {
            assertThat(s.remote().expiredSegments()).as(s.shard()).isNotEmpty();
        }
        // What the offload recorded in the first shard stands, each entry with its object.
        List<ManifestEntry> a = ManifestStore.read(shards.get(0)).entries();
        assertThat(a.size()).isGreaterThan(aBefore - report.shards().get(0).remote().expiredSegments().size());
        assertThat(a).anyMatch(e -> e.newestTimestampMicros() == TestData.micros(clock.instant()));
        for (Path shard : shards) {
            TestData.assertEveryEntryHasItsObject(shard, store);
        }
        // The lease at the top is this root's: retention took one after the offload's.
        assertThat(NodeLease.standing(new DataRoot(root), store, new SegmentKeys("", TestData.NODE).nodePrefix()))
                .isEqualTo(NodeLease.Standing.THIS_ROOT);
    }

    /**
     * A pass that comes to wait while retention reads the manifests (every one, before anything is
     * deleted) goes first: retention lets the root go in the middle of that read, and reads them all
     * again once the root is back, then runs every shard.
     */
    @Test
    void aPassComingToWaitWhileTheManifestsAreReadGoesFirst() throws Exception {
        int count = 2 * dev.felix.offload.root.LiveKeys.MANIFESTS_PER_ASK + 3;
        List<Path> shards = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Path shard = TestData.shardOf(root, "s" + i, 0);
            TestData.write(shard, 300, Duration.ofMinutes(1), i);
            shards.add(shard);
        }
        assertThat(offloadCheckingClaim().complete()).isTrue();
        for (Path shard : shards) {
            assertThat(ManifestStore.read(shard).size()).as("entries of %s", shard).isPositive();
        }

        List<String> askedFrom = new ArrayList<>();
        List<PassReport> letIn = new ArrayList<>();
        AtomicInteger asked = new AtomicInteger();
        RootHandover handover = new RootHandover() {
            @Override
            public boolean wanted() {
                if (asked.incrementAndGet() != 1) {
                    return false;
                }
                // the first ask, whenever it comes: who asked?
                askedFrom.add(StackWalker.getInstance().walk(frames -> frames.skip(1).limit(2)
                        .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
                        .collect(java.util.stream.Collectors.joining(" <- "))));
                return true;
            }

            @Override
            public boolean handOver(StopSignal stop) {
                try {
                    letIn.add(offloadCheckingClaim()); // takes the root's lock: retention let it go
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                return true;
            }
        };
        RetentionRules rules = RetentionRules.of(RetentionSettings.defaults().with(RetentionSettings.RETENTION_MS,
                Duration.ofHours(3).toMillis()));
        RetentionReport report = new RetentionPass(new DataRoot(root), store, rules, RetentionPassSettings.defaults(),
                clock, TestData.ENV, RetentionHook.none()).checkingClaim(CLAIM).handingOverTo(handover)
                .run(StopSignal.never());

        assertThat(letIn).hasSize(1);
        assertThat(askedFrom).as("the root was let go in the middle of the first read of the manifests")
                .containsExactly("LiveKeys.read <- RetentionPass.hold");
        assertThat(report.succeeded()).as(report.failures().toString()).isTrue();
        assertThat(report.shards()).hasSize(count);
        for (Path shard : shards) {
            TestData.assertEveryEntryHasItsObject(shard, store);
        }
    }
}
