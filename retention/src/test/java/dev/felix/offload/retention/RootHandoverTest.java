package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.fs.FilesystemStore;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A retention pass that hands the root over between shards: the pass it lets in runs over the root
 * (its lock is free), records what it uploads, and advances the node's lease; retention goes on with
 * a lease of its own and the manifests as they are now, refusing nothing as a copied root and
 * deleting nothing the other pass recorded.
 */
class RootHandoverTest {

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

    private PassReport offload() throws Exception {
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

    @Test
    void anOffloadLetInBetweenShardsRecordsAndRetentionGoesOnUnderItsOwnLease() throws Exception {
        List<Path> shards = new ArrayList<>();
        for (String stream : List.of("a", "b", "c")) {
            Path shard = TestData.shardOf(root, stream, 0);
            TestData.write(shard, 300, Duration.ofMinutes(1), stream.hashCode());
            shards.add(shard);
        }
        offload();
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
                    letIn.add(offload()); // takes the root's lock: retention let it go
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
}
