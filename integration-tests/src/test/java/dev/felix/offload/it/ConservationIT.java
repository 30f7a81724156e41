package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.harness.FaultProxy;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.apache.commons.io.FileUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.felix.offload.it.MissingShardIT.JSON;
import static dev.felix.offload.it.MissingShardIT.ok;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conservation of records through the runnable jar, in the situations where a delete used to be
 * decided by absence: the broker came back after a lost disk before anyone ran {@code restore}; a
 * restore over a store whose listings lag behind its writes; a restore beside a shard the broker
 * re-created with other segment boundaries. Each ends with every offloaded record kept in the store,
 * reported where it is not recorded, and readable again once {@code restore} records it.
 */
class ConservationIT {

    @TempDir
    Path work;

    /** Every record of a shard, through {@code read --json}: offset to "timestamp payload". */
    private static TreeMap<Long, String> readAll(Path work, Map<String, String> env, Path config, String shard,
                                                 String name, int expectExit) throws Exception {
        FelixJar.Result r = FelixJar.inside(work, env, name, "read", "--config", config.toString(), "--shard", shard,
                "--from", "0", "--max-records", "1000000", "--json");
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(expectExit);
        TreeMap<Long, String> out = new TreeMap<>();
        for (String line : r.out().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode n = JSON.readTree(line);
            if (n.has("error")) {
                continue;
            }
            out.put(n.get("offset").asLong(), n.get("timestamp_micros").asText() + " " + n.get("payload_base64").asText());
        }
        return out;
    }

    private static Path shardDir(Path work, String shard) {
        return work.resolve("data").resolve(shard);
    }

    /** Copies the shard's newest segment aside, removes the directory, and puts back a directory holding only it. */
    private static void brokerBackFirst(Path work, String shard) throws IOException {
        Path dir = shardDir(work, shard);
        List<SegmentFile> files = SegmentFile.list(dir);
        SegmentFile newest = files.get(files.size() - 1);
        Path aside = Files.createDirectories(work.resolve("from-the-leader"));
        Files.copy(newest.log(), aside.resolve(newest.log().getFileName()));
        FileUtils.deleteDirectory(dir.toFile()); // the disk is lost
        Files.createDirectories(dir); // the broker re-replicates the shard: its log starts at the leader's
        Files.copy(aside.resolve(newest.log().getFileName()), newest.log());
    }

