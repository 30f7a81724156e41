package dev.felix.offload.cli;

import dev.felix.offload.daemon.ShardSurvey;
import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.pass.StepHook;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code read}, {@code scrub} and the daemon's shard survey ({@code /shards}) run again and again
 * while offload passes unlink segments under them, on a root with shards at the top level and under
 * {@code groups/} and {@code dead-letters/}: a segment or index removed between listing and opening
 * is looked at again, never an I/O error or a problem.
 */
class ReadersBesideOffloadTest {

    private static final Map<String, String> ENV = Map.of(NodeId.ENV, "node-a");

    @TempDir
    Path tmp;

    @Test
    void readScrubAndSurveyInALoopBesidePassesThatUnlinkMeetNoErrors() throws Exception {
        Path root = tmp.resolve("root");
        for (String under : List.of("", "groups", "dead-letters")) {
            List<String> args = new java.util.ArrayList<>(List.of("generate", "--data-dir", root.toString(),
                    "--streams", "1", "--records", "4000", "--payload-bytes", "60", "--segment-bytes", "4096",
                    "--seed", String.valueOf(under.length() + 1)));
            if (!under.isEmpty()) {
                args.addAll(List.of("--under", under));
            }
            CliRun gen = CliRun.of(args.toArray(String[]::new));
            assertThat(gen.exitCode()).as(gen.out() + gen.err()).isZero();
        }
        DataRoot dataRoot = new DataRoot(root);
        List<DataRoot.Shard> shards = dataRoot.streamShards();
        assertThat(shards).extracting(DataRoot.Shard::name)
                .anyMatch(n -> n.startsWith("groups/")).anyMatch(n -> n.startsWith("dead-letters/"))
                .anyMatch(n -> !n.contains("/"));
        int segments;
        try (var files = Files.list(shards.get(0).directory())) {
            segments = (int) files.filter(f -> f.toString().endsWith(".log")).count();
        }
        assertThat(segments).isGreaterThan(25);
        Path storeDir = Files.createDirectories(tmp.resolve("store"));
        // one pass first, so the node id exists and reads have copies to go to
        try (FilesystemStore store = FilesystemStore.open(storeDir)) {
            new OffloadPass(dataRoot, store, OffloadSettings.defaults(), StepHook.none(), ENV,
                    dir -> OptionalLong.empty()).run(ProgressListener.none());
        }

        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger unlinked = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        Thread passes = new Thread(() -> {
            try (FilesystemStore store = FilesystemStore.open(storeDir)) {
                for (int keep = segments - 1; keep >= 1 && !stop.get(); keep--) {
                    OffloadSettings settings = OffloadSettings.defaults()
                            .withLocalRetention(new LocalRetention.KeepSegments(keep)).withUnlinkSettle(java.time.Duration.ofMillis(300));
                    try {
                        unlinked.addAndGet(new OffloadPass(dataRoot, store, settings, StepHook.none(), ENV,
                                dir -> OptionalLong.empty()).run(ProgressListener.none()).segmentsUnlinked());
                    } catch (RootLock.HeldException scrubListing) {
                        // the scrub holds the root while it lists orphans, as a daemon's passes wait for each other
                        keep++;
                        Thread.sleep(5);
                    }
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        }, "offload-passes");
        passes.start();
        int runs = 0;
        try (FilesystemStore store = FilesystemStore.open(storeDir)) {
            while (passes.isAlive() || runs < 3) {
                for (DataRoot.Shard s : shards) {
                    CliRun read = CliRun.of("read", "--data-dir", root.toString(), "--store",
                            storeDir.toUri().toString(), "--shard", s.name(), "--from", String.valueOf(runs * 37L % 3000),
                            "--max-records", "200");
                    assertThat(read.err()).as("run %d %s", runs, s.name()).doesNotContain("I/O error");
                    assertThat(read.exitCode()).as("run %d %s: %s", runs, s.name(), read.err()).isZero();
                    assertThat(read.out().lines().count()).as("run %d %s", runs, s.name()).isEqualTo(200);
                }
                List<ShardSurvey.ShardStatus> survey = ShardSurvey.of(dataRoot);
                assertThat(survey).hasSize(shards.size());
                assertThat(survey).allSatisfy(st -> assertThat(st.problem()).as(st.shard()).isNull());
                Scrub.Report scrub = new Scrub(dataRoot, store, ENV, 0, Clock.systemUTC(), Scrub.Share.ALL)
                        .run(StopSignal.never(), null);
                assertThat(scrub.anomalies()).filteredOn(a -> a.kind() != Scrub.Kind.ORPHAN)
                        .as("run %d", runs).isEmpty();
                runs++;
            }
        } finally {
            stop.set(true);
            passes.join(60_000);
        }
        assertThat(failures).isEmpty();
        assertThat(unlinked.get()).as("the passes unlinked segments meanwhile").isGreaterThan(3 * 15);
        System.out.printf("read, survey and scrub ran %d times beside passes that unlinked %d segments; "
                + "the survey saw %d files vanish%n", runs, unlinked.get(), ShardSurvey.vanished());
    }
}
