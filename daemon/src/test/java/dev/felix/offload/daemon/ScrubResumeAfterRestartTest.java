package dev.felix.offload.daemon;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.scrub.ScrubProgressFile;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A scheduled scrub whose request budget ran out is gone on with by the next run even across a
 * restart of the daemon: the resume point is kept in the data root, not in the process.
 */
class ScrubResumeAfterRestartTest {

    private static final ShardLogConfig SMALL = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
            .withIndexSpacingBytes(1024).withFsyncPolicy(FsyncPolicy.none());

    @TempDir
    Path tmp;

    /** Which keys were HEADed, in order. */
    private static final class HeadsSeen extends ForwardingObjectStore {
        final List<String> heads = Collections.synchronizedList(new ArrayList<>());

        HeadsSeen(ObjectStore store) {
            super(store);
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            heads.add(key);
            return super.head(key);
        }
    }

    private static long runs(Daemon daemon, String pass) {
        return daemon.passStates().stream().filter(s -> s.pass().equals(pass)).mapToLong(Daemon.PassState::runs).sum();
    }

    private static void awaitRuns(Daemon daemon, String pass, long count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while ((runs(daemon, pass) < count || daemon.passStates().stream().anyMatch(Daemon.PassState::running))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(runs(daemon, pass)).as(pass + " runs").isGreaterThanOrEqualTo(count);
    }

    private Daemon daemon(Map<String, String> values, ObjectStore store) throws Exception {
        return new Daemon(DaemonConfig.of(tmp.resolve("felix.yaml"), values), store, Map.of(),
                PassClock.system(ZoneOffset.UTC));
    }

    @Test
    void aRestartedDaemonsScrubGoesOnWhereTheBudgetRanOut() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        List<String> shards = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            String shard = new ShardKey("acme", "default", "orders", p).directoryName();
            shards.add(shard);
            try (ShardLog log = ShardLog.open(root.resolve(shard), SMALL)) {
                for (int i = 0; i < 200; i++) {
                    log.append(System.currentTimeMillis() * 1000, new byte[300]);
                }
            }
        }
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", Files.createDirectories(tmp.resolve("store")).toUri().toString());
        values.put("node-id", "node-1");
        values.put("http.port", "0");
        values.put("offload.schedule", "0 0 1 1 *"); // only when asked
        values.put("retention.schedule", "off");
        values.put("scrub.schedule", "0 0 1 1 *");
        values.put("scrub.request-budget", "3");
        values.put("scrub.concurrency", "1");

        FilesystemStore fs = FilesystemStore.open(tmp.resolve("store"));
        try {
            HeadsSeen first = new HeadsSeen(fs);
            Daemon before = daemon(values, first);
            Path progress = root.resolve(ScrubProgressFile.FILE_NAME);
            try {
                before.start();
                assertThat(before.requestRun(PassNames.OFFLOAD)).isTrue();
                awaitRuns(before, PassNames.OFFLOAD, 1);
                first.heads.clear();
                assertThat(before.requestRun(PassNames.SCRUB)).isTrue();
                awaitRuns(before, PassNames.SCRUB, 1);
            } finally {
                before.stop(Duration.ofSeconds(20));
            }
            List<String> checkedBefore = List.copyOf(first.heads);
            assertThat(checkedBefore).as("entries the first run checked within its budget").isNotEmpty().hasSizeLessThanOrEqualTo(3);
            assertThat(progress).as("the resume point, kept in the root").isRegularFile();
            assertThat(Files.readString(progress)).contains("resume-at=");

            HeadsSeen second = new HeadsSeen(fs);
            Daemon after = daemon(values, second);
            try {
                after.start();
                assertThat(after.requestRun(PassNames.SCRUB)).isTrue();
                awaitRuns(after, PassNames.SCRUB, 1);
            } finally {
                after.stop(Duration.ofSeconds(20));
            }
            assertThat(second.heads).as("entries the run after the restart checked").isNotEmpty();
            assertThat(second.heads).as("the run after the restart began after what the first one checked")
                    .doesNotContainAnyElementsOf(checkedBefore);
        } finally {
            fs.close();
        }
    }
}