    /**
     * The lost-disk recipe with the broker back first. Before: `restore --all-missing` said "no missing
     * shard has objects", and the sweep deleted the whole offloaded history as orphans.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void whenTheBrokerComesBackFirstEveryOffloadedRecordIsKeptAndRestoredBelowTheNewLog(String kind) throws Exception {
        MissingShardIT.Store store = MissingShardIT.Store.of(kind, work, "back-first");
        Path config = MissingShardIT.offloadedRoot(work, store);
        ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString(),
                "--keep-local-segments", "1"));
        String shard = MissingShardIT.shards(work).get(0);
        TreeMap<Long, String> before = readAll(work, store.env(), config, shard, "read-before", 0);
        assertThat(before).hasSize(2000);
        TreeMap<String, Long> objects = store.objects();
        int entries = ManifestStore.read(shardDir(work, shard)).size();
        assertThat(entries).isGreaterThanOrEqualTo(4);

        brokerBackFirst(work, shard);

        for (int i = 0; i < 2; i++) {
            FelixJar.Result retention = FelixJar.inside(work, store.env(), "retention" + i, "retention", "--config",
                    config.toString(), "--json");
            assertThat(retention.exitCode()).as("unrecorded history needs an operator: " + retention.out()
                    + retention.err()).isEqualTo(1);
            JsonNode held = JSON.readTree(retention.out()).get("orphans").get("held");
            assertThat(held).hasSize(1);
            assertThat(held.get(0).get("kind").asText()).isEqualTo("unrecorded-history");
            assertThat(held.get(0).get("shard").asText()).isEqualTo(shard);
            assertThat(JSON.readTree(retention.out()).get("orphans").get("deleted")).isEmpty();
            assertThat(store.objects()).as("nothing deleted").containsAllEntriesOf(objects);
        }

        FelixJar.Result restore = FelixJar.inside(work, store.env(), "restore", "restore", "--config", config.toString(),
                "--all-missing", "--json");
        assertThat(restore.exitCode()).as(restore.out() + restore.err()).isZero();
        JsonNode restored = JSON.readTree(restore.out()).get("shards");
        assertThat(restored).hasSize(1);
        assertThat(restored.get(0).get("dir").asText()).isEqualTo(shard);
        assertThat(restored.get(0).get("entries_restored").asInt()).isEqualTo(entries);
        assertThat(restored.get(0).get("whole").asBoolean()).isTrue();

        assertThat(readAll(work, store.env(), config, shard, "read-after", 0)).isEqualTo(before);
        FelixJar.Result clean = FelixJar.inside(work, store.env(), "retention-after", "retention", "--config",
                config.toString(), "--json");
        assertThat(clean.exitCode()).as(clean.out() + clean.err()).isZero();
        assertThat(store.objects()).containsAllEntriesOf(objects);
    }

    /**
     * A restore over a store whose listing leaves an object out. Before: restore wrote a manifest with a
     * hole, reported the whole range and exited 0; read stopped silently at the hole; the sweep deleted
     * the late object as an orphan.
     */
    @Test
    void aRestoreOverALaggingListingFindsOrNamesItsHoleAndTheLateObjectSurvivesEverySweep() throws Exception {
        S3Server s3 = S3Servers.s3proxy();
        String bucket = s3.createBucket("lagging");
        try (FaultProxy proxy = FaultProxy.start(s3.endpoint())) {
            MissingShardIT.Store store = new MissingShardIT.Store("s3://" + bucket + "?endpoint=" + proxy.endpoint()
                    + "&region=" + s3.region() + "&path-style=true&max-attempts=2", DaemonIT.credentials(s3), s3, bucket,
                    null);
            Path config = MissingShardIT.offloadedRoot(work, store);
            ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString(),
                    "--keep-local-segments", "1"));
            String shard = MissingShardIT.shards(work).get(0);
            TreeMap<Long, String> before = readAll(work, store.env(), config, shard, "read-before", 0);
            List<ManifestEntry> entries = ManifestStore.read(shardDir(work, shard)).entries();
            assertThat(entries).hasSizeGreaterThanOrEqualTo(4);
            ManifestEntry late = entries.get(entries.size() / 2);
            String hidden = late.objectKey();
            // The disk is lost with the local log: what can come back is what was offloaded.
            TreeMap<Long, String> offloaded = new TreeMap<>(before.headMap(entries.get(entries.size() - 1).lastOffset() + 1));

            // 1. The listing lags, the object answers by key: restore asks for the keys the chain implies.
            FileUtils.deleteDirectory(shardDir(work, shard).toFile());
            proxy.policy((method, target) -> method.equals("GET") && target.startsWith("/" + bucket + "?")
                    ? new FaultProxy.HideFromListing(k -> k.equals(hidden)) : null);
            FelixJar.Result found = FelixJar.inside(work, store.env(), "restore-found", "restore", "--config",
                    config.toString(), "--shard", shard);
            assertThat(found.exitCode()).as(found.out() + found.err()).isZero();
            assertThat(found.out()).contains("found " + hidden + " only by asking for it");
            assertThat(readAll(work, store.env(), config, shard, "read-found", 0)).isEqualTo(offloaded);

