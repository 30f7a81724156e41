package dev.felix.offload.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which directories of a data root are shards, and what they are named: {@link DataRoot#list()}. */
class DataRootTest {

    @TempDir
    Path root;

    private static void touch(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, new byte[] {1});
    }

    @Test
    void goldenHealthyRootListsOnlyItsThreeShardsSkippingDotDirsAndScratch() throws IOException {
        Path healthy = Golden.dir().resolve("roots").resolve("healthy");
        assertThat(healthy.resolve(".deleted")).isDirectory();
        assertThat(healthy.resolve(".streams")).isDirectory();
        assertThat(new DataRoot(healthy).shards()).extracting(DataRoot.Shard::name)
                .containsExactly("acme_default_orders_0-0d3aed4b998d2798", "acme_default_orders_1-5e41c2a09d7b3f60",
                        "acme_default_payments_0-9a3c41e07b5d2f16-0006411a0ccf2e40");
    }

    @Test
    void dotDirectoriesAreNeverShardsEvenWithSegmentFiles() throws IOException {
        touch(root.resolve(".deleted").resolve("acme_x_0-0000000000000001").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".deleted").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".streams").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".hidden_0-1234").resolve(SegmentFile.logName(0)));
        assertThat(new DataRoot(root).list().shards()).isEmpty();
    }

    @Test
    void directoriesWithoutASegmentDataFileAreNotShards() throws IOException {
        Files.createDirectories(root.resolve("empty_0-aa"));
        touch(root.resolve("only-index_0-bb").resolve(SegmentFile.indexName(0)));
        touch(root.resolve("only-temp_0-cc").resolve(SegmentFile.logName(0) + ".tmp"));
        touch(root.resolve("short-name_0-dd").resolve("13.log"));
        touch(root.resolve("bad-digits_0-ee").resolve("0000000000000000001x.log"));
        touch(root.resolve("side-files_0-ff").resolve("epochs"));
        Files.createDirectories(root.resolve("dir-named-like-a-segment_0-11").resolve(SegmentFile.logName(0)));
        touch(root.resolve("over-u64_0-22").resolve("99999999999999999999.log"));
        touch(root.resolve(DataRoot.STORAGE_ID));
        touch(root.resolve("file-named-like-a-shard_0-33"));
        assertThat(new DataRoot(root).list().shards()).isEmpty();
    }

    @Test
    void shardDirectoriesAreSortedByName() throws IOException {
        touch(root.resolve("b_0-02").resolve(SegmentFile.logName(7)));
        touch(root.resolve("a_0-01").resolve(SegmentFile.logName(0)));
        touch(root.resolve("c_0-03").resolve(SegmentFile.logName(-1L))); // id 2^64-1
        touch(root.resolve(".deleted").resolve("a_0-00").resolve(SegmentFile.logName(0)));
        assertThat(new DataRoot(root).shards()).extracting(DataRoot.Shard::directory).containsExactly(
                root.resolve("a_0-01"), root.resolve("b_0-02"), root.resolve("c_0-03"));
    }

    @Test
    void identityFileOnlyNamesTheFourIdentityFiles() {
        DataRoot dataRoot = new DataRoot(root);
        assertThat(dataRoot.identityFile(DataRoot.RUN_STATE)).isEqualTo(root.resolve("run-state"));
        assertThatThrownBy(() -> dataRoot.identityFile("../etc")).isInstanceOf(IllegalArgumentException.class);
    }
    @Test
    void shardsUnderGroupsDeadLettersCachesAndCountersAreNamedByTheirPathUnderTheRoot() throws IOException {
        touch(root.resolve("acme_default_orders_0-0d3aed4b998d2798").resolve(SegmentFile.logName(0)));
        touch(root.resolve("groups").resolve("acme_default_g1_0-1111111111111111").resolve(SegmentFile.logName(0)));
        touch(root.resolve("dead-letters").resolve("acme_default_dlq_0-2222222222222222-0006411a0ccf2e40")
                .resolve(SegmentFile.logName(3)));
        touch(root.resolve("caches").resolve("acme_default_c_0-3333333333333333").resolve(SegmentFile.logName(0)));
        touch(root.resolve("counters").resolve("acme_default_n_0-4444444444444444").resolve(SegmentFile.logName(0)));
        // Dotted directories at every level are never shards, nor are the containers themselves.
        for (String level : List.of("", "groups/", "dead-letters/", "caches/", "counters/")) {
            touch(root.resolve(level + ".deleted").resolve("gone_0-5555555555555555").resolve(SegmentFile.logName(0)));
            touch(root.resolve(level + ".streams").resolve(SegmentFile.logName(0)));
        }
        touch(root.resolve("groups").resolve(SegmentFile.logName(0)));

        DataRoot.Listing listing = new DataRoot(root).list();
        assertThat(listing.shards()).extracting(DataRoot.Shard::name).containsExactly(
                "acme_default_orders_0-0d3aed4b998d2798",
                "caches/acme_default_c_0-3333333333333333",
                "counters/acme_default_n_0-4444444444444444",
                "dead-letters/acme_default_dlq_0-2222222222222222-0006411a0ccf2e40",
                "groups/acme_default_g1_0-1111111111111111");
        assertThat(listing.streamShards()).extracting(DataRoot.Shard::name).containsExactly(
                "acme_default_orders_0-0d3aed4b998d2798",
                "dead-letters/acme_default_dlq_0-2222222222222222-0006411a0ccf2e40",
                "groups/acme_default_g1_0-1111111111111111");
        assertThat(listing.cacheShards()).extracting(DataRoot.Shard::kind)
                .containsOnly(DataRoot.ShardKind.CACHE).hasSize(2);
        assertThat(listing.unreadable()).isEmpty();
        assertThat(new DataRoot(root).shard("dead-letters/acme_default_dlq_0-2222222222222222-0006411a0ccf2e40"))
                .get().extracting(DataRoot.Shard::directory)
                .isEqualTo(root.resolve("dead-letters").resolve("acme_default_dlq_0-2222222222222222-0006411a0ccf2e40"));
        assertThat(new DataRoot(root).shard("groups")).isEmpty();
        assertThat(new DataRoot(root).shard("groups/.deleted/gone_0-5555555555555555")).isEmpty();
        assertThat(new DataRoot(root).shard("groups/../acme_default_orders_0-0d3aed4b998d2798")).isEmpty();
    }

    @Test
    void aShardDirectoryAloneIsNamedAsTheListingNamesIt() throws IOException {
        for (String shard : List.of("acme_default_orders_0-0d3aed4b998d2798", "groups/acme_default_g1_0-1111111111111111",
                "dead-letters/acme_default_dlq_0-2222222222222222", "caches/acme_default_c_0-3333333333333333",
                "counters/acme_default_n_0-4444444444444444")) {
            touch(root.resolve(shard).resolve(SegmentFile.logName(0)));
        }
        List<DataRoot.Shard> shards = new DataRoot(root).list().shards();
        assertThat(shards).hasSize(5);
        for (DataRoot.Shard s : shards) {
            assertThat(DataRoot.Shard.nameOf(s.directory())).as(s.name()).isEqualTo(s.name());
        }
    }

    @Test
    void aDirectoryHoldingOnlyAnOffloadManifestIsAShard() throws IOException {
        touch(root.resolve("restored_0-66").resolve(DataRoot.OFFLOAD_MANIFEST));
        assertThat(new DataRoot(root).shards()).extracting(DataRoot.Shard::name).containsExactly("restored_0-66");
    }

    @Test
    void symlinkedShardsAndContainersAreFollowedAndNamedByTheLink(@TempDir Path elsewhere) throws IOException {
        touch(elsewhere.resolve("moved").resolve(SegmentFile.logName(0)));
        touch(elsewhere.resolve("dlq").resolve("acme_x_0-77").resolve(SegmentFile.logName(0)));
        Files.createSymbolicLink(root.resolve("moved_0-01"), elsewhere.resolve("moved"));
        Files.createSymbolicLink(root.resolve("dead-letters"), elsewhere.resolve("dlq"));
        Files.createSymbolicLink(root.resolve("dangling_0-02"), elsewhere.resolve("nothing-here"));
        Files.createSymbolicLink(root.resolve("alias_0-00"), elsewhere.resolve("moved"));

        DataRoot.Listing listing = new DataRoot(root).list();
        assertThat(listing.shards()).extracting(DataRoot.Shard::name)
                .containsExactly("alias_0-00", "dead-letters/acme_x_0-77");
        // The second name of one directory and a link to nothing are reported, never silently dropped:
        // a sweep keeps every key under their prefixes.
        assertThat(listing.unreadable()).extracting(DataRoot.Unreadable::name)
                .containsExactly("dangling_0-02", "moved_0-01");
        assertThat(listing.unreadable().get(0).reason()).contains("link to nothing");
        assertThat(listing.unreadable().get(1).reason()).contains("same directory as shard alias_0-00");
    }

    @Test
    void aLinkBesideThePlainDirectoryItNamesIsTheSameShard() throws IOException {
        // Plain directories are placed by their parent's real path, links resolved one by one: both
        // ways must meet on the same real directory.
        touch(root.resolve("plain_0-01").resolve(SegmentFile.logName(0)));
        Files.createSymbolicLink(root.resolve("via-link_0-02"), root.resolve("plain_0-01"));
        Files.createSymbolicLink(root.resolve("also_0-00"), Path.of("plain_0-01")); // relative
        DataRoot.Listing listing = new DataRoot(root).list();
        assertThat(listing.shards()).extracting(DataRoot.Shard::name).containsExactly("also_0-00");
        assertThat(listing.unreadable()).extracting(DataRoot.Unreadable::name)
                .containsExactly("plain_0-01", "via-link_0-02");
    }

    @Test
    void aShardDirectoryThatCannotBeListedIsReportedNotDropped() throws IOException {
        Path locked = root.resolve("locked_0-01");
        touch(locked.resolve(SegmentFile.logName(0)));
        touch(root.resolve("open_0-02").resolve(SegmentFile.logName(0)));
        assertThat(locked.toFile().setReadable(false)).isTrue();
        try {
            org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(locked), "running as root");
            DataRoot.Listing listing = new DataRoot(root).list();
            assertThat(listing.shards()).extracting(DataRoot.Shard::name).containsExactly("open_0-02");
            assertThat(listing.unreadable()).extracting(DataRoot.Unreadable::name).containsExactly("locked_0-01");
        } finally {
            locked.toFile().setReadable(true);
        }
    }

    @Test
    void anAbandonableListingAsksEveryFewHundredEntriesAndStopsWhenTold() throws IOException {
        int streams = 2 * DataRoot.ENTRIES_PER_ASK + 5;
        for (int i = 0; i < streams; i++) {
            touch(root.resolve(String.format("s_%04d-01", i)).resolve(SegmentFile.logName(0)));
        }
        for (int i = 0; i < DataRoot.ENTRIES_PER_ASK; i++) {
            touch(root.resolve("groups").resolve(String.format("g_%04d-01", i)).resolve(SegmentFile.logName(0)));
        }
        // every entry examined counts, those inside a container too: the root's own and the groups'
        int examined = streams + 1 + DataRoot.ENTRIES_PER_ASK;

        java.util.concurrent.atomic.AtomicInteger asks = new java.util.concurrent.atomic.AtomicInteger();
        java.util.Optional<DataRoot.Listing> whole = new DataRoot(root).list(() -> {
            asks.incrementAndGet();
            return false;
        });
        assertThat(asks).hasValue(examined / DataRoot.ENTRIES_PER_ASK);
        assertThat(whole).get().isEqualTo(new DataRoot(root).list());
        assertThat(whole.get().shards()).hasSize(streams + DataRoot.ENTRIES_PER_ASK);

        asks.set(0);
        assertThat(new DataRoot(root).list(() -> asks.incrementAndGet() == 2)).as("told at the second ask").isEmpty();
        assertThat(asks).hasValue(2);
    }
}
