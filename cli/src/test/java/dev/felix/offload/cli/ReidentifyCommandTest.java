package dev.felix.offload.cli;

import dev.felix.offload.root.FormerNodeIds;
import dev.felix.offload.root.NodeLease;
import dev.felix.offload.root.RootLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class ReidentifyCommandTest {

    @TempDir
    Path tmp;

    private Path offloadedRoot(String store) throws Exception {
        Path root = tmp.resolve("a");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "1", "--records", "400",
                "--payload-bytes", "100", "--segment-bytes", "8192");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        CliRun off = CliRun.of("offload", "--data-dir", root.toString(), "--store", store, "--keep-local-segments", "1");
        assertThat(off.exitCode()).as(off.out() + off.err()).isZero();
        return root;
    }

    private Path copy(Path from, String name) throws Exception {
        return copyRoot(from, tmp.resolve(name));
    }

    /** A copy of a data root as a cloned volume would hold it, without its lock files. */
    static Path copyRoot(Path from, Path to) throws Exception {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else if (!f.getFileName().toString().endsWith(".lock")) {
                    Files.copy(f, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return to;
    }

    @Test
    void theStoppedCopyGetsItsOwnIdentityAndTheHolderIsRefused() throws Exception {
        String store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        Path a = offloadedRoot(store);
        Path b = copy(a, "b");
        String node = Files.readString(a.resolve("node-id")).trim();
        String rootId = Files.readString(a.resolve("offload-root-id")).trim();
        // a's broker writes on, and a offloads it: a wrote last
        assertThat(CliRun.of("generate", "--data-dir", a.toString(), "--streams", "1", "--records", "400",
                "--payload-bytes", "100", "--segment-bytes", "8192", "--seed", "5").exitCode()).isZero();
        assertThat(CliRun.of("offload", "--data-dir", a.toString(), "--store", store).exitCode()).isZero();

        // a wrote last: it keeps the node, and is told to reidentify the other copy instead
        CliRun holder = CliRun.of("reidentify", "--data-dir", a.toString(), "--store", store);
        assertThat(holder.exitCode()).isEqualTo(2);
        assertThat(holder.err()).contains("this root holds the lease of node '" + node + "'").contains("other copy");
        assertThat(Files.readString(a.resolve("node-id")).trim()).isEqualTo(node);

        assertThat(CliRun.of("generate", "--data-dir", b.toString(), "--streams", "1", "--records", "400",
                "--payload-bytes", "100", "--segment-bytes", "8192", "--seed", "6").exitCode()).isZero();
        CliRun stopped = CliRun.of("offload", "--data-dir", b.toString(), "--store", store);
        assertThat(stopped.exitCode()).as(stopped.err()).isEqualTo(2);
        CliRun reid = CliRun.of("reidentify", "--data-dir", b.toString(), "--store", store, "--new-node-id", "broker-b");
        assertThat(reid.exitCode()).as(reid.out() + reid.err()).isZero();
        assertThat(reid.out()).contains("node id " + node + " -> broker-b").contains(rootId + " -> ");
        assertThat(Files.readString(b.resolve("node-id")).trim()).isEqualTo("broker-b");
        assertThat(Files.readString(b.resolve("offload-root-id")).trim()).isNotEqualTo(rootId).matches("[0-9a-f]{32}");
        assertThat(FormerNodeIds.read(new dev.felix.offload.log.DataRoot(b))).containsExactly(node);
        assertThat(b.resolve(NodeLease.FILE_NAME)).doesNotExist();

        CliRun own = CliRun.of("offload", "--data-dir", b.toString(), "--store", store);
        assertThat(own.exitCode()).as(own.out() + own.err()).isZero();
        assertThat(CliRun.of("offload", "--data-dir", a.toString(), "--store", store).exitCode()).isZero();
        assertThat(Files.exists(tmp.resolve("store").resolve("broker-b").resolve("node.claim"))).isTrue();

        // b's history from before still names a's node; migrate gives it copies of its own
        CliRun list = CliRun.of("legacy-keys", "list", "--data-dir", b.toString(), "--store", store);
        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.out()).contains("named former-node-key").contains("key=" + node + "/");
        CliRun migrate = CliRun.of("legacy-keys", "migrate", "--data-dir", b.toString(), "--store", store);
        assertThat(migrate.exitCode()).as(migrate.out() + migrate.err()).isZero();
        assertThat(migrate.out()).contains(" -> broker-b/");
        try (Stream<Path> dirs = Files.list(b)) {
            for (Path d : dirs.filter(Files::isDirectory).filter(d -> !d.getFileName().toString().startsWith("."))
                    .toList()) {
                assertThat(dev.felix.offload.manifest.ManifestStore.read(d).entries())
                        .allMatch(e -> e.objectKey().startsWith("broker-b/"));
            }
        }
        assertThat(CliRun.of("legacy-keys", "list", "--data-dir", b.toString(), "--store", store).out())
                .contains("0 entries name keys outside their shard's own prefix");
    }

    @Test
    void refusedWhileAPassHoldsTheRootAndWithoutANodeId() throws Exception {
        String store = Files.createDirectories(tmp.resolve("store")).toUri().toString();
        Path a = offloadedRoot(store);
        try (RootLock lock = RootLock.acquire(a)) {
            CliRun held = CliRun.of("reidentify", "--data-dir", a.toString());
            assertThat(held.exitCode()).isEqualTo(2);
            assertThat(held.err()).contains("stop it first");
        }
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        CliRun none = CliRun.of("reidentify", "--data-dir", empty.toString());
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.err()).contains("no node-id file");
        // without the store only the root changes
        CliRun local = CliRun.of("reidentify", "--data-dir", a.toString());
        assertThat(local.exitCode()).as(local.err()).isZero();
    }
}
