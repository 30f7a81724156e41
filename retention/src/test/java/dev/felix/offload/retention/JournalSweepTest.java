package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.root.PendingKeys;
import dev.felix.offload.root.SegmentKeys;
import dev.felix.offload.store.ObjectListing;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sweep working from the journal of pending writes: a quiet pass lists nothing, an interrupted
 * upload is still found, the full listing keeps its cadence and takes over when the journal is lost,
 * and retention's listing holds no lock an offload pass needs.
 */
class JournalSweepTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path shard;
    private FilesystemStore real;
    private Counting counting;
    private ManualClock clock;
    private final SegmentKeys keys = new SegmentKeys("", TestData.NODE);
    private static final long HELD = 100;
    private static final OrphanSweepSettings DAILY = OrphanSweepSettings.defaults()
            .withFullSweepEvery(Duration.ofHours(24));

    /**
     * Counts the store's LIST pages and HEADs; a LIST may be held until released. Notes each put's key
     * and whether the root's journal held it when the put was sent.
     */
    static final class Counting {
        final AtomicInteger lists = new AtomicInteger();
        final AtomicInteger heads = new AtomicInteger();
        final java.util.Map<String, Boolean> journaledAtPut = new java.util.concurrent.ConcurrentHashMap<>();
        volatile Path journalRoot;
        volatile CountDownLatch listing;
        final CountDownLatch listStarted = new CountDownLatch(1);
        final ObjectStore store;

        Counting(ObjectStore real) {
            List<Class<?>> faces = new ArrayList<>(List.of(ObjectStore.class));
            if (real instanceof dev.felix.offload.store.IncompleteUploads) {
                faces.add(dev.felix.offload.store.IncompleteUploads.class);
            }
            ObjectStore[] self = new ObjectStore[1];
            self[0] = (ObjectStore) Proxy.newProxyInstance(getClass().getClassLoader(), faces.toArray(Class[]::new),
                    (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "list" -> {
                                return new ObjectListing(self[0], (String) args[0], 1000);
                            }
                            case "listPage" -> {
                                lists.incrementAndGet();
                                listStarted.countDown();
                                CountDownLatch hold = listing;
                                if (hold != null && !hold.await(60, TimeUnit.SECONDS)) {
                                    throw new IllegalStateException("the test never released the listing");
                                }
                            }
                            case "head" -> heads.incrementAndGet();
                            case "put" -> {
                                Path at = journalRoot;
                                if (at != null) {
                                    journaledAtPut.put((String) args[0], PendingKeys.read(at)
                                            .map(k -> k.contains((String) args[0])).orElse(false));
                                }
                            }
                            default -> {
                            }
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            this.store = self[0];
        }

        void reset() {
            lists.set(0);
            heads.set(0);
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        real = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        counting = new Counting(real);
        counting.journalRoot = root;
        shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 200, Duration.ofSeconds(1), 3);
        TestData.offload(root, counting.store);
        clock = new ManualClock(Instant.parse("2031-06-01T00:00:00Z"), ZoneOffset.UTC);
    }

    @AfterEach
    void tearDown() {
        real.close();
    }

    private OrphanSweepReport sweep(OrphanSweepSettings settings) throws Exception {
        return new OrphanSweep(new DataRoot(root), counting.store, keys, clock, settings, RetentionHook.none())
                .run(StopSignal.never());
    }

    private void put(String key) throws Exception {
        real.put(key, UploadBody.ofBytes(("bytes of " + key).getBytes(StandardCharsets.UTF_8)), PutOptions.defaults());
    }

    @Test
    void theOffloadPassJournalsEveryKeyBeforeItsPutAndAQuietPassClearsThemWithoutARequest() throws Exception {
        java.util.TreeSet<String> stored = TestData.keys(real, keys.nodePrefix());
        List<String> objects = stored.stream().filter(s -> s.endsWith(".segment") || s.endsWith(".index")).toList();
        assertThat(objects).isNotEmpty();
        for (String key : objects) {
            assertThat(counting.journaledAtPut).as("the journal held %s when its put was sent", key)
                    .containsEntry(key, true);
        }
        // they stay there after the pass: a broker's own rewrite of its manifest may still drop their entries
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).containsAll(objects));
        sweep(DAILY); // the first: no full sweep recorded yet, so it lists
        counting.reset();

        OrphanSweepReport quiet = sweep(DAILY);
        assertThat(quiet.found()).isEmpty();
        assertThat(quiet.sweep()).startsWith("journal");
        assertThat(counting.lists.get()).as("LIST requests of a quiet pass").isZero();
        assertThat(counting.heads.get()).as("HEAD requests of a quiet pass").isZero();
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).isEmpty());
    }

    @Test
    void anOrphanOfAnInterruptedUploadIsFoundAndDeletedByQuietPasses() throws Exception {
        sweep(DAILY);
        // what ShardOffload does before a crash between its put and its manifest entry
        String orphan = keys.segmentKey(shard.getFileName().toString(), HELD, 77);
        PendingKeys.add(root, orphan);
        put(orphan);
        // and an upload whose request never reached the store
        String neverSent = keys.segmentKey(shard.getFileName().toString(), HELD, 78);
        PendingKeys.add(root, neverSent);
        counting.reset();

        OrphanSweepReport first = sweep(DAILY);
        assertThat(first.found()).containsExactly(orphan);
        assertThat(first.waiting()).containsExactly(orphan);
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).containsExactly(orphan));

        clock.advance(OrphanSweepSettings.DEFAULT_GRACE);
        OrphanSweepReport due = sweep(DAILY);
        assertThat(due.deleted()).containsExactly(orphan);
        assertThat(real.list(orphan).hasNext()).isFalse();
        assertThat(counting.lists.get()).as("no LIST: the journal named the orphan").isZero();
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).isEmpty());
        TestData.assertEveryEntryHasItsObject(shard, real);
    }

    @Test
    void theFullListingKeepsItsCadence() throws Exception {
        String stray = keys.segmentKey(shard.getFileName().toString(), HELD, 90); // not journaled: a hand upload
        sweep(DAILY);
        put(stray);
        counting.reset();
        assertThat(sweep(DAILY).found()).as("between full sweeps the journal alone is checked").isEmpty();
        assertThat(counting.lists.get()).isZero();

        clock.advance(Duration.ofHours(24));
        OrphanSweepReport full = sweep(DAILY);
        assertThat(full.sweep()).startsWith("full listing");
        assertThat(counting.lists.get()).isPositive();
        assertThat(full.found()).containsExactly(stray);
        // now watched through the journal, so the quiet passes after it delete it once its grace is over
        clock.advance(OrphanSweepSettings.DEFAULT_GRACE);
        counting.reset();
        assertThat(sweep(DAILY).deleted()).containsExactly(stray);
        assertThat(counting.lists.get()).isZero();

        put(stray);
        assertThat(sweep(DAILY.withFullSweep(true)).found()).as("asked for").containsExactly(stray);
    }

    @Test
    void aLostOrDamagedJournalMeansAFullListing() throws Exception {
        sweep(DAILY);
        String stray = keys.segmentKey(shard.getFileName().toString(), HELD, 91);
        put(stray);
        Files.delete(PendingKeys.fileIn(root));
        counting.reset();
        OrphanSweepReport lost = sweep(DAILY);
        assertThat(lost.sweep()).contains("missing");
        assertThat(lost.found()).containsExactly(stray);
        assertThat(counting.lists.get()).isPositive();

        byte[] bytes = Files.readAllBytes(PendingKeys.fileIn(root));
        bytes[bytes.length - 1] ^= 0x55; // the last record's CRC
        Files.write(PendingKeys.fileIn(root), bytes);
        counting.reset();
        OrphanSweepReport damaged = sweep(DAILY);
        assertThat(damaged.sweep()).contains("damaged").contains(PendingKeys.fileIn(root).toString());
        assertThat(damaged.found()).containsExactly(stray);
        assertThat(counting.lists.get()).isPositive();
    }

    @Test
    void anOffloadPassRunsToTheEndWhileRetentionsFullListingIsHeld() throws Exception {
        TestData.write(shard, 400, Duration.ofSeconds(1), 4); // more sealed segments for the offload below
        counting.listing = new CountDownLatch(1);
        RetentionPass pass = new RetentionPass(new DataRoot(root), counting.store, RetentionRules.of(RetentionSettings.defaults()),
                RetentionPassSettings.defaults().withOrphanSweep(DAILY.withFullSweep(true)), clock, TestData.ENV,
                RetentionHook.none());
        java.util.concurrent.CompletableFuture<RetentionReport> retention =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return pass.run(StopSignal.never());
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
        assertThat(counting.listStarted.await(60, TimeUnit.SECONDS)).as("retention began its listing").isTrue();
        try {
            // the listing is held: an offload pass must take the root's lock and finish meanwhile
            dev.felix.offload.pass.PassReport offload = TestData.offload(root, real);
            assertThat(offload.complete()).isTrue();
            assertThat(offload.segmentsUploaded()).isPositive();
            assertThat(retention).isNotDone();
        } finally {
            counting.listing.countDown();
        }
        RetentionReport report = retention.get(60, TimeUnit.SECONDS);
        assertThat(report.orphanSweep()).hasValueSatisfying(o -> {
            assertThat(o.found()).as("the offload's new objects are named by now, never orphans").isEmpty();
            assertThat(o.deleted()).isEmpty();
        });
        TestData.assertEveryEntryHasItsObject(shard, real);
    }

    @Test
    void aKeyAnotherShardsManifestNamesIsNeverAnOrphanByJournalOrByListing() throws Exception {
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 5);
        String borrowed = keys.segmentKey(shard.getFileName().toString(), HELD, 80); // under orders' prefix
        PendingKeys.add(root, borrowed);
        put(borrowed);
        dev.felix.offload.manifest.ManifestEntry like = dev.felix.offload.manifest.ManifestStore.read(shard)
                .oldestEntry().orElseThrow();
        dev.felix.offload.manifest.ManifestStore payments = dev.felix.offload.manifest.ManifestStore.open(other);
        payments.save(payments.manifest().withEntry(new dev.felix.offload.manifest.ManifestEntry(999, 10_000_000,
                10_000_000, like.sizeBytes(), like.oldestTimestampMicros(), like.newestTimestampMicros(),
                like.objectCrc32(), borrowed)));
        OrphanSweepSettings now = DAILY.withGrace(Duration.ZERO);
        sweep(now.withFullSweep(true));
        OrphanSweepReport byJournal = sweep(now);
        assertThat(byJournal.sweep()).startsWith("journal");
        assertThat(byJournal.found()).isEmpty();
        OrphanSweepReport byListing = sweep(now.withFullSweep(true));
        assertThat(byListing.found()).isEmpty();
        assertThat(real.head(borrowed).size()).isPositive();
    }

    @Test
    void whatAFullListingKeepsIsNotWatchedAtEveryPassButWhatTheJournalNamedIs() throws Exception {
        String gone = keys.segmentKey("acme_default_gone_0-0123456789abcdef", 0, 0); // a shard the root lacks
        put(gone);
        String ownGone = keys.segmentKey("acme_default_gone_0-0123456789abcdef", 100, 1);
        PendingKeys.add(root, ownGone); // this node's own upload there, cut short
        put(ownGone);
        OrphanSweepReport full = sweep(DAILY.withFullSweep(true));
        assertThat(full.held()).extracting(HeldShard::shard).containsExactly("acme_default_gone_0-0123456789abcdef");
        assertThat(PendingKeys.read(root)).hasValueSatisfying(k -> assertThat(k).containsExactly(ownGone));
        counting.reset();
        OrphanSweepReport quiet = sweep(DAILY);
        assertThat(quiet.held()).extracting(HeldShard::objects).containsExactly(1);
        assertThat(counting.heads.get()).isEqualTo(1);
        assertThat(counting.lists.get()).isZero();
        assertThat(real.head(gone).size()).isPositive();
        assertThat(real.head(ownGone).size()).isPositive();
    }
}
