package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.store.StoreRejectedException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one opening of root, lock, store and claim the repair commands share: what each access takes
 * and checks, that it all closes together, and the typed way its failures come out.
 */
class RepairSessionTest {

    @TempDir
    Path tmp;

    private String store;

    private Path offloadedRoot(String name) throws Exception {
        store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        Path root = tmp.resolve(name);
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "1", "--records", "400",
                "--payload-bytes", "100", "--segment-bytes", "8192");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        CliRun off = CliRun.of("offload", "--data-dir", root.toString(), "--store", store, "--keep-local-segments", "1");
        assertThat(off.exitCode()).as(off.out() + off.err()).isZero();
        return root;
    }

    private RootAndStore where(Path root) throws IOException {
        return RootAndStore.of(null, root, store, null, System.getenv());
    }

    private static boolean locked(Path root, boolean daemon) throws IOException {
        try (RootLock lock = daemon ? RootLock.acquireForDaemon(root) : RootLock.acquire(root)) {
            return false;
        } catch (RootLock.HeldException held) {
            return true;
        }
    }

    @Test
    void eachAccessHoldsTheRootWhileItWorksAndReleasesItAfter() throws Exception {
        Path root = offloadedRoot("a");
        PrintWriter err = new PrintWriter(new StringWriter());
        for (RepairSession.Access access : RepairSession.Access.values()) {
            boolean[] held = new boolean[2];
            RepairSession.run(where(root), access, RepairSession.Findings.IN_MEMORY, err, session -> {
                assertThat(session.hasStore()).isTrue();
                assertThat(session.store().listPage("", null, 1).entries()).as(access + ": the store is open").isNotEmpty();
                held[0] = locked(root, false);
                held[1] = locked(root, true);
                return null;
            });
            assertThat(held[0]).as(access + ": the root's lock is held while the work runs").isTrue();
            assertThat(held[1]).as(access + ": no daemon may start meanwhile only where the node is given up")
                    .isEqualTo(access == RepairSession.Access.GIVE_UP);
            assertThat(locked(root, false)).as(access + ": released after").isFalse();
        }
        boolean[] held = new boolean[1];
        RepairSession.runWithoutStore(root, err, session -> {
            assertThat(session.hasStore()).isFalse();
            held[0] = locked(root, true);
            return null;
        });
        assertThat(held[0]).isTrue();
    }

    @Test
    void failuresComeOutTyped() throws Exception {
        Path root = offloadedRoot("a");
        PrintWriter err = new PrintWriter(new StringWriter());
        AtomicBoolean ran = new AtomicBoolean();
        try (RootLock lock = RootLock.acquire(root)) {
            assertThatThrownBy(() -> RepairSession.run(where(root), RepairSession.Access.READ,
                    RepairSession.Findings.IN_MEMORY, err, session -> ran.getAndSet(true)))
                    .isInstanceOf(RootLock.HeldException.class);
        }
        assertThat(ran).as("no work without the lock").isFalse();
        StoreRejectedException refused = new StoreRejectedException("list failed: no", null, null, null);
        assertThatThrownBy(() -> RepairSession.run(where(root), RepairSession.Access.READ,
                RepairSession.Findings.IN_MEMORY, err, session -> {
                    throw refused;
                })).isInstanceOf(IOException.class).hasMessage("store: list failed: no").hasCause(refused);
        assertThat(locked(root, false)).as("released after a failure").isFalse();
    }

    @Test
    void theClaimIsCheckedForTheAccess() throws Exception {
        Path a = offloadedRoot("a");
        Path b = ReidentifyCommandTest.copyRoot(a, tmp.resolve("b"));
        // a writes on after the copy: b is the stopped copy, which a reader is warned of and a writer refused for
        assertThat(CliRun.of("generate", "--data-dir", a.toString(), "--streams", "1", "--records", "400",
                "--payload-bytes", "100", "--segment-bytes", "8192", "--seed", "5").exitCode()).isZero();
        assertThat(CliRun.of("offload", "--data-dir", a.toString(), "--store", store).exitCode()).isZero();

        StringWriter warnings = new StringWriter();
        RepairSession.run(where(b), RepairSession.Access.READ, RepairSession.Findings.IN_MEMORY,
                new PrintWriter(warnings, true), session -> null);
        assertThat(warnings.toString()).startsWith("felix-offload: warning: ");

        assertThatThrownBy(() -> RepairSession.run(where(b), RepairSession.Access.WRITE,
                RepairSession.Findings.IN_MEMORY, new PrintWriter(new StringWriter()), session -> null))
                .isInstanceOf(NodeClaimCheck.RefusedException.class)
                .extracting(e -> ((NodeClaimCheck.RefusedException) e).refusal())
                .isEqualTo(NodeClaimCheck.Refusal.COPIED_ROOT);

        // a new root under the same node id: another root's claim refuses a local writer, unless it may take over
        Path c = Files.createDirectories(tmp.resolve("c"));
        Files.copy(a.resolve("node-id"), c.resolve("node-id"));
        assertThatThrownBy(() -> RepairSession.run(where(c), RepairSession.Access.LOCAL_WRITE,
                RepairSession.Findings.KEPT_IN_ROOT, new PrintWriter(new StringWriter()), session -> null))
                .isInstanceOf(NodeClaimCheck.RefusedException.class);
        boolean awaits = RepairSession.run(where(c), RepairSession.Access.LOCAL_WRITE_TAKING_OVER,
                RepairSession.Findings.KEPT_IN_ROOT, new PrintWriter(new StringWriter()), RepairSession::awaitsTakeOver);
        assertThat(awaits).as("the take-over waits until the command knows it writes").isTrue();
    }
}
