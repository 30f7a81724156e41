package dev.felix.offload.reliability;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.retention.OrphanSweep;
import dev.felix.offload.retention.OrphanSweepReport;
import dev.felix.offload.retention.OrphanSweepSettings;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.root.SegmentKeys;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A small data root for the fault tests: shard writers that append between passes, passes run by
 * the real process against the store as the process sees it (through a fault-injecting proxy,
 * say), and checks against the store as it really is.
 */
final class TestRoot implements AutoCloseable {

    static final Duration PROCESS_TIMEOUT = Duration.ofMinutes(3);

    final Path dir;
    final Path root;
    final List<ShardWriter> shards = new ArrayList<>();
    final StoreTarget processStore;
    final ObjectStore direct;
    final Invariants invariants;
    private final SplittableRandom random;

    /**
     * @param processStore the store as the offload process is given it
     * @param directStore  the same store as it really is, for checks
     */
    TestRoot(Path dir, int shardCount, StoreTarget processStore, StoreTarget directStore, long seed) throws Exception {
        this(dir, dir.resolve("data"), shardCount, processStore, directStore, seed);
    }

    /**
     * @param dir      where process output goes
     * @param dataRoot the data root (elsewhere than {@code dir} when its file system is to fill up)
     */
    TestRoot(Path dir, Path dataRoot, int shardCount, StoreTarget processStore, StoreTarget directStore, long seed)
            throws Exception {
        this.dir = Files.createDirectories(dir);
        this.root = Files.createDirectories(dataRoot);
        this.processStore = processStore;
        this.direct = directStore.open();
        this.random = new SplittableRandom(seed);
        for (int s = 0; s < shardCount; s++) {
            shards.add(new ShardWriter(root, new ShardKey("acme", "faults", "stream-" + s, 0), 12 * 1024, 400,
                    random.nextLong()));
        }
        this.invariants = new Invariants(root, shards, direct);
    }

    /** Appends at least {@code perShard} records to every shard, as the broker would between passes. */
    void append(int perShard) throws Exception {
        for (ShardWriter w : shards) {
            w.open();
            w.append(perShard);
            w.close();
        }
    }

    List<String> offloadArgs(String... extra) {
        List<String> args = new ArrayList<>(List.of("offload", "--data-dir", root.toString(), "--store",
                processStore.uri(), "--json", "--keep-local-segments", "2"));
        args.addAll(List.of(extra));
        return args;
    }

    Felix.Running startPass(String... extra) throws IOException {
        return Felix.start(dir, processStore.env(), List.of(), true, offloadArgs(extra));
    }

    /** One pass by the real process, to its end. */
    Felix.Result pass(String... extra) throws IOException, InterruptedException {
        try (Felix.Running p = startPass(extra)) {
            return p.await(PROCESS_TIMEOUT, "offload pass");
        }
    }

    /**
     * One pass of the same command inside this JVM ({@link Felix#inside}), to its end: for a pass whose store,
     * not whose process, is what is looked at. Never beside another pass over this root.
     */
    Felix.Result passInside(String... extra) throws IOException, InterruptedException {
        return Felix.inside(dir, processStore.env(), PROCESS_TIMEOUT, offloadArgs(extra).toArray(String[]::new));
    }

    /** Waits until the process's pass holds the root lock; false if it ended first. */
    boolean awaitLock(Felix.Running p) throws InterruptedException {
        long limit = System.nanoTime() + PROCESS_TIMEOUT.toNanos();
        while (p.process.isAlive() && System.nanoTime() < limit) {
            try {
                String pid = Files.readString(root.resolve(RootLock.FILE_NAME), StandardCharsets.US_ASCII).trim();
                if (pid.equals(Long.toString(p.process.pid()))) {
                    return true;
                }
            } catch (IOException e) {
                // not there yet
            }
            Thread.sleep(2);
        }
        return false;
    }

    Invariants.Seen check(String when) throws IOException, StoreException {
        return invariants.check(when);
    }

    /** The orphan sweep with no grace period, under the root lock; then nothing unnamed may remain. */
    OrphanSweepReport sweep(String when) throws IOException, StoreException {
        String node = Invariants.nodeId(root).orElseThrow();
        OrphanSweepReport report;
        try (RootLock lock = RootLock.acquire(root)) {
            report = new OrphanSweep(new DataRoot(root), direct, new SegmentKeys("", node), Clock.systemUTC(),
                    OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none()).run(StopSignal.never());
        }
        if (!report.problems().isEmpty()) {
            throw new AssertionError(when + ": the orphan sweep reported problems: " + report.problems());
        }
        List<String> unnamed = Invariants.unnamed(root, shards, direct);
        if (!unnamed.isEmpty()) {
            throw new AssertionError(when + ": unnamed objects remain after the sweep: " + unnamed);
        }
        return report;
    }

    @Override
    public void close() throws Exception {
        for (ShardWriter w : shards) {
            w.close();
        }
        direct.close();
    }
}
