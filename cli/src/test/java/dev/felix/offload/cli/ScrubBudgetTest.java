package dev.felix.offload.cli;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.scrub.Scrub;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ForwardingObjectStore;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scrub checks entries several at a time with the report of one at a time, and a run with a request
 * budget stops where it runs out, says what share it covered, and the next run goes on from there,
 * so that runs in turn check every entry.
 */
class ScrubBudgetTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path storeDir;
    private List<ManifestEntry> entries;

    private void offloaded() throws Exception {
        root = tmp.resolve("root");
        CliRun gen = CliRun.of("generate", "--data-dir", root.toString(), "--streams", "2", "--shards-per-stream", "2",
                "--records", "1200", "--payload-bytes", "100", "--segment-bytes", "16384");
        assertThat(gen.exitCode()).as(gen.err()).isZero();
        storeDir = Files.createDirectories(tmp.resolve("store"));
        CliRun offload = CliRun.of("offload", "--data-dir", root.toString(), "--store", storeDir.toUri().toString());
        assertThat(offload.exitCode()).as(offload.out() + offload.err()).isZero();
        entries = new ArrayList<>();
        for (DataRoot.Shard s : new DataRoot(root).streamShards()) {
            entries.addAll(ManifestStore.read(s.directory()).entries());
        }
        assertThat(entries).hasSizeGreaterThan(20);
    }

    /**
     * Counts HEADs and GETs of segment objects (the node claim's aside); their HEADs wait (30 s at
     * most) until {@code together} are under way at once.
     */
    static final class Counting extends ForwardingObjectStore {
        final Map<String, AtomicInteger> heads = new ConcurrentHashMap<>();
        final AtomicLong requests = new AtomicLong();
        final AtomicInteger under = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();
        volatile CountDownLatch together = new CountDownLatch(0);

        Counting(FilesystemStore fs) {
            super(fs);
        }

        @Override
        public ObjectHead head(String key) throws StoreException {
            if (!key.endsWith(".segment")) {
                return super.head(key);
            }
            requests.incrementAndGet();
            heads.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            most.accumulateAndGet(under.incrementAndGet(), Math::max);
            try {
                together.countDown();
                together.await(30, TimeUnit.SECONDS);
                return super.head(key);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } finally {
                under.decrementAndGet();
            }
        }

        @Override
        public byte[] readRange(String key, ByteRange range) throws StoreException {
            if (key.endsWith(".segment")) {
                requests.incrementAndGet();
            }
            return super.readRange(key, range);
        }
    }

    private Scrub.Report scrub(Counting store, int concurrency, long budget, Optional<Scrub.Cursor> start) throws Exception {
        return new Scrub(new DataRoot(root), store, Map.of(), 0, Clock.systemUTC(), Scrub.Share.NONE,
                new Scrub.Limits(concurrency, budget, start)).run(StopSignal.never(), null);
    }

    /**
     * Damage at three entries (a flipped byte, a shorter object, a missing one): the report, its
     * anomalies and their order are the same one at a time and eight at a time, and eight at a time
     * has eight HEADs under way at once, never more.
     */
    @Test
    void checksRunSeveralAtATimeAndTheReportIsTheSameAsOneAtATime() throws Exception {
        offloaded();
        try (FilesystemStore fs = FilesystemStore.open(storeDir)) {
            byte[] bytes = fs.readAll(entries.get(3).objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
            bytes[bytes.length / 2] ^= 0x20;
            fs.delete(entries.get(3).objectKey());
            fs.put(entries.get(3).objectKey(), UploadBody.ofBytes(bytes), PutOptions.defaults());
            byte[] shorter = fs.readAll(entries.get(9).objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
            fs.delete(entries.get(9).objectKey());
            fs.put(entries.get(9).objectKey(), UploadBody.ofBytes(java.util.Arrays.copyOf(shorter, shorter.length - 1)),
                    PutOptions.defaults());
            fs.delete(entries.get(17).objectKey());

            Counting one = new Counting(fs);
            Scrub.Report alone = scrub(one, 1, 0, Optional.empty());
            Counting eight = new Counting(fs);
            eight.together = new CountDownLatch(8);
            Scrub.Report together = scrub(eight, 8, 0, Optional.empty());

            assertThat(one.most.get()).isEqualTo(1);
            assertThat(eight.most.get()).as("HEADs under way at once").isEqualTo(8);
            assertThat(alone.anomalies()).extracting(Scrub.Anomaly::kind).containsExactlyInAnyOrder(
                    Scrub.Kind.CRC_MISMATCH, Scrub.Kind.SIZE_MISMATCH, Scrub.Kind.MISSING);
            assertThat(together.anomalies()).isEqualTo(alone.anomalies());
            assertThat(together.checkedBy()).isEqualTo(alone.checkedBy());
            assertThat(together.entriesChecked()).isEqualTo(alone.entriesChecked()).isEqualTo(entries.size());
            assertThat(together.requests()).isEqualTo(alone.requests()).isEqualTo(one.requests.get());
            assertThat(together.orphansListed()).isTrue();
            assertThat(together.covered()).isEqualTo(1.0);
        }
    }

    /**
     * A budget of 21 requests (an entry costs a HEAD and a GET here, as the filesystem store's kept
     * checksum is never taken for the bytes): each run checks ten entries, says so and where the next
     * starts; runs from there check every entry, the last of them going round to the first entries
     * again, and that run, which reached the last entry, is the one that lists the orphans. A flipped
     * byte is found by the run that covers it.
     */
    @Test
    void runsWithABudgetGoOnWhereTheLastStoppedUntilEveryEntryIsChecked() throws Exception {
        offloaded();
        try (FilesystemStore fs = FilesystemStore.open(storeDir)) {
            ManifestEntry damaged = entries.get(entries.size() / 2);
            byte[] bytes = fs.readAll(damaged.objectKey(), Integer.MAX_VALUE, OptionalLong.empty());
            bytes[bytes.length / 3] ^= 0x01;
            fs.delete(damaged.objectKey());
            fs.put(damaged.objectKey(), UploadBody.ofBytes(bytes), PutOptions.defaults());

            Set<String> checked = new HashSet<>();
            int checks = 0;
            Optional<Scrub.Cursor> start = Optional.empty();
            int runs = 0;
            int found = 0;
            Scrub.Report r;
            do {
                Counting store = new Counting(fs);
                r = scrub(store, 4, 21, start);
                runs++;
                assertThat(r.requests()).as("requests of run %d", runs).isLessThanOrEqualTo(21).isEqualTo(store.requests.get());
                assertThat(r.entriesTotal()).isEqualTo(entries.size());
                assertThat(r.entriesChecked()).isEqualTo(10);
                assertThat(r.covered()).isEqualTo(10 / (double) entries.size());
                assertThat(store.heads.keySet()).hasSize(10);
                assertThat(store.heads.values()).allMatch(n -> n.get() == 1);
                checked.addAll(store.heads.keySet());
                checks += 10;
                found += (int) r.anomalies().stream().filter(a -> a.kind() == Scrub.Kind.CRC_MISMATCH
                        && a.key().orElseThrow().equals(damaged.objectKey())).count();
                Scrub.Cursor next = r.resumeAt().orElseThrow();
                assertThat(r.notes()).anyMatch(n -> n.contains("the request budget of 21 ran out after 10 of "
                        + entries.size() + " entries") && n.contains("--start-at " + next.text()));
                start = r.resumeAt();
            } while (!r.orphansListed() && runs < 20);
            assertThat(runs).as("runs until one reached the last entry").isEqualTo((entries.size() + 9) / 10);
            assertThat(checked).as("entries checked by those runs").hasSize(entries.size());
            assertThat(checks - entries.size()).as("entries the last run checked again, from the first").isLessThan(10);
            assertThat(found).as("runs that found the flipped byte").isEqualTo(1);

            // From a point in the middle with no budget: round to the first entry and up to that point.
            ManifestEntry middle = entries.get(entries.size() / 3);
            String shardOfMiddle = null;
            for (DataRoot.Shard s : new DataRoot(root).streamShards()) {
                if (ManifestStore.read(s.directory()).entries().contains(middle)) {
                    shardOfMiddle = s.name();
                }
            }
            Counting store = new Counting(fs);
            Scrub.Report round = scrub(store, 4, 0, Optional.of(new Scrub.Cursor(shardOfMiddle, middle.baseOffset())));
            assertThat(store.heads.keySet()).hasSize(entries.size());
            assertThat(round.entriesChecked()).isEqualTo(entries.size());
            assertThat(round.resumeAt()).isEmpty();
            assertThat(round.anomalies()).extracting(a -> a.key().orElseThrow()).containsExactly(damaged.objectKey());
        }
    }
}
