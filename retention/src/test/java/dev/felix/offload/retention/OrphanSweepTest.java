package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.PutOptions;
import dev.felix.offload.store.UploadBody;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.SegmentKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The orphan sweep against the filesystem store. */
class OrphanSweepTest {

    @TempDir
    Path tmp;

    private Path root;
    private Path shard;
    private FilesystemStore store;
    private ManualClock clock;
    private final SegmentKeys keys = new SegmentKeys("", TestData.NODE);

    @BeforeEach
    void setUp() throws Exception {
        root = Files.createDirectories(tmp.resolve("root"));
        store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")));
        shard = TestData.shardOf(root, "orders", 0);
        TestData.write(shard, 200, Duration.ofSeconds(1), 3);
        TestData.offload(root, store);
        clock = new ManualClock(Instant.parse("2031-06-01T00:00:00Z"), ZoneOffset.UTC);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private OrphanSweepReport sweep(OrphanSweepSettings settings) throws Exception {
        return new OrphanSweep(new DataRoot(root), store, keys, clock, settings, RetentionHook.none()).run(StopSignal.never());
    }

    private static void put(ObjectStore store, String key) throws Exception {
        store.put(key, UploadBody.ofBytes(("bytes of " + key).getBytes(StandardCharsets.UTF_8)), PutOptions.defaults());
    }

    /**
     * A base offset the shard holds locally (its log holds offsets 0 to 199): an unnamed object there is
     * what an upload that never reached its entry leaves, an orphan whose records are held elsewhere.
     */
    private static final long HELD = 100;

    private String shardName() {
        return shard.getFileName().toString();
    }

    @Test
    void unnamedSegmentAndIndexKeysGoOnlyAfterTheGracePeriod() throws Exception {
        TreeSet<String> named = TestData.keys(store, keys.nodePrefix());
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        String orphanIndex = SegmentKeys.indexKeyFor(orphan);
        String goneShard = keys.segmentKey("acme_default_gone_0-0123456789abcdef", 0, 0);
        put(store, orphan);
        put(store, orphanIndex);
        put(store, goneShard);

        OrphanSweepReport first = sweep(OrphanSweepSettings.defaults());
        assertThat(first.found()).containsExactlyInAnyOrder(orphan, orphanIndex);
        assertThat(first.waiting()).containsExactlyInAnyOrder(orphan, orphanIndex);
        assertThat(first.held()).extracting(HeldShard::shard, HeldShard::reason)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("acme_default_gone_0-0123456789abcdef",
                        HeldShard.Reason.MISSING_SHARD));
        assertThat(first.deleted()).isEmpty();

        clock.advance(Duration.ofMinutes(59));
        assertThat(sweep(OrphanSweepSettings.defaults()).deleted()).as("within the hour").isEmpty();

        clock.advance(Duration.ofMinutes(1));
        OrphanSweepReport due = sweep(OrphanSweepSettings.defaults());
        assertThat(due.deleted()).containsExactlyInAnyOrder(orphan, orphanIndex);
        assertThat(due.deletedCount()).isEqualTo(2);
        named.add(goneShard); // a shard the root does not have: never the sweep's to delete
        assertThat(TestData.keys(store, keys.nodePrefix())).isEqualTo(named);
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void theLedgerIsWrittenOnlyWhenWhatWasSeenChanges() throws Exception {
        assertThat(sweep(OrphanSweepSettings.defaults()).found()).isEmpty();
        assertThat(OrphanLedger.fileIn(root)).as("no orphans, none before: no file").doesNotExist();

        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        sweep(OrphanSweepSettings.defaults());
        assertThat(OrphanLedger.fileIn(root)).exists();
        java.nio.file.attribute.FileTime written = Files.getLastModifiedTime(OrphanLedger.fileIn(root));
        byte[] ledger = Files.readAllBytes(OrphanLedger.fileIn(root));
        Files.setLastModifiedTime(OrphanLedger.fileIn(root), java.nio.file.attribute.FileTime.fromMillis(0));
        clock.advance(Duration.ofMinutes(5));
        sweep(OrphanSweepSettings.defaults());
        assertThat(Files.getLastModifiedTime(OrphanLedger.fileIn(root)).toMillis()).as("the same sighting: not rewritten")
                .isZero();
        assertThat(Files.readAllBytes(OrphanLedger.fileIn(root))).isEqualTo(ledger);
        assertThat(written.toMillis()).isPositive();

        store.delete(orphan);
        sweep(OrphanSweepSettings.defaults());
        assertThat(OrphanLedger.load(root)).as("gone from the store: gone from the ledger").isEmpty();
    }

    @Test
    void aDryRunReportsWhatWouldGoAndChangesNothing() throws Exception {
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        sweep(OrphanSweepSettings.defaults()); // first sighting recorded
        byte[] ledger = Files.readAllBytes(OrphanLedger.fileIn(root));
        clock.advance(Duration.ofHours(2));
        TreeSet<String> before = TestData.keys(store, "");

        OrphanSweepReport dry = sweep(OrphanSweepSettings.defaults().withDryRun(true));

        assertThat(dry.dryRun()).isTrue();
        assertThat(dry.found()).containsExactly(orphan);
        assertThat(dry.eligible()).containsExactly(orphan);
        assertThat(dry.deleted()).isEmpty();
        assertThat(TestData.keys(store, "")).isEqualTo(before);
        assertThat(Files.readAllBytes(OrphanLedger.fileIn(root))).isEqualTo(ledger);
    }

    @Test
    void keysOfAnotherNodeAndOutsideThePrefixAreNeverTouched() throws Exception {
        SegmentKeys otherNode = new SegmentKeys("", "node-b");
        String theirs = otherNode.segmentKey(shardName(), 0, 0);
        String theirsIndex = SegmentKeys.indexKeyFor(theirs);
        String prefixedLookalike = "node-a-old/" + shardName() + "/00000000000000000000-00000000000000000000.segment";
        String unrelated = "backups/2030/dump.segment";
        for (String k : List.of(theirs, theirsIndex, prefixedLookalike, unrelated)) {
            put(store, k);
        }

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.found()).isEmpty();
        for (String k : List.of(theirs, theirsIndex, prefixedLookalike, unrelated)) {
            assertThat(store.head(k).size()).as(k).isPositive();
        }
    }

