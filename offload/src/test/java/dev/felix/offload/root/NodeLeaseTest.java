package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Two copies of one data root (same root id, same node id) offloading to one store: the node's
 * lease tells them apart, whatever the order they run in.
 */
class NodeLeaseTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T18:00:00Z"), ZoneOffset.UTC);
    private static final SegmentKeys KEYS = new SegmentKeys("", "broker");

    @TempDir
    Path tmp;

    private ObjectStore store;

    private ObjectStore store() throws Exception {
        if (store == null) {
            store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        }
        return store;
    }

    private NodeClaimCheck.Result write(Path root) throws Exception {
        return write(root, false, NodeLease.Step.NONE);
    }

    /** A writing pass that writes: its check, then its first write's taking of the lease. */
    private NodeClaimCheck.Result write(Path root, boolean takeOver, NodeLease.Step step) throws Exception {
        NodeClaimCheck.Result r = new NodeClaimCheck(new DataRoot(root), store(), KEYS, "--store", CLOCK)
                .withLeaseStep(step).run(NodeClaimCheck.Access.WRITE, takeOver);
        r.lease().orElseThrow().beforeWrite();
        return r;
    }

    private static long epoch(NodeClaimCheck.Result r) {
        return r.lease().orElseThrow().stamp().orElseThrow().epoch();
    }

    private Path root(String name) throws IOException {
        return Files.createDirectories(tmp.resolve(name));
    }

    /** What {@code cp -a} of a whole root leaves: every file, the identity and the lease memory included. */
    private Path copy(Path from, String name) throws IOException {
        Path to = tmp.resolve(name);
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

    private List<String> keys() throws Exception {
        List<String> out = new ArrayList<>();
        ObjectListing listing = store().list("");
        while (listing.hasNext()) {
            String k = listing.next().key();
            if (!k.startsWith(".")) {
                out.add(k);
            }
        }
        return out;
    }

    private List<NodeLease.Stamp> leases() throws Exception {
        return NodeLease.listed(store(), KEYS.nodePrefix());
    }

    @Test
    void aCopyIsStoppedBeforeItWritesOnceTheOtherHasWrittenSinceTheyParted() throws Exception {
        Path a = root("a");
        assertThat(write(a).lease()).isPresent();
        Path b = copy(a, "b");
        assertThat(epoch(write(a))).isEqualTo(2);
        List<String> before = keys();

        NodeClaimCheck.RefusedException e = catchThrowableOfType(NodeClaimCheck.RefusedException.class, () -> write(b));
        assertThat(e.refusal()).isEqualTo(NodeClaimCheck.Refusal.COPIED_ROOT);
        assertThat(e.getMessage()).contains("node id 'broker'").contains("another copy of this data root")
                .contains(a.toAbsolutePath().normalize().toString()).contains(b.toAbsolutePath().normalize().toString())
                .contains("lease 2").contains("last held lease 1")
                .contains("felix-offload reidentify --data-dir " + b.toAbsolutePath().normalize())
                .contains("--take-over-node-id").doesNotContain("\n");
        assertThat(keys()).as("the copy wrote nothing").isEqualTo(before);
        // the original goes on
        assertThat(epoch(write(a))).isEqualTo(3);
        assertThat(leases()).as("older leases are deleted").hasSize(1);
    }

    @Test
    void aPassWithNothingToWriteWritesNoLeaseAndACopyIsStoppedAtItsFirstWrite() throws Exception {
        Path a = root("a");
        write(a);
        Path b = copy(a, "b");
        NodeClaimCheck.Result idle = new NodeClaimCheck(new DataRoot(a), store(), KEYS, "--store", CLOCK)
                .run(NodeClaimCheck.Access.WRITE, false);
        assertThat(idle.lease().orElseThrow().stamp()).isEmpty();
        assertThat(leases()).extracting(NodeLease.Stamp::epoch).containsExactly(1L);
        // b passes the check at its start (nobody wrote since the copy), and a writes first after all
        ObjectStore bStore = new NodeClaimCheck(new DataRoot(b), store(), KEYS, "--store", CLOCK)
                .run(NodeClaimCheck.Access.WRITE, false).fenced(store());
        ObjectStore aStore = idle.fenced(store());
        aStore.put("broker/s/1.segment", UploadBody.ofBytes(new byte[] {1}), PutOptions.defaults());
        List<String> before = keys();
        assertThatThrownBy(() -> bStore.delete("broker/s/1.segment")).isInstanceOf(NodeClaimCheck.RefusedException.class);
        assertThat(keys()).as("b wrote nothing, not even a lease").isEqualTo(before);
    }

    @Test
    void whicheverCopyWritesFirstAfterTheyPartKeepsTheNode() throws Exception {
        Path a = root("a");
        write(a);
        Path b = copy(a, "b");
        write(b); // the copy runs first: it is the holder now
        assertThatThrownBy(() -> write(a)).isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class,
                e -> assertThat(e.refusal()).isEqualTo(NodeClaimCheck.Refusal.COPIED_ROOT));
        write(b);
    }

    @Test
    void aCopyStartingWhileTheOtherAdvancesStopsAndTheOtherGoesOn() throws Exception {
        Path a = root("a");
        write(a);
        Path b = copy(a, "b");
        // b's whole advance runs between a's lease put and a's listing after it
        AtomicReference<Throwable> bOutcome = new AtomicReference<>();
        NodeLease.Step inBetween = written -> {
            try {
                write(b);
            } catch (Throwable t) {
                bOutcome.set(t);
            }
        };
        assertThat(epoch(write(a, false, inBetween))).isEqualTo(2);
        assertThat(bOutcome.get()).as("b finds a lease it did not write").isInstanceOf(NodeClaimCheck.RefusedException.class);
    }

    /**
     * Both copies read the same lease as theirs, both put their next lease, then both list: each sees
     * the other's lease beside its own, and both stop. Without conditional writes: the keys differ.
     */
    @Test
    void twoCopiesAdvancingAtTheSameMomentNeverBothGoOn() throws Exception {
        Path a = root("a");
        write(a);
        Path b = copy(a, "b");
        java.util.concurrent.CyclicBarrier bothThere = new java.util.concurrent.CyclicBarrier(2);
        NodeLease.Step inStep = new NodeLease.Step() {
            @Override
            public void beforePut(NodeLease.Stamp next) {
                await(bothThere); // both have read lease 1 as theirs
            }

            @Override
            public void afterPut(NodeLease.Stamp written) {
                await(bothThere); // both have put their lease 2
            }
        };
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.concurrent.Future<NodeClaimCheck.Result> fa = pool.submit(() -> write(a, false, inStep));
            java.util.concurrent.Future<NodeClaimCheck.Result> fb = pool.submit(() -> write(b, false, inStep));
            for (java.util.concurrent.Future<NodeClaimCheck.Result> f : List.of(fa, fb)) {
                assertThatThrownBy(() -> f.get(60, java.util.concurrent.TimeUnit.SECONDS))
                        .hasCauseInstanceOf(NodeClaimCheck.RefusedException.class)
                        .hasMessageContaining("at the same moment");
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(leases()).extracting(NodeLease.Stamp::epoch).containsExactly(1L, 2L, 2L);
        // neither goes on later either, until one of them is given its own identity or takes the node over
        assertThatThrownBy(() -> write(a)).isInstanceOf(NodeClaimCheck.RefusedException.class);
        assertThatThrownBy(() -> write(b)).isInstanceOf(NodeClaimCheck.RefusedException.class);
        write(a, true, NodeLease.Step.NONE);
        write(a);
        assertThatThrownBy(() -> write(b)).isInstanceOf(NodeClaimCheck.RefusedException.class);
    }

    private static void await(java.util.concurrent.CyclicBarrier barrier) {
        try {
            barrier.await(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aCrashBetweenTheLeasePutAndRememberingItIsNotTakenForACopy() throws Exception {
        Path a = root("a");
        write(a);
        NodeLease.Step crash = written -> {
            throw new IllegalStateException("killed after putting lease " + written);
        };
        assertThatThrownBy(() -> write(a, false, crash)).isInstanceOf(IllegalStateException.class);
        assertThat(leases()).extracting(NodeLease.Stamp::epoch).containsExactly(1L, 2L);
        assertThat(NodeLease.remembered(new DataRoot(a), KEYS.nodePrefix())).extracting(NodeLease.Stamp::epoch)
                .containsExactly(1L, 2L); // held 1, pending 2
        assertThat(epoch(write(a))).isEqualTo(3);
        assertThat(leases()).extracting(NodeLease.Stamp::epoch).containsExactly(3L);
    }

    @Test
    void twoCrashesInARowAroundTheLeasePutNeverMakeTheRootForgetItsLease() throws Exception {
        Path a = root("a");
        write(a);
        NodeLease.Step crashAfterPut = written -> {
            throw new IllegalStateException("killed after putting lease " + written);
        };
        assertThatThrownBy(() -> write(a, false, crashAfterPut)).isInstanceOf(IllegalStateException.class);
        NodeLease.Step crashBeforePut = new NodeLease.Step() {
            @Override
            public void beforePut(NodeLease.Stamp next) {
                throw new IllegalStateException("killed before putting lease " + next);
            }

            @Override
            public void afterPut(NodeLease.Stamp written) {
            }
        };
        assertThatThrownBy(() -> write(a, false, crashBeforePut)).isInstanceOf(IllegalStateException.class);
        // lease 2 stands in the store; the root must still know it as its own
        assertThat(epoch(write(a))).isEqualTo(4);
    }

    @Test
    void aPassOfACopyFencedOffMeanwhileStopsAtItsNextWrite() throws Exception {
        Path a = root("a");
        NodeClaimCheck.Result held = write(a);
        ObjectStore fenced = held.fenced(store());
        fenced.put("broker/s/1.segment", UploadBody.ofBytes(new byte[] {1}), PutOptions.defaults());
        Path b = copy(a, "b");
        ObjectStore bFenced = write(b).fenced(store()); // b advances while a's pass still runs
        assertThatThrownBy(() -> fenced.put("broker/s/2.segment", UploadBody.ofBytes(new byte[] {2}),
                PutOptions.defaults())).isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class,
                e -> assertThat(e.getMessage()).contains("took the lease while this one worked"));
        assertThatThrownBy(() -> fenced.deleteAll(List.of("broker/s/1.segment")))
                .isInstanceOf(NodeClaimCheck.RefusedException.class);
        assertThat(keys()).contains("broker/s/1.segment").doesNotContain("broker/s/2.segment");
        bFenced.delete("broker/s/1.segment");
        assertThat(keys()).doesNotContain("broker/s/1.segment");
        // reads go through whatever the lease
        assertThat(fenced.list("broker/").hasNext()).isTrue();
    }

    @Test
    void aReaderOfAFencedCopyIsWarnedAndWritesNothing() throws Exception {
        Path a = root("a");
        write(a);
        Path b = copy(a, "b");
        write(a);
        List<String> before = keys();
        NodeClaimCheck.Result r = new NodeClaimCheck(new DataRoot(b), store(), KEYS, "--store", CLOCK)
                .run(NodeClaimCheck.Access.READ, false);
        assertThat(r.outcome()).isEqualTo(NodeClaimCheck.Outcome.WARNED);
        assertThat(r.warning().orElseThrow()).contains("another copy of this data root");
        assertThatThrownBy(() -> new NodeClaimCheck(new DataRoot(b), store(), KEYS, "--store", CLOCK)
                .run(NodeClaimCheck.Access.LOCAL_WRITE, false)).isInstanceOf(NodeClaimCheck.RefusedException.class);
        assertThat(keys()).isEqualTo(before);
    }

    @Test
    void aDamagedLeaseFileIsRefusedNamingItNotTakenForNone() throws Exception {
        Path a = root("a");
        write(a);
        Path file = a.resolve(NodeLease.FILE_NAME);
        String text = Files.readString(file);
        assertThat(text).startsWith("felix-offload lease 1\nheld 1 ").contains(" broker/\ncrc32 ");
        Files.writeString(file, text.replace("held 1", "held 7"));
        assertThatThrownBy(() -> write(a)).isInstanceOf(IOException.class).hasMessageContaining(file.toString())
                .hasMessageContaining("crc32");
    }

    @Test
    void leaseKeysAreTheNodesBookkeepingNeverSegments() {
        NodeLease.Stamp s = new NodeLease.Stamp(12, "0123456789abcdef");
        String key = NodeLease.keyOf("tier/broker/", s);
        assertThat(key).isEqualTo("tier/broker/node.lease.00000000000000000012.0123456789abcdef");
        assertThat(NodeLease.isLeaseKey("tier/broker/", key)).isTrue();
        assertThat(NodeClaim.isClaimKey("tier/broker/", key)).isTrue();
        assertThat(NodeLease.isLeaseKey("tier/other/", key)).isFalse();
        assertThat(NodeLease.isLeaseKey("tier/broker/", "tier/broker/node.lease.12.0123456789abcdef")).isFalse();
        assertThat(NodeLease.parseKey("tier/broker/", key)).contains(s);
    }
}