            // 2. Not even the key answers yet: restore names the hole and exits 1; read stops there, saying so.
            FileUtils.deleteDirectory(shardDir(work, shard).toFile());
            proxy.policy((method, target) -> {
                if (method.equals("GET") && target.startsWith("/" + bucket + "?")) {
                    return new FaultProxy.HideFromListing(k -> k.equals(hidden));
                }
                return target.startsWith("/" + bucket + "/" + hidden) ? new FaultProxy.ErrorAnswer(404, "NoSuchKey") : null;
            });
            FelixJar.Result holed = FelixJar.inside(work, store.env(), "restore-hole", "restore", "--config",
                    config.toString(), "--shard", shard, "--json");
            assertThat(holed.exitCode()).as(holed.out() + holed.err()).isEqualTo(1);
            JsonNode hole = JSON.readTree(holed.out()).get("shards").get(0).get("holes");
            assertThat(hole).hasSize(1);
            assertThat(hole.get(0).get("first").asLong()).isEqualTo(late.baseOffset());
            assertThat(hole.get(0).get("last").asLong()).isEqualTo(late.lastOffset());
            TreeMap<Long, String> upToHole = readAll(work, store.env(), config, shard, "read-hole", 1);
            assertThat(upToHole).isEqualTo(before.headMap(late.baseOffset()));
            assertThat(FelixJar.read(work.resolve("read-hole.out"))).contains("\"error\":\"Gap\"")
                    .contains("\"first_missing\":" + late.baseOffset());

            // 3. The object shows up; every sweep keeps it (its offsets are held nowhere else).
            proxy.policy(FaultProxy.PASS);
            for (int i = 0; i < 2; i++) {
                FelixJar.Result retention = FelixJar.inside(work, store.env(), "retention" + i, "retention", "--config",
                        config.toString(), "--json");
                assertThat(retention.exitCode()).as(retention.out() + retention.err()).isEqualTo(1);
                JsonNode held = JSON.readTree(retention.out()).get("orphans").get("held");
                assertThat(held.toString()).contains("unrecorded-history").contains(hidden);
                assertThat(store.objects()).containsKey(hidden);
            }