    @Test
    void keysThatAreNeitherSegmentsNorIndexesAreReportedAndKept() throws Exception {
        String odd = keys.shardPrefix(shardName()) + "notes.txt";
        put(store, odd);

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.ignored()).containsExactly(odd);
        assertThat(r.found()).isEmpty();
        assertThat(store.head(odd).size()).isPositive();
    }

    /**
     * An unreadable manifest may name any key (a copied shard directory's names another shard's), so
     * while one is unreadable nothing is deleted, in any shard; mended, the sweep goes on.
     */
    @Test
    void aShardWithAnUnreadableManifestKeepsEveryKeyWhileItIsUnreadable() throws Exception {
        String orphanOfBroken = keys.segmentKey(shardName(), HELD, 77);
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 4);
        String orphanOfOther = keys.segmentKey(other.getFileName().toString(), 10, 77);
        put(store, orphanOfBroken);
        put(store, orphanOfOther);
        TreeSet<String> namedOfBroken = TestData.keys(store, keys.shardPrefix(shardName()));
        byte[] bytes = Files.readAllBytes(ManifestStore.fileIn(shard));
        bytes[9] ^= 0x01;
        Files.write(ManifestStore.fileIn(shard), bytes);

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.problems()).anySatisfy(p -> assertThat(p).contains(shardName()).contains("manifest unreadable"));
        assertThat(r.deleted()).isEmpty();
        assertThat(TestData.keys(store, keys.shardPrefix(shardName()))).isEqualTo(namedOfBroken);
        assertThat(store.head(orphanOfOther).size()).isPositive();

        bytes[9] ^= 0x01;
        Files.write(ManifestStore.fileIn(shard), bytes);
        assertThat(sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO)).deleted())
                .containsExactlyInAnyOrder(orphanOfBroken, orphanOfOther);
    }

    @Test
    void objectsNamedByADeletedShardsManifestAreNotOrphans() throws Exception {
        Path deleted = Files.createDirectories(root.resolve(".deleted"));
        Files.move(shard, deleted.resolve(shardName()));
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 4);

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.found()).isEmpty();
        for (ManifestEntry e : ManifestStore.read(deleted.resolve(shardName())).entries()) {
            assertThat(store.head(e.objectKey()).size()).isEqualTo(e.sizeBytes());
        }
    }

    @Test
    void aRootWithoutShardsOrManifestsDeletesNothing() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("unmounted"));
        OrphanSweepReport r = new OrphanSweep(new DataRoot(empty), store, keys, clock,
                OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none()).run(StopSignal.never());

        assertThat(r.held()).singleElement().satisfies(h -> {
            assertThat(h.shard()).isEqualTo(shardName());
            assertThat(h.reason()).isEqualTo(HeldShard.Reason.MISSING_SHARD);
        });
        assertThat(r.deleted()).isEmpty();
        assertThat(r.problems()).anySatisfy(p -> assertThat(p).contains("no shard directory"));
        TestData.assertEveryEntryHasItsObject(shard, store);
    }

    @Test
    void anObjectReplacedSinceItWasFirstSeenStartsItsGracePeriodAgain() throws Exception {
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        sweep(OrphanSweepSettings.defaults());
        clock.advance(Duration.ofMinutes(50));
        store.put(orphan, UploadBody.ofBytes(new byte[] {1, 2, 3}), PutOptions.defaults());
        sweep(OrphanSweepSettings.defaults());

        clock.advance(Duration.ofMinutes(50));
        assertThat(sweep(OrphanSweepSettings.defaults()).deleted()).as("100 minutes after the first, 50 after the new").isEmpty();
        clock.advance(Duration.ofMinutes(10));
        assertThat(sweep(OrphanSweepSettings.defaults()).deleted()).containsExactly(orphan);
    }

    @Test
    void aLedgerThatDoesNotParseOnlyRestartsTheGracePeriods() throws Exception {
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        Files.writeString(OrphanLedger.fileIn(root), "garbage\n");

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults());

        assertThat(r.waiting()).containsExactly(orphan);
        assertThat(Files.readString(OrphanLedger.fileIn(root))).startsWith("felix-orphan-ledger 1\n").contains(orphan);
        clock.advance(Duration.ofHours(1));
        assertThat(sweep(OrphanSweepSettings.defaults()).deleted()).containsExactly(orphan);
    }

    @Test
    void keysUnderAKeyPrefixAreSweptUnderThatPrefixOnly() throws Exception {
        SegmentKeys prefixed = new SegmentKeys("tiered/eu", TestData.NODE);
        String orphan = prefixed.segmentKey(shardName(), HELD, 77);
        String unprefixedNamed = ManifestStore.read(shard).oldestEntry().orElseThrow().objectKey();
        put(store, orphan);

        OrphanSweepReport r = new OrphanSweep(new DataRoot(root), store, prefixed, clock,
                OrphanSweepSettings.defaults().withGrace(Duration.ZERO), RetentionHook.none()).run(StopSignal.never());

        assertThat(r.prefix()).isEqualTo("tiered/eu/" + TestData.NODE + "/");
        assertThat(r.deleted()).containsExactly(orphan);
        assertThat(store.head(unprefixedNamed).size()).isPositive();
    }

    // ---- shards the sweep does not judge

    @Test
    void aMissingShardsObjectsAreKeptThroughAnyNumberOfSweepsAndReportedOnce() throws Exception {
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 200, Duration.ofSeconds(1), 4);
        TestData.offload(root, store);
        TreeSet<String> before = TestData.keys(store, "");
        TreeSet<String> ofMoved = TestData.keys(store, keys.shardPrefix(shardName()));
        long bytes = 0;
        for (String k : ofMoved) {
            bytes += store.head(k).size();
        }
        Files.move(shard, tmp.resolve("moved-away"));

        for (int i = 0; i < 3; i++) {
            OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));
            assertThat(r.found()).isEmpty();
            assertThat(r.deleted()).isEmpty();
            assertThat(r.held()).singleElement().satisfies(h -> {
                assertThat(h.shard()).isEqualTo(shardName());
                assertThat(h.reason()).isEqualTo(HeldShard.Reason.MISSING_SHARD);
                assertThat(h.reason().label()).isEqualTo("missing-shard");
            });
            assertThat(r.held().get(0).objects()).isEqualTo(ofMoved.size());
            clock.advance(Duration.ofDays(30));
        }
        assertThat(TestData.keys(store, "")).isEqualTo(before);
        assertThat(OrphanLedger.fileIn(root)).as("held keys are not orphans waiting").doesNotExist();
        OrphanSweepReport last = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));
        assertThat(last.held().get(0).bytes()).isEqualTo(bytes);
    }

    @Test
    void aDeletedShardBeingFinishedStillHasItsOrphansSwept() throws Exception {
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 4);
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        Path deleted = Files.createDirectories(root.resolve(".deleted"));
        Files.move(shard, deleted.resolve(shardName()));

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.held()).isEmpty();
        assertThat(r.deleted()).containsExactly(orphan);
        for (ManifestEntry e : ManifestStore.read(deleted.resolve(shardName())).entries()) {
            assertThat(store.head(e.objectKey()).size()).isEqualTo(e.sizeBytes());
        }
    }

    @Test
    void aLinkTheRootDoesNotListKeepsEveryKeyUnderItsPrefix() throws Exception {
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 4);
        TreeSet<String> before = TestData.keys(store, "");
        Path away = tmp.resolve("other-disk").resolve(shardName());
        Files.createDirectories(away.getParent());
        Files.move(shard, away);
        Files.createSymbolicLink(shard, tmp.resolve("not-mounted"));  // dangling: the volume is not there

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.deleted()).isEmpty();
        assertThat(r.held()).singleElement().satisfies(h -> {
            assertThat(h.reason()).isEqualTo(HeldShard.Reason.UNREADABLE);
            assertThat(h.detail()).contains("symbolic link");
        });
        assertThat(TestData.keys(store, "")).isEqualTo(before);
    }

    @Test
    void aDirectoryItMayNotReadKeepsEveryKeyUnderItsPrefix() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse("root".equals(System.getProperty("user.name")),
                "root reads a directory whatever its mode");
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 50, Duration.ofSeconds(1), 4);
        TreeSet<String> before = TestData.keys(store, "");
        Files.setPosixFilePermissions(ManifestStore.fileIn(shard), java.util.Set.of());
        try {
            OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));
            assertThat(r.deleted()).isEmpty();
            assertThat(r.held()).singleElement().satisfies(h -> assertThat(h.reason())
                    .isEqualTo(HeldShard.Reason.UNREADABLE));
        } finally {
            Files.setPosixFilePermissions(ManifestStore.fileIn(shard),
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        }
        assertThat(TestData.keys(store, "")).isEqualTo(before);
    }

    /**
     * A manifest from an old snapshot, with the segments offloaded since gone from local disk: the store's
     * objects are all there is of them. Every one is kept and reported as unrecorded history, however
     * few (the sweep used to delete them below a count of 8, which lost their records).
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 12})
    void aManifestFromAnOldSnapshotKeepsEveryObjectItLostAsUnrecordedHistory(int lost) throws Exception {
        byte[] snapshot = Files.readAllBytes(ManifestStore.fileIn(shard));
        int entriesThen = ManifestStore.read(shard).size();
        while (ManifestStore.read(shard).size() < entriesThen + lost) {
            TestData.write(shard, 100, Duration.ofSeconds(1), 5);
            TestData.offload(root, store);
        }
        int entriesNow = ManifestStore.read(shard).size();
        int objectsLost = ManifestStore.read(shard).entries().subList(entriesThen, entriesNow).stream()
                .mapToInt(e -> TestData.storedKeysOf(e).size()).sum();
        TreeSet<String> before = TestData.keys(store, "");
        // The offloaded segments left local disk (all but the active one), so the store's copies are all
        // there is of them; then the manifest comes back from the old snapshot.
        List<SegmentFile> local = SegmentFile.list(shard);
        for (SegmentFile f : local.subList(0, local.size() - 1)) {
            Files.delete(f.log());
            Files.deleteIfExists(f.index());
        }
        Files.write(ManifestStore.fileIn(shard), snapshot);

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.deleted()).isEmpty();
        assertThat(r.held()).singleElement().satisfies(h -> {
            assertThat(h.reason()).isEqualTo(HeldShard.Reason.UNRECORDED_HISTORY);
            assertThat(h.keys()).hasSize(entriesNow - entriesThen);
            assertThat(h.objects()).isEqualTo(objectsLost);
            assertThat(h.span()).isNotNull();
        });
        assertThat(TestData.keys(store, "")).isEqualTo(before);
        assertThat(sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO)).deleted())
                .as("a second sweep keeps them too").isEmpty();
        assertThat(TestData.keys(store, "")).isEqualTo(before);
    }

    /**
     * Unnamed objects of offsets the shard still holds locally (the old history of a shard the broker
     * reset, or copies of segments not yet unlinked) are orphans however many there are: sweeping them
     * loses nothing, and the new history's uploads need their keys.
     */
    @Test
    void unnamedObjectsOverlappingTheLocalLogAreOrphansHoweverMany() throws Exception {
        byte[] snapshot = Files.readAllBytes(ManifestStore.fileIn(shard));
        TestData.write(shard, 2000, Duration.ofSeconds(1), 5);
        TestData.offload(root, store);
        Files.write(ManifestStore.fileIn(shard), snapshot);
        TreeSet<String> named = new TreeSet<>();
        for (var e : ManifestStore.read(shard).entries()) {
            named.add(e.objectKey());
        }

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.held()).isEmpty();
        assertThat(r.deleted()).hasSizeGreaterThanOrEqualTo(16);
        assertThat(TestData.keys(store, keys.shardPrefix(shardName())))
                .filteredOn(k -> k.endsWith(".segment")).containsExactlyInAnyOrderElementsOf(named);
    }

    @Test
    void aDirectoryHoldingOnlyAManifestIsAShardWhoseOrphansAreSwept() throws Exception {
        for (Path f : TestData.keys(store, "").isEmpty() ? List.<Path>of() : listLocal(shard)) {
            if (!f.getFileName().toString().equals(ManifestStore.FILE_NAME)) {
                Files.delete(f);
            }
        }
        // the root's one listing counts a directory holding only a manifest as a shard, as a restored one is
        assertThat(new DataRoot(root).streamShards()).extracting(DataRoot.Shard::directory).contains(shard);
        String orphan = keys.segmentKey(shardName(), 5, 77);
        put(store, orphan);
        TreeSet<String> named = TestData.keys(store, keys.shardPrefix(shardName()));
        named.remove(orphan);

        OrphanSweepReport r = sweep(OrphanSweepSettings.defaults().withGrace(Duration.ZERO));

        assertThat(r.held()).isEmpty();
        assertThat(r.deleted()).containsExactly(orphan);
        assertThat(TestData.keys(store, keys.shardPrefix(shardName()))).isEqualTo(named);
    }

    @Test
    void forgettingAMissingShardDeletesItsObjectsButNoKeyAManifestNames() throws Exception {
        Path other = TestData.shardOf(root, "payments", 0);
        TestData.write(other, 200, Duration.ofSeconds(1), 4);
        TestData.offload(root, store);
        TreeSet<String> ofOther = TestData.keys(store, keys.shardPrefix(other.getFileName().toString()));
        TreeSet<String> ofGone = TestData.keys(store, keys.shardPrefix(shardName()));
        // A key under the gone shard's prefix that a live manifest names (written by the shard under
        // an earlier name, say) must stay, with its index.
        ManifestEntry borrowed = ManifestStore.read(shard).oldestEntry().orElseThrow();
        ManifestStore live = ManifestStore.open(other);
        live.save(live.manifest().withEntry(new ManifestEntry(999, 10_000_000, 10_000_000, borrowed.sizeBytes(),
                borrowed.oldestTimestampMicros(), borrowed.newestTimestampMicros(), borrowed.objectCrc32(),
                borrowed.objectKey())));
        List<String> borrowedObjects = TestData.storedKeysOf(borrowed); // with its index, where it has one
        ofGone.removeAll(borrowedObjects);
        Files.move(shard, tmp.resolve("moved-away"));
        OrphanSweep sweep = new OrphanSweep(new DataRoot(root), store, keys, clock,
                OrphanSweepSettings.defaults(), RetentionHook.none());

        OrphanSweep.Forgetting dry = sweep.forget(shardName(), false, StopSignal.never());
        assertThat(dry.present()).isFalse();
        assertThat(dry.refused()).isNull();
        assertThat(dry.keys()).containsExactlyInAnyOrderElementsOf(ofGone);
        assertThat(dry.deleted()).isEmpty();
        assertThat(dry.kept()).isEqualTo(borrowedObjects.size());
        assertThat(TestData.keys(store, keys.shardPrefix(shardName()))).hasSize(ofGone.size() + borrowedObjects.size());

        OrphanSweep.Forgetting done = sweep.forget(shardName(), true, StopSignal.never());
        assertThat(done.deleted()).containsExactlyInAnyOrderElementsOf(ofGone);
        assertThat(TestData.keys(store, keys.shardPrefix(shardName()))).containsExactlyInAnyOrderElementsOf(borrowedObjects);
        assertThat(TestData.keys(store, keys.shardPrefix(other.getFileName().toString()))).isEqualTo(ofOther);
    }

    @Test
    void forgettingAShardTheRootHasDeletesOnlyWhatItsManifestDoesNotName() throws Exception {
        String orphan = keys.segmentKey(shardName(), HELD, 77);
        put(store, orphan);
        TreeSet<String> named = TestData.keys(store, keys.shardPrefix(shardName()));
        named.remove(orphan);
        OrphanSweep sweep = new OrphanSweep(new DataRoot(root), store, keys, clock,
                OrphanSweepSettings.defaults(), RetentionHook.none());

        OrphanSweep.Forgetting done = sweep.forget(shardName(), true, StopSignal.never());

        assertThat(done.present()).isTrue();
        assertThat(done.deleted()).containsExactly(orphan);
        assertThat(TestData.keys(store, keys.shardPrefix(shardName()))).isEqualTo(named);
    }

    @Test
    void forgettingAShardWithAnUnreadableManifestIsRefused() throws Exception {
        TreeSet<String> before = TestData.keys(store, "");
        byte[] bytes = Files.readAllBytes(ManifestStore.fileIn(shard));
        bytes[9] ^= 0x01;
        Files.write(ManifestStore.fileIn(shard), bytes);
        OrphanSweep sweep = new OrphanSweep(new DataRoot(root), store, keys, clock,
                OrphanSweepSettings.defaults(), RetentionHook.none());

        OrphanSweep.Forgetting f = sweep.forget(shardName(), true, StopSignal.never());

        assertThat(f.refused()).contains("manifest unreadable");
        assertThat(f.deleted()).isEmpty();
        assertThat(TestData.keys(store, "")).isEqualTo(before);
    }

    private static List<Path> listLocal(Path dir) throws Exception {
        try (java.util.stream.Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }
}
