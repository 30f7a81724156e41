package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code fsck} run again and again while offload passes unlink segments under it: a segment or index
 * removed between fsck's listing and its opening is skipped and counted, never an I/O error.
 */
class FsckBesideOffloadTest {

    @TempDir
    Path tmp;

    @Test
    void fsckInALoopBesidePassesThatUnlinkNeverMeetsAnIoError() throws Exception {
        Path root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "3", "--records", "6000",
                "--payload-bytes", "60", "--segment-bytes", "4096");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        int segments;
        try (var files = Files.list(root.resolve(new DataRoot(root).streamShards().get(0).name()))) {
            segments = (int) files.filter(f -> f.toString().endsWith(".log")).count();
        }
        assertThat(segments).isGreaterThan(40);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger unlinked = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        Thread passes = new Thread(() -> {
            try (FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
                // Each pass lets one more segment of every shard go, oldest first, as a live daemon's would.
                for (int keep = segments - 1; keep >= 1 && !stop.get(); keep--) {
                    OffloadSettings settings = OffloadSettings.defaults()
                            .withLocalRetention(new LocalRetention.KeepSegments(keep)).withUnlinkSettle(java.time.Duration.ofMillis(300));
                    unlinked.addAndGet(new OffloadPass(new DataRoot(root), store, settings, StepHook.none(),
                            Map.of(NodeId.ENV, "node-a"), dir -> OptionalLong.empty()).run(ProgressListener.none())
                            .segmentsUnlinked());
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        }, "offload-passes");
        passes.start();
        int runs = 0;
        int vanished = 0;
        try {
            while (passes.isAlive() || runs < 3) {
                CliRun fsck = CliRun.of("fsck", "--data-dir", root.toString());
                assertThat(fsck.err()).as("run %d", runs).doesNotContain("I/O error");
                assertThat(fsck.exitCode()).as("run %d: %s%s", runs, fsck.out(), fsck.err()).isZero();
                assertThat(fsck.out()).contains("3 shards: 3 ok");
                if (fsck.out().contains("removed while fsck read them")) {
                    vanished++;
                }
                runs++;
            }
        } finally {
            stop.set(true);
            passes.join(60_000);
        }
        assertThat(failures).isEmpty();
        assertThat(unlinked.get()).as("the passes unlinked segments meanwhile").isGreaterThan(3 * 20);
        assertThat(runs).isGreaterThanOrEqualTo(3);
        System.out.printf("fsck ran %d times beside passes that unlinked %d segments; %d runs saw files vanish%n",
                runs, unlinked.get(), vanished);
    }
}
