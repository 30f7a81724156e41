package dev.felix.offload.root;

import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.pass.TestRoots;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeClaimCheckTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T18:00:00Z"), ZoneOffset.UTC);
    private static final SegmentKeys KEYS = new SegmentKeys("", "broker");

    @TempDir
    Path tmp;

    private ObjectStore store(String name) throws Exception {
        return FilesystemStore.open(Files.createDirectories(tmp.resolve(name)));
    }

    private static NodeClaimCheck.Result check(Path root, ObjectStore store, NodeClaimCheck.Access access,
                                               boolean takeOver) throws Exception {
        return new NodeClaimCheck(new DataRoot(root), store, KEYS, "--store", CLOCK).run(access, takeOver);
    }

    private static NodeClaim claimIn(ObjectStore store) throws Exception {
        return NodeClaim.decode(store.readAll(NodeClaim.keyFor(KEYS), NodeClaim.MAX_BYTES, OptionalLong.empty()));
    }

    /** A root with one shard offloaded into {@code store} (without a claim, as before claims existed). */
    private Path offloaded(String name, ObjectStore store) throws Exception {
        Path root = Files.createDirectories(tmp.resolve(name));
        TestRoots.write(root, 1, 300, 7);
        PassReport r = new OffloadPass(new DataRoot(root), store, OffloadSettings.defaults(), StepHook.none(),
                Map.of(NodeId.ENV, "broker"), dir -> OptionalLong.empty()).run(ProgressListener.none());
        assertThat(r.segmentsUploaded()).isPositive();
        return root;
    }

    @Test
    void aFreshRootClaimsAnEmptyStoreAndThenHoldsIt() throws Exception {
        ObjectStore store = store("store");
        Path root = Files.createDirectories(tmp.resolve("a"));
        NodeClaimCheck.Result first = check(root, store, NodeClaimCheck.Access.WRITE, false);
        assertThat(first.outcome()).isEqualTo(NodeClaimCheck.Outcome.CLAIMED);
        String id = OffloadRootId.read(new DataRoot(root)).orElseThrow();
        NodeClaim claim = claimIn(store);
        assertThat(claim.rootId()).isEqualTo(id);
        assertThat(claim.nodeId()).isEqualTo("broker");
        assertThat(claim.root()).isEqualTo(root.toAbsolutePath().normalize().toString());
        assertThat(claim.created()).isEqualTo(CLOCK.instant());
        assertThat(check(root, store, NodeClaimCheck.Access.WRITE, false).outcome()).isEqualTo(NodeClaimCheck.Outcome.HELD);
        assertThat(Files.readString(root.resolve("offload-root-id"))).isEqualTo(id + "\n");
    }

    @Test
    void aSecondRootOfTheSameNodeIdIsRefusedAndReadersAreWarned() throws Exception {
        ObjectStore store = store("store");
        Path a = Files.createDirectories(tmp.resolve("a"));
        check(a, store, NodeClaimCheck.Access.WRITE, false);
        byte[] before = store.readAll(NodeClaim.keyFor(KEYS), NodeClaim.MAX_BYTES, OptionalLong.empty());
        Path b = Files.createDirectories(tmp.resolve("b"));
        for (NodeClaimCheck.Access writer : new NodeClaimCheck.Access[] {NodeClaimCheck.Access.WRITE,
                NodeClaimCheck.Access.LOCAL_WRITE}) {
            assertThatThrownBy(() -> check(b, store, writer, false))
                    .isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class, e -> assertThat(e.refusal())
                            .isEqualTo(NodeClaimCheck.Refusal.HELD_BY_ANOTHER_ROOT))
                    .hasMessageContaining("FELIX_NODE_ID").hasMessageContaining("node-id")
                    .hasMessageContaining(a.toAbsolutePath().normalize().toString())
                    .hasMessageContaining("--store").hasMessageContaining("--take-over-node-id");
        }
        NodeClaimCheck.Result read = check(b, store, NodeClaimCheck.Access.READ, false);
        assertThat(read.outcome()).isEqualTo(NodeClaimCheck.Outcome.WARNED);
        assertThat(read.warning().orElseThrow()).contains("claimed");
        assertThat(store.readAll(NodeClaim.keyFor(KEYS), NodeClaim.MAX_BYTES, OptionalLong.empty())).isEqualTo(before);
        assertThat(b.resolve("offload-root-id")).doesNotExist();
    }

    @Test
    void aTakeOverReplacesTheClaimAndTheOldHolderIsRefusedAfter() throws Exception {
        ObjectStore store = store("store");
        Path a = Files.createDirectories(tmp.resolve("a"));
        check(a, store, NodeClaimCheck.Access.WRITE, false);
        Path b = Files.createDirectories(tmp.resolve("b"));
        NodeClaimCheck.Result taken = check(b, store, NodeClaimCheck.Access.WRITE, true);
        assertThat(taken.outcome()).isEqualTo(NodeClaimCheck.Outcome.TAKEN_OVER);
        assertThat(claimIn(store).rootId()).isEqualTo(OffloadRootId.read(new DataRoot(b)).orElseThrow());
        assertThat(check(b, store, NodeClaimCheck.Access.WRITE, false).outcome()).isEqualTo(NodeClaimCheck.Outcome.HELD);
        assertThatThrownBy(() -> check(a, store, NodeClaimCheck.Access.WRITE, false))
                .isInstanceOf(NodeClaimCheck.RefusedException.class);
    }

    @Test
    void aRootOffloadedBeforeClaimsExistedClaimsTheStoreHoldingItsObjects() throws Exception {
        ObjectStore store = store("store");
        Path root = offloaded("a", store);
        assertThat(check(root, store, NodeClaimCheck.Access.READ, false).outcome())
                .isEqualTo(NodeClaimCheck.Outcome.UNCLAIMED);
        assertThat(check(root, store, NodeClaimCheck.Access.WRITE, false).outcome())
                .isEqualTo(NodeClaimCheck.Outcome.CLAIMED);
    }

    @Test
    void aRootWhoseObjectsAreElsewhereIsRefusedWhateverTheTakeOver() throws Exception {
        Path root = offloaded("a", store("first"));
        ObjectStore other = store("second");
        for (boolean takeOver : new boolean[] {false, true}) {
            assertThatThrownBy(() -> check(root, other, NodeClaimCheck.Access.WRITE, takeOver))
                    .isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class, e -> assertThat(e.refusal())
                            .isEqualTo(NodeClaimCheck.Refusal.NOT_THIS_ROOTS_STORE))
                    .hasMessageContaining("--store").hasMessageContaining("is absent");
        }
        assertThat(check(root, other, NodeClaimCheck.Access.READ, false).warning()).isPresent();
        assertThat(other.list("").hasNext()).as("nothing written to the other store").isFalse();
    }

    @Test
    void objectsNoClaimCoversAreClaimedOnlyByATakeOver() throws Exception {
        ObjectStore store = store("store");
        store.put("broker/acme/00000000000000000000-00000000000000000000.segment",
                UploadBody.ofBytes("someone's".getBytes(StandardCharsets.UTF_8)));
        Path root = Files.createDirectories(tmp.resolve("a"));
        assertThatThrownBy(() -> check(root, store, NodeClaimCheck.Access.WRITE, false))
                .isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class, e -> assertThat(e.refusal())
                        .isEqualTo(NodeClaimCheck.Refusal.UNCLAIMED_OBJECTS));
        assertThat(check(root, store, NodeClaimCheck.Access.WRITE, true).outcome())
                .isEqualTo(NodeClaimCheck.Outcome.CLAIMED);
    }

    @Test
    void anUnreadableClaimRefusesWritersUntilTakenOver() throws Exception {
        ObjectStore store = store("store");
        store.put(NodeClaim.keyFor(KEYS), UploadBody.ofBytes("garbage\n".getBytes(StandardCharsets.UTF_8)));
        Path root = Files.createDirectories(tmp.resolve("a"));
        assertThatThrownBy(() -> check(root, store, NodeClaimCheck.Access.WRITE, false))
                .isInstanceOfSatisfying(NodeClaimCheck.RefusedException.class, e -> assertThat(e.refusal())
                        .isEqualTo(NodeClaimCheck.Refusal.UNREADABLE_CLAIM));
        assertThat(check(root, store, NodeClaimCheck.Access.WRITE, true).outcome())
                .isEqualTo(NodeClaimCheck.Outcome.TAKEN_OVER);
    }

    @Test
    void aDamagedRootIdFileIsAnErrorNamingIt() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("a"));
        Files.writeString(root.resolve("offload-root-id"), "not-an-id\n");
        assertThatThrownBy(() -> check(root, store("store"), NodeClaimCheck.Access.WRITE, false))
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("offload-root-id");
    }

    @Test
    void anOffloadPassCheckingTheClaimWritesNothingWhenRefused() throws Exception {
        ObjectStore store = store("store");
        Path a = Files.createDirectories(tmp.resolve("a"));
        check(a, store, NodeClaimCheck.Access.WRITE, false);
        Path b = Files.createDirectories(tmp.resolve("b"));
        TestRoots.write(b, 1, 300, 9);
        OffloadPass pass = new OffloadPass(new DataRoot(b), store, OffloadSettings.defaults(), StepHook.none(),
                Map.of(NodeId.ENV, "broker"), dir -> OptionalLong.empty())
                .checkingClaim(new NodeClaimCheck.Policy("--store", false));
        assertThatThrownBy(() -> pass.run(ProgressListener.none())).isInstanceOf(NodeClaimCheck.RefusedException.class);
        var listing = store.list("broker/");
        int objects = 0;
        while (listing.hasNext()) {
            listing.next();
            objects++;
        }
        assertThat(objects).as("only the claim").isEqualTo(1);
        try (var dirs = Files.list(b)) {
            for (Path d : dirs.filter(Files::isDirectory).toList()) {
                assertThat(ManifestStore.read(d)).isEqualTo(Manifest.empty());
            }
        }
    }
}
