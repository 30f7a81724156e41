package dev.felix.offload.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Which directories of a data root are shards: {@link DataRoot#shardDirectories()}. */
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
        assertThat(new DataRoot(healthy).shardDirectories()).extracting(p -> p.getFileName().toString())
                .containsExactly("acme_default_orders_0-0d3aed4b998d2798", "acme_default_orders_1-5e41c2a09d7b3f60",
                        "acme_default_payments_0-9a3c41e07b5d2f16-0006411a0ccf2e40");
    }

    @Test
    void dotDirectoriesAreNeverShardsEvenWithSegmentFiles() throws IOException {
        touch(root.resolve(".deleted").resolve("acme_x_0-0000000000000001").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".deleted").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".streams").resolve(SegmentFile.logName(0)));
        touch(root.resolve(".hidden_0-1234").resolve(SegmentFile.logName(0)));
        assertThat(new DataRoot(root).shardDirectories()).isEmpty();
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
        assertThat(new DataRoot(root).shardDirectories()).isEmpty();
    }

    @Test
    void shardDirectoriesAreSortedByName() throws IOException {
        touch(root.resolve("b_0-02").resolve(SegmentFile.logName(7)));
        touch(root.resolve("a_0-01").resolve(SegmentFile.logName(0)));
        touch(root.resolve("c_0-03").resolve(SegmentFile.logName(-1L))); // id 2^64-1
        touch(root.resolve(".deleted").resolve("a_0-00").resolve(SegmentFile.logName(0)));
        assertThat(new DataRoot(root).shardDirectories()).containsExactly(
                root.resolve("a_0-01"), root.resolve("b_0-02"), root.resolve("c_0-03"));
    }

    @Test
    void identityFileOnlyNamesTheFourIdentityFiles() {
        DataRoot dataRoot = new DataRoot(root);
        assertThat(dataRoot.identityFile(DataRoot.RUN_STATE)).isEqualTo(root.resolve("run-state"));
        assertThatThrownBy(() -> dataRoot.identityFile("../etc")).isInstanceOf(IllegalArgumentException.class);
    }
}
