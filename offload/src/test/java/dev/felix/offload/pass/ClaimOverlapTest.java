package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.store.DigestPlan;
import dev.felix.offload.store.ListPage;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.PutResult;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pass that unlinks nothing reads its segments while the node claim is checked, and sends nothing
 * for them before the check passed; one that may unlink checks the claim before any segment is read.
 * The claim check's first request (its listing) is held until a segment was planned, which only a
 * pass that overlaps the two lets happen (the other would wait forever: the hold gives up after a
 * minute and says so).
 */
class ClaimOverlapTest {

    @TempDir
    Path tmp;

    /** A real store that notes every call in order, and holds the first listing until {@link #release}. */
    static final class Recording extends ForwardingObjectStore {
        final ObjectStore real;
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch planned = new CountDownLatch(1);
        volatile boolean holdListing = true;
        volatile boolean heldInVain;

        Recording(ObjectStore real) {
            super(real);
            this.real = real;
        }

        @Override
        public Optional<DigestPlan> digestPlan(long length) throws StoreException {
            events.add("plan");
            planned.countDown();
            return real.digestPlan(length);
        }

        @Override
        public ListPage listPage(String prefix, String continuation, int maxKeys) throws StoreException {
            if (holdListing) {
                holdListing = false;
                try {
                    heldInVain = !planned.await(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            events.add("list " + prefix);
            return real.listPage(prefix, continuation, maxKeys);
        }

        @Override
        public PutResult put(String key, UploadBody body, PutOptions options) throws StoreException {
            events.add("put " + key);
            return real.put(key, body, options);
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            events.add("head " + key);
            return real.head(key);
        }

        @Override
        public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
            events.add("get " + key);
            return real.readAll(key, maxSize, expectedCrc32);
        }

        @Override
        public void delete(String key) throws StoreException {
            events.add("delete " + key);
            real.delete(key);
        }

        @Override
        public void deleteAll(Collection<String> keys) throws StoreException {
            events.add("delete " + keys);
            real.deleteAll(keys);
        }
    }

    private OffloadPass pass(Path root, ObjectStore store, OffloadSettings settings) {
        return new OffloadPass(new DataRoot(root), store, settings, StepHook.none(), Map.of(NodeId.ENV, "broker"),
                dir -> OptionalLong.empty()).checkingClaim(new NodeClaimCheck.Policy("--store", false));
    }

    @Test
    void aPassThatUnlinksNothingReadsSegmentsWhileTheClaimIsCheckedAndSendsNothingBefore() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        TestRoots.write(root, 2, 600, 3);
        Recording store = new Recording(FilesystemStore.open(tmp.resolve("store")));
        PassReport report = pass(root, store, OffloadSettings.defaults()).run(ProgressListener.none());
        assertThat(report.complete()).isTrue();
        assertThat(report.segmentsUploaded()).isPositive();
        assertThat(store.heldInVain).as("a segment was planned while the claim's listing was held").isFalse();
        List<String> events = List.copyOf(store.events);
        int claimed = events.indexOf("put broker/node.claim");
        assertThat(claimed).as("the pass claimed the store").isNotNegative();
        assertThat(events.indexOf("plan")).isLessThan(events.indexOf("list broker/node.claim"));
        assertThat(events.subList(0, claimed)).as("nothing of a segment's before the claim")
                .noneMatch(e -> e.startsWith("put ") || e.startsWith("head broker/acme"));
    }

    @Test
    void aPassThatMayUnlinkChecksTheClaimBeforeReadingAnySegment() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        TestRoots.write(root, 1, 600, 4);
        Recording store = new Recording(FilesystemStore.open(tmp.resolve("store")));
        store.holdListing = false;
        PassReport report = pass(root, store, OffloadSettings.defaults()
                .withLocalRetention(new LocalRetention.KeepSegments(1))).run(ProgressListener.none());
        assertThat(report.segmentsUnlinked()).isPositive();
        List<String> events = List.copyOf(store.events);
        assertThat(events.indexOf("put broker/node.claim")).isLessThan(events.indexOf("plan"));
    }

    @Test
    void aRefusedClaimFailsThePassWithItsOwnErrorAndNothingOfTheSegmentsIsSent() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path other = Files.createDirectories(tmp.resolve("other"));
        TestRoots.write(root, 2, 600, 5);
        ObjectStore real = FilesystemStore.open(tmp.resolve("store"));
        new NodeClaimCheck(new DataRoot(other), real, new dev.felix.offload.root.SegmentKeys("", "broker"), "--store",
                java.time.Clock.systemUTC()).run(NodeClaimCheck.Access.WRITE, false);
        Recording store = new Recording(real);
        assertThatThrownBy(() -> pass(root, store, OffloadSettings.defaults()).run(ProgressListener.none()))
                .isInstanceOf(NodeClaimCheck.RefusedException.class).hasMessageContaining("another data root");
        assertThat(store.events).noneMatch(e -> e.startsWith("put ") || e.startsWith("delete "));
        try (var files = Files.walk(root)) {
            assertThat(files.map(p -> p.getFileName().toString())).as("no manifest or side file")
                    .noneMatch(n -> n.startsWith("offload.") && !n.equals("offload.lock"));
        }
    }
}
