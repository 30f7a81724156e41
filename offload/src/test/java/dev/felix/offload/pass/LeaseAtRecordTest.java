package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The offload pass confirms the node's lease once before each manifest write, not before every put:
 * a copy of the data root that another copy fenced off mid-pass records nothing it uploaded after
 * that (its segments keep their records), and a pass lists the leases far fewer times than it puts.
 */
class LeaseAtRecordTest {

    private static final SegmentKeys KEYS = new SegmentKeys("", "broker");

    @TempDir
    Path tmp;

    /** A real store that counts puts and lease listings, and runs {@code atPut} before the put numbered {@code when}. */
    static final class Counting extends ForwardingObjectStore {
        final AtomicInteger puts = new AtomicInteger();
        final AtomicInteger leaseListings = new AtomicInteger();
        final List<String> putAfterTakeOver = Collections.synchronizedList(new ArrayList<>());
        volatile int when = Integer.MAX_VALUE;
        volatile Runnable atPut = () -> {
        };
        volatile boolean takenOver;

        Counting(ObjectStore real) {
            super(real);
        }

        @Override
        public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
            if (key.endsWith(SegmentKeys.SEGMENT_SUFFIX) && puts.incrementAndGet() == when) {
                atPut.run();
                takenOver = true;
            }
            if (takenOver) {
                putAfterTakeOver.add(key);
            }
            return super.put(key, body, options);
        }

        @Override
        public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
            if (prefix.contains(NodeLease.KEY_PART)) {
                leaseListings.incrementAndGet();
            }
            return super.listPage(prefix, continuation, maxKeys);
        }
    }

    private static OffloadPass pass(Path root, ObjectStore store, boolean unlinks) {
        OffloadSettings settings = OffloadSettings.defaults().withRetries(2, java.time.Duration.ofMillis(1));
        if (unlinks) {
            settings = settings.withLocalRetention(new LocalRetention.KeepSegments(1)).withUnlinkSettle(java.time.Duration.ZERO);
        }
        return new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(NodeId.ENV, "broker"),
                dir -> OptionalLong.empty()).checkingClaim(new NodeClaimCheck.Policy("--store", false));
    }

    private static Path copy(Path from, Path to) throws Exception {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return to;
    }

    @ParameterizedTest(name = "unlinks: {0}")
    @ValueSource(booleans = {false, true})
    void aPassListsTheLeasesOncePerRecordingNotOncePerPut(boolean unlinks) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        TestRoots.write(root, 1, 1500, 5);
        Counting store = new Counting(FilesystemStore.open(Files.createDirectories(tmp.resolve("store"))));
        PassReport first = pass(root, store, unlinks).run(ProgressListener.none());
        assertThat(first.complete()).isTrue();
        assertThat(first.segmentsUploaded()).isGreaterThan(20);
        // Taking the lease lists twice; each manifest write once more. One listing per put before.
        assertThat(store.leaseListings.get()).as("lease listings for %d puts", store.puts.get())
                .isLessThan(store.puts.get() / 2);
    }

    @ParameterizedTest(name = "unlinks: {0}")
    @ValueSource(booleans = {false, true})
    void aCopyFencedOffMidPassRecordsNothingItUploadedAfterAndKeepsItsRecords(boolean unlinks) throws Exception {
        Path a = Files.createDirectories(tmp.resolve("a"));
        Map<Path, List<Record>> written = TestRoots.write(a, 1, 1500, 6);
        Path shard = written.keySet().iterator().next();
        Counting store = new Counting(FilesystemStore.open(Files.createDirectories(tmp.resolve("store"))));
        int before = SegmentFileCount.of(shard);
        Path b = tmp.resolve("b");
        store.when = 4;
        store.atPut = () -> {
            try {
                // a's pass holds the node's lease by now; b is made as cp -a (or a volume snapshot) makes
                // it, lease memory included, and writes, so takes the lease while a's pass is under way.
                copy(a, b);
                NodeClaimCheck.Result r = new NodeClaimCheck(new DataRoot(b), store, KEYS, "--store", Clock.systemUTC())
                        .run(NodeClaimCheck.Access.WRITE, false);
                r.lease().orElseThrow().beforeWrite();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        assertThatThrownBy(() -> pass(a, store, unlinks).run(ProgressListener.none()))
                .isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class,
                        e -> assertThat(e.refusal()).isEqualTo(NodeClaimCheck.Refusal.COPIED_ROOT));
        Set<String> recorded = new java.util.HashSet<>();
        for (ManifestEntry e : ManifestStore.read(shard).entries()) {
            recorded.add(e.objectKey());
        }
        assertThat(store.putAfterTakeOver).as("a's uploads after b took the lease").isNotEmpty();
        assertThat(recorded).as("a's entries").doesNotContainAnyElementsOf(store.putAfterTakeOver);
        // Nothing a did not record left its disk: every record is local or in a recorded copy.
        assertThat(SegmentFileCount.of(shard) + recorded.size()).isGreaterThanOrEqualTo(before);
        TestRoots.assertEveryOffsetReadsBack(written, store);
    }

    /** Segment files in a shard directory. */
    static final class SegmentFileCount {
        static int of(Path shard) throws Exception {
            return dev.felix.offload.log.SegmentFile.list(shard).size();
        }
    }
}
