package dev.felix.offload.daemon;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.schedule.PassOutcome;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectListing;
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
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A daemon's offload run starts and finishes while a retention pass is still under way: retention
 * hands the root over between shards, takes the claim and the node's lease anew afterwards (so the
 * lease the offload run advanced meanwhile is no "copied root"), and an offload that records new
 * segments in a shard retention has just expired entries of loses none of them, nor brings an
 * expired one back.
 */
class RetentionBesideOffloadTest {

    private static final ShardLogConfig SMALL = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024)
            .withIndexSpacingBytes(1024).withFsyncPolicy(FsyncPolicy.none());
    /** How long the store holds a retention delete back waiting for the test: a failing test ends by then. */
    private static final long WAIT_SECONDS = 30;

    @TempDir
    Path tmp;

    /**
     * Holds retention's deletes back: those in the first shard until the test has asked for an offload
     * run and that run waits for the root, those in the second until that run has finished (or
     * {@value #WAIT_SECONDS} s went by).
     */
    private static final class RetentionHeldBack extends ForwardingObjectStore {
        final String first;
        final String second;
        final CountDownLatch inFirst = new CountDownLatch(1);
        final CountDownLatch offloadAsked = new CountDownLatch(1);
        final CountDownLatch offloadDone = new CountDownLatch(1);
        volatile Daemon daemon;

        RetentionHeldBack(ObjectStore store, String first, String second) {
            super(store);
            this.first = first;
            this.second = second;
        }

        @Override
        public void deleteAll(Collection<String> keys) throws StoreException {
            holdBack(keys);
            super.deleteAll(keys);
        }

        @Override
        public void delete(String key) throws StoreException {
            holdBack(List.of(key));
            super.delete(key);
        }

        private void holdBack(Collection<String> keys) {
            try {
                if (keys.stream().anyMatch(k -> k.contains("/" + first + "/"))) {
                    inFirst.countDown();
                    offloadAsked.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    // until the run waits for the root: retention looks for a waiting pass after this shard
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
                    while (!daemon.rootWanted() && System.nanoTime() < deadline) {
                        Thread.sleep(5);
                    }
                } else if (keys.stream().anyMatch(k -> k.contains("/" + second + "/"))) {
                    offloadDone.await(WAIT_SECONDS, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Appends {@code records} records stamped {@code timestampMicros} to the shard in {@code dir}. */
    private static void append(Path dir, int records, long timestampMicros, long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        try (ShardLog log = ShardLog.open(dir, SMALL)) {
            for (int i = 0; i < records; i++) {
                byte[] payload = new byte[200 + random.nextInt(200)];
                random.nextBytes(payload);
                log.append(timestampMicros, payload);
            }
        }
    }

    private static long runs(Daemon daemon, String pass) {
        return daemon.passStates().stream().filter(s -> s.pass().equals(pass)).mapToLong(Daemon.PassState::runs)
                .sum();
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static List<String> keysUnder(ObjectStore store, String shard) throws StoreException {
        List<String> out = new ArrayList<>();
        ObjectListing listing = store.list("node-1/" + shard + "/");
        while (listing.hasNext()) {
            out.add(listing.next().key());
        }
        return out;
    }

    @Test
    void anOffloadRunStartsAndFinishesWhileRetentionIsMidPass() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        String first = new ShardKey("acme", "default", "orders", 0).directoryName();
        String second = new ShardKey("acme", "default", "orders", 1).directoryName();
        // records of 1970: past retention.ms as soon as they are offloaded
        append(root.resolve(first), 200, 1000L, 1);
        append(root.resolve(second), 200, 1000L, 2);
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", Files.createDirectories(tmp.resolve("store")).toUri().toString());
        values.put("node-id", "node-1");
        values.put("http.port", "0");
        values.put("offload.schedule", "0 0 1 1 *"); // runs only when asked, in this test
        values.put("retention.schedule", "0 0 1 1 *");
        values.put("scrub.schedule", "off");
        values.put("offload.unlink-settle", "0s");
        values.put("retention.ms", "1d");
        FilesystemStore fs = FilesystemStore.open(tmp.resolve("store"));
        RetentionHeldBack store = new RetentionHeldBack(fs, first, second);
        Daemon daemon = new Daemon(DaemonConfig.of(tmp.resolve("felix.yaml"), values), store, Map.of(),
                PassClock.system(ZoneOffset.UTC));
        store.daemon = daemon;
        try {
            daemon.start();
            // the offload run uploads both shards and asks for a retention run, which expires them
            assertThat(daemon.requestRun(PassNames.OFFLOAD)).isTrue();
            assertThat(store.inFirst.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("retention deleting in " + first).isTrue();
            assertThat(runs(daemon, PassNames.RETENTION)).isZero();

            // New records now, in the shard retention is deleting in and in a new one: an offload run has work.
            long now = System.currentTimeMillis() * 1000;
            append(root.resolve(first), 200, now, 3);
            String third = new ShardKey("acme", "default", "audit", 0).directoryName();
            append(root.resolve(third), 200, now, 4);
            assertThat(daemon.requestRun(PassNames.OFFLOAD)).isTrue();
            store.offloadAsked.countDown();

            await(() -> runs(daemon, PassNames.OFFLOAD) >= 2);
            long offloadRuns = runs(daemon, PassNames.OFFLOAD);
            long retentionRuns = runs(daemon, PassNames.RETENTION);
            store.offloadDone.countDown();
            assertThat(offloadRuns).as("offload runs finished while the retention pass was held in " + second)
                    .isEqualTo(2);
            assertThat(retentionRuns).as("retention runs finished by then").isZero();

            await(() -> runs(daemon, PassNames.RETENTION) >= 1 && !daemon.passStates().stream()
                    .anyMatch(s -> s.running()));
            assertThat(daemon.refused()).as("no pass took the other's lease for another copy's").isEmpty();
            PassOutcome retention = daemon.passStates().stream().filter(s -> s.pass().equals(PassNames.RETENTION))
                    .findFirst().orElseThrow().outcome().orElseThrow();
            assertThat(retention.succeeded()).as(String.valueOf(retention)).isTrue();
            assertThat(daemon.passStates().stream().filter(s -> s.pass().equals(PassNames.RETENTION)).findFirst()
                    .orElseThrow().result().orElseThrow().problems()).isEmpty();

            // The second shard's expired copies went, through a lease taken after the offload run's.
            assertThat(ManifestStore.read(root.resolve(second)).entries()).isEmpty();
            assertThat(keysUnder(fs, second)).isEmpty();
            // The first shard holds the new records' copies, each object it names there, and no copy expired.
            List<ManifestEntry> entries = ManifestStore.read(root.resolve(first)).entries();
            assertThat(entries).isNotEmpty();
            assertThat(entries).allMatch(e -> e.newestTimestampMicros() >= now, "holding new records");
            assertThat(keysUnder(fs, first)).containsAll(entries.stream().map(ManifestEntry::objectKey).toList());
            assertThat(ManifestStore.read(root.resolve(third)).entries()).isNotEmpty();
        } finally {
            store.offloadAsked.countDown();
            store.offloadDone.countDown();
            daemon.stop(Duration.ofSeconds(20));
            fs.close();
        }
    }
}