            // 4. restore --merge records it; everything reads back.
            FelixJar.Result merged = FelixJar.inside(work, store.env(), "restore-merge", "restore", "--config",
                    config.toString(), "--shard", shard, "--merge");
            assertThat(merged.exitCode()).as(merged.out() + merged.err()).isZero();
            assertThat(readAll(work, store.env(), config, shard, "read-merged", 0)).isEqualTo(offloaded);
        }
    }

    /**
     * A restore beside a shard the broker re-created whose log begins inside the newest offloaded
     * object. Before: restore wrote an entry overlapping the local log; the overlapping local segment
     * was never offloaded and every pass said complete.
     */
    @Test
    void aRestoreBesideARecreatedShardStopsAtTheLocalLogAndThePassNeverCallsAPartlyCoveredShardComplete()
            throws Exception {
        MissingShardIT.Store store = MissingShardIT.Store.of("fs", work, "recreated");
        Path config = MissingShardIT.offloadedRoot(work, store);
        ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString(),
                "--keep-local-segments", "1"));
        String shard = MissingShardIT.shards(work).get(0);
        Path dir = shardDir(work, shard);
        TreeMap<Long, String> before = readAll(work, store.env(), config, shard, "read-before", 0);
        List<ManifestEntry> entries = ManifestStore.read(dir).entries();
        ManifestEntry newest = entries.get(entries.size() - 1);
        long restart = newest.baseOffset() + (newest.lastOffset() - newest.baseOffset()) / 2;

        // The disk is lost; the broker re-creates the shard from the leader, whose log begins at `restart`,
        // with segments of another size.
        FileUtils.deleteDirectory(dir.toFile());
        try (ShardLog log = ShardLog.open(dir, ShardLogConfig.defaults().withSegmentSizeBytes(30_000))) {
            log.reset(restart);
            for (Map.Entry<Long, String> r : before.tailMap(restart).entrySet()) {
                String[] f = r.getValue().split(" ", 2);
                log.append(Long.parseLong(f[0]), Base64.getDecoder().decode(f[1]));
            }
        }

        FelixJar.Result restore = FelixJar.inside(work, store.env(), "restore", "restore", "--config", config.toString(),
                "--shard", shard, "--json");
        assertThat(restore.exitCode()).as(restore.out() + restore.err()).isEqualTo(1);
        JsonNode r = JSON.readTree(restore.out()).get("shards").get(0);
        assertThat(r.get("entries_restored").asInt()).isEqualTo(entries.size() - 1);
        assertThat(r.get("overlaps")).hasSize(1);
        assertThat(r.get("overlaps").get(0).get("key").asText()).isEqualTo(newest.objectKey());
        Manifest restored = ManifestStore.read(dir);
        assertThat(restored.newestEntry().orElseThrow().lastOffset()).isLessThan(restart);

        // The pass offloads the re-created log whole.
        FelixJar.Result pass = FelixJar.inside(work, store.env(), "offload-again", "offload", "--config",
                config.toString(), "--json");
        assertThat(pass.exitCode()).as(pass.out() + pass.err()).isZero();
        assertThat(JSON.readTree(pass.out()).get("complete").asBoolean()).isTrue();
        List<String> offloadedSince = new ArrayList<>();
        for (ManifestEntry e : ManifestStore.read(dir).entries()) {
            if (e.baseOffset() >= restart) {
                offloadedSince.add(e.objectKey());
            }
        }
        assertThat(offloadedSince).isNotEmpty();

        // A manifest with the overlapping entry in it, as the old restore wrote: the pass says the shard is not
        // complete, naming the segment and the offsets that have no copy.
        List<ManifestEntry> overlapping = new ArrayList<>(entries);
        ManifestStore.open(dir).save(Manifest.of(overlapping));
        FelixJar.Result partly = FelixJar.inside(work, store.env(), "offload-partly", "offload", "--config",
                config.toString(), "--json");
        assertThat(partly.exitCode()).as(partly.out() + partly.err()).isEqualTo(1);
        assertThat(JSON.readTree(partly.out()).get("complete").asBoolean()).isFalse();
        assertThat(partly.out() + partly.err()).contains("lies partly under the manifest's entries")
                .contains("offsets " + (newest.lastOffset() + 1));
        assertThat(Files.readString(config, StandardCharsets.UTF_8)).isNotEmpty();
    }

    /**
     * {@code restore --take-over-node-id} replaces another root's claim only when the restore goes ahead.
     * Before: the claim was taken first, so a restore that then refused (nothing there for that shard)
     * still left the running root refused by its own store.
     */
    @Test
    void takingTheClaimOverHappensOnlyWhenTheRestoreGoesAhead() throws Exception {
        MissingShardIT.Store store = MissingShardIT.Store.of("fs", work, "take-over");
        Path config = MissingShardIT.offloadedRoot(work, store);
        ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString()));
        String shard = MissingShardIT.shards(work).get(0);
        byte[] claim = Files.readAllBytes(store.dir().resolve("n1/node.claim"));
        Files.createDirectories(work.resolve("new-root"));

        FelixJar.Result refused = FelixJar.inside(work, store.env(), "restore-nothing", "restore", "--data-dir", "new-root",
                "--store", store.uri(), "--node-id", "n1", "--shard", "acme_default_none_0-0123456789abcdef",
                "--take-over-node-id");
        assertThat(refused.exitCode()).as(refused.out() + refused.err()).isEqualTo(1);
        assertThat(refused.out()).contains("nothing to restore");
        assertThat(Files.readAllBytes(store.dir().resolve("n1/node.claim"))).as("the claim is as it was").isEqualTo(claim);
        assertThat(work.resolve("new-root/node-id")).doesNotExist();

        FelixJar.Result ahead = FelixJar.inside(work, store.env(), "restore-ahead", "restore", "--data-dir", "new-root",
                "--store", store.uri(), "--node-id", "n1", "--shard", shard, "--take-over-node-id");
        assertThat(ahead.exitCode()).as(ahead.out() + ahead.err()).isZero();
        assertThat(Files.readAllBytes(store.dir().resolve("n1/node.claim"))).as("taken over").isNotEqualTo(claim);
    }
}
