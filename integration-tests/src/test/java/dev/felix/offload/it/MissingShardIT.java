package dev.felix.offload.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A shard directory that vanished from the data root (a lost disk, a volume that did not mount, a
 * mistaken {@code mv}) or became a link, through the runnable jar, on the filesystem store and on
 * S3Proxy: the sweep keeps every object of it, however often it runs with no grace at all, and says
 * so in retention, scrub, the daemon's health and metrics; only {@code forget-shard} deletes them.
 */
@Order(2) // the longest classes start first (see the pom): 155 s
class MissingShardIT {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path work;

    /** A store for one test: a URI the jar understands, the environment it needs, and a way to list keys. */
    record Store(String uri, Map<String, String> env, S3Server s3, String bucket, Path dir) {

        static Store of(String kind, Path work, String name) throws IOException {
            if (kind.equals("fs")) {
                Path dir = Files.createDirectories(work.resolve("store"));
                return new Store(dir.toUri().toString(), Map.of(), null, null, dir);
            }
            S3Server s3 = S3Servers.s3proxy();
            String bucket = s3.createBucket(name);
            return new Store(DaemonIT.storeUri(s3, bucket), DaemonIT.credentials(s3), s3, bucket, null);
        }

        void copy(String from, String to) throws IOException {
            if (s3 != null) {
                s3.admin().copyObject(b -> b.sourceBucket(bucket).sourceKey(from).destinationBucket(bucket)
                        .destinationKey(to));
            } else {
                Files.createDirectories(dir.resolve(to).getParent());
                Files.copy(dir.resolve(from), dir.resolve(to));
            }
        }

        void delete(String key) throws IOException {
            if (s3 != null) {
                s3.admin().deleteObject(b -> b.bucket(bucket).key(key));
            } else {
                Files.delete(dir.resolve(key));
            }
        }

        /** Every key with its size. */
        TreeMap<String, Long> objects() throws IOException {
            TreeMap<String, Long> out = new TreeMap<>();
            if (s3 != null) {
                for (S3Object o : s3.admin().listObjectsV2Paginator(b -> b.bucket(bucket)).contents()) {
                    // the reserved .felix-probe/ folder: a restore killed mid-probe leaves its objects there,
                    // and a later probe clears them; they are no shard's objects
                    if (!o.key().startsWith(".") && !o.key().contains("/node.lease.")) { // leases: see below
                        out.put(o.key(), o.size());
                    }
                }
                return out;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    String key = dir.relativize(f).toString();
                    // the store's own bookkeeping, and the node's leases, which a pass that writes replaces
                    if (!key.startsWith(".") && !key.contains("/node.lease.")) {
                        out.put(key, Files.size(f));
                    }
                }
            }
            return out;
        }
    }

    static Map<String, Long> under(Map<String, Long> objects, String prefix) {
        Map<String, Long> out = new TreeMap<>();
        objects.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k, v);
            }
        });
        return out;
    }

    static FelixJar.Result ok(FelixJar.Result r) {
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        return r;
    }

    /** A two-shard root offloaded with one segment kept locally; answers the config file. */
    static Path offloadedRoot(Path work, Store store) throws Exception {
        ok(FelixJar.inside(work, Map.of(), "generate", "generate", "--data-dir", "data", "--streams", "1",
                "--shards-per-stream", "2", "--records", "2000", "--segment-bytes", "100000"));
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: data",
                "store: " + store.uri(),
                "node-id: n1",
                "orphans.grace: 0s",
                // no broker rewrites the manifests here: an entry need not stand 5 s before its segment goes
                "offload.unlink-settle: 0s",
                ""), StandardCharsets.UTF_8);
        return config;
    }

    static List<String> shards(Path work) throws IOException {
        try (Stream<Path> s = Files.list(work.resolve("data"))) {
            return s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("."))
                    .sorted().toList();
        }
    }

    private static String get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static int status(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void aVanishedOrLinkedShardKeepsEveryObjectThroughAnyNumberOfSweeps(String kind) throws Exception {
        Store store = Store.of(kind, work, "vanished-it");
        Path config = offloadedRoot(work, store);
        ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString(),
                "--keep-local-segments", "1"));
        List<String> shards = shards(work);
        assertThat(shards).hasSize(2);
        String gone = shards.get(0);
        String linked = shards.get(1);
        TreeMap<String, Long> before = store.objects();
        Map<String, Long> ofGone = under(before, "n1/" + gone + "/");
        // several segments (each one object: below 4 MiB a segment has no index object)
        assertThat(ofGone).as("the shard's offloaded history").hasSizeGreaterThanOrEqualTo(3)
                .allSatisfy((key, size) -> assertThat(key).endsWith(".segment"));
        long goneBytes = ofGone.values().stream().mapToLong(Long::longValue).sum();

        // The reproduction: one shard directory moved out of the root.
        Files.move(work.resolve("data").resolve(gone), work.resolve(gone + ".moved"));
        // The other moved to another disk and linked back: offload follows it, so the sweep must too.
        Path otherDisk = Files.createDirectories(work.resolve("other-disk"));
        Files.move(work.resolve("data").resolve(linked), otherDisk.resolve(linked));
        Files.createSymbolicLink(work.resolve("data").resolve(linked), otherDisk.resolve(linked));
        ok(FelixJar.inside(work, store.env(), "offload2", "offload", "--config", config.toString()));

        for (int i = 0; i < 3; i++) {
            FelixJar.Result retention = FelixJar.inside(work, store.env(), "retention" + i, "retention", "--config",
                    config.toString(), "--json");
            assertThat(retention.exitCode()).as("a missing shard needs an operator: " + retention.out()
                    + retention.err()).isEqualTo(1);
            JsonNode r = JSON.readTree(retention.out());
            JsonNode orphans = r.get("orphans");
            assertThat(orphans.get("deleted")).isEmpty();
            assertThat(orphans.get("found")).isEmpty();
            assertThat(orphans.get("held")).hasSize(1);
            JsonNode held = orphans.get("held").get(0);
            assertThat(held.get("kind").asText()).isEqualTo("missing-shard");
            assertThat(held.get("shard").asText()).isEqualTo(gone);
            assertThat(held.get("objects").asInt()).isEqualTo(ofGone.size());
            assertThat(held.get("bytes").asLong()).isEqualTo(goneBytes);
            assertThat(retention.err()).doesNotContain("Exception");
        }
        FelixJar.Result text = FelixJar.inside(work, store.env(), "retention-text", "retention", "--config",
                config.toString());
        assertThat(text.out()).contains("orphans under n1/: 0 found, 0 past the grace period, 0 deleted")
                .contains("missing-shard " + gone + ": " + ofGone.size() + " objects");
        assertThat(store.objects()).as("nothing deleted, of either shard").containsAllEntriesOf(before);

        FelixJar.Result scrub = FelixJar.inside(work, store.env(), "scrub", "scrub", "--config", config.toString(),
                "--json");
        assertThat(scrub.exitCode()).as(scrub.out() + scrub.err()).isEqualTo(1);
        JsonNode missing = null;
        for (JsonNode a : JSON.readTree(scrub.out()).get("anomalies")) {
            assertThat(a.get("kind").asText()).as(a.toString()).isEqualTo("missing-shard");
            missing = a;
        }
        assertThat(missing).isNotNull();
        assertThat(missing.get("shard").asText()).isEqualTo(gone);
        assertThat(missing.get("objects").asInt()).isEqualTo(ofGone.size());

        // The linked shard is served whole: its history is still there.
        FelixJar.Result read = ok(FelixJar.inside(work, store.env(), "read-linked", "read", "--data-dir", "data",
                "--store", store.uri(), "--shard", linked, "--from", "0", "--max-records", "5", "--json"));
        assertThat(read.out()).contains("\"source\":\"remote\"");

        // The daemon: degraded, with the shard named, and the metric.
        Path daemonConfig = work.resolve("daemon.yaml");
        Files.writeString(daemonConfig, Files.readString(config) + String.join("\n",
                "offload.schedule: 'off'",
                "retention.schedule: '* * * * * ?'",
                "scrub.schedule: 'off'",
                "http.port: 0",
                ""), StandardCharsets.UTF_8);
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, store.env(), daemonConfig)) {
            // /health answers 503 from start-up until the store has answered, so wait for the pass's own reason
            FelixJar.await("a retention pass ran", Duration.ofSeconds(60), () -> {
                try {
                    return status(daemon.base + "/health") == 503
                            && get(daemon.base + "/health").contains("retention: orphan-sweep/");
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                seen.add(status(daemon.base + "/health") + " " + get(daemon.base + "/health"));
                Thread.sleep(300);
            }
            assertThat(seen).as("every answer while the shard is missing; daemon log:\n" + daemon.stderr())
                    .allSatisfy(h -> assertThat(h).startsWith("503 ").contains("\"degraded\"")
                            .contains("retention: orphan-sweep/" + gone + ": missing-shard " + gone));
            JsonNode health = JSON.readTree(get(daemon.base + "/health"));
            assertThat(health.get("status").asText()).isEqualTo("degraded");
            assertThat(health.toString()).contains(gone);
            PrometheusText metrics = PrometheusText.parse(get(daemon.base + "/metrics"));
            assertThat(metrics.value("felix_orphans_held_objects", "{reason=\"missing-shard\"}"))
                    .isEqualTo(ofGone.size());
            assertThat(metrics.value("felix_orphans_held_shards", "{reason=\"missing-shard\"}")).isEqualTo(1);
            assertThat(metrics.value("felix_orphans_held_bytes", "{reason=\"missing-shard\"}")).isEqualTo(goneBytes);
            assertThat(daemon.terminate()).isZero();
        }
        assertThat(store.objects()).containsAllEntriesOf(before);

        // Only the explicit command deletes them: first it lists, then with --yes it deletes.
        FelixJar.Result dry = ok(FelixJar.inside(work, store.env(), "forget-dry", "forget-shard", "--config",
                config.toString(), "--shard", gone, "--json"));
        JsonNode d = JSON.readTree(dry.out());
        assertThat(d.get("objects").asInt()).isEqualTo(ofGone.size());
        assertThat(d.get("deleted").asInt()).isZero();
        assertThat(store.objects()).containsAllEntriesOf(before);
        FelixJar.Result refused = FelixJar.inside(work, store.env(), "forget-linked", "forget-shard", "--config",
                config.toString(), "--shard", linked, "--yes", "--json");
        assertThat(refused.exitCode()).as(refused.out() + refused.err()).isZero();
        assertThat(JSON.readTree(refused.out()).get("deleted").asInt()).as("a live shard: only unnamed keys").isZero();
        FelixJar.Result forget = ok(FelixJar.inside(work, store.env(), "forget", "forget-shard", "--config",
                config.toString(), "--shard", gone, "--yes"));
        assertThat(forget.out()).contains(ofGone.size() + " of " + ofGone.size());
        TreeMap<String, Long> after = store.objects();
        assertThat(under(after, "n1/" + gone + "/")).isEmpty();
        Map<String, Long> expected = new HashMap<>(before);
        ofGone.keySet().forEach(expected::remove);
        assertThat(after).containsAllEntriesOf(expected);
        ok(FelixJar.inside(work, store.env(), "retention-after", "retention", "--config", config.toString()));
    }

    /** The records of a shard as {@code read --json} prints them, without where they came from. */
    static List<String> records(Path work, Store store, String shard, String name) throws Exception {
        FelixJar.Result r = ok(FelixJar.inside(work, store.env(), name, "read", "--data-dir", "data", "--store",
                store.uri(), "--shard", shard, "--from", "0", "--max-records", "1000000", "--json"));
        List<String> out = new ArrayList<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                out.add(line.replace(",\"source\":\"remote\"", "").replace(",\"source\":\"local\"", ""));
            }
        }
        return out;
    }

    static void removeTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"fs", "s3proxy"})
    void aRemovedShardIsRestoredFromTheStoreAndReadBackByteForByte(String kind) throws Exception {
        Store store = Store.of(kind, work, "restore-it");
        Path config = offloadedRoot(work, store);
        List<String> shards = shards(work);
        String gone = shards.get(0);
        String legacy = shards.get(1);
        List<String> written = records(work, store, gone, "read-written");
        List<String> writtenLegacy = records(work, store, legacy, "read-written-legacy");
        ok(FelixJar.inside(work, store.env(), "offload", "offload", "--config", config.toString(),
                "--keep-local-segments", "1"));
        Path dir = work.resolve("data").resolve(gone);
        String manifest = ok(FelixJar.inside(work, Map.of(), "manifest", "manifest", "show", "--shard-dir",
                dir.toString(), "--json")).out();
        JsonNode entries = JSON.readTree(manifest).get("entries");
        assertThat(entries.size()).isGreaterThanOrEqualTo(3);
        long last = entries.get(entries.size() - 1).get("last").asLong();
        String legacyManifest = ok(FelixJar.inside(work, Map.of(), "manifest-legacy", "manifest", "show", "--shard-dir",
                work.resolve("data").resolve(legacy).toString(), "--json")).out();

        // The second shard's objects as 0.6.0-preview.3 keyed them, without the node id.
        for (String key : under(store.objects(), "n1/" + legacy + "/").keySet()) {
            store.copy(key, key.substring("n1/".length()));
            store.delete(key);
        }
        removeTree(dir);
        removeTree(work.resolve("data").resolve(legacy));
        TreeMap<String, Long> before = store.objects();
        FelixJar.Result sweep = FelixJar.inside(work, store.env(), "retention", "retention", "--config",
                config.toString(), "--json");
        assertThat(JSON.readTree(sweep.out()).get("orphans").get("deleted")).as(sweep.out()).isEmpty();
        assertThat(JSON.readTree(sweep.out()).get("orphans").get("held").get(0).get("kind").asText())
                .isEqualTo("missing-shard");
        assertThat(store.objects()).isEqualTo(before);

        // Overlapping objects (a second segment id at an offset another object holds) are refused, naming both.
        String firstKey = entries.get(0).get("key").asText();
        String overlapping = firstKey.replace("-00000000000000000000.segment", "-00000000000000000099.segment");
        assertThat(overlapping).isNotEqualTo(firstKey);
        store.copy(firstKey, overlapping);
        FelixJar.Result refused = FelixJar.inside(work, store.env(), "restore-overlap", "restore", "--config",
                config.toString(), "--shard", gone, "--json");
        assertThat(refused.exitCode()).as(refused.out() + refused.err()).isEqualTo(1);
        assertThat(JSON.readTree(refused.out()).get("shards").get(0).get("refused").asText())
                .contains("overlap").contains(firstKey).contains(overlapping);
        assertThat(dir).as("nothing written").doesNotExist();
        store.delete(overlapping);

        // Killed at random moments of a whole run (timed once first): no manifest, or a whole one.
        long started = System.nanoTime();
        ok(FelixJar.run(work, store.env(), "restore-timed", "restore", "--config", config.toString(), "--shard", gone));
        int runMillis = (int) ((System.nanoTime() - started) / 1_000_000);
        removeTree(dir);
        java.util.SplittableRandom random = new java.util.SplittableRandom(Long.getLong("felix.it.seed", 20));
        int whole = 0;
        int none = 0;
        for (int i = 0; i < 8; i++) {
            Process p = FelixJar.builder(work, store.env(), "restore-killed", "restore", "--config", config.toString(),
                    "--shard", gone).start();
            // Mostly late in the run, where the manifest is written, some after its end.
            Thread.sleep(runMillis / 2 + random.nextInt(runMillis * 3 / 4));
            p.destroyForcibly(); // SIGKILL
            p.waitFor();
            if (Files.exists(dir.resolve("offload.manifest"))) {
                String shown = ok(FelixJar.inside(work, Map.of(), "manifest-killed", "manifest", "show", "--shard-dir",
                        dir.toString(), "--json")).out();
                assertThat(shown).as("a whole manifest").isEqualTo(manifest);
                whole++;
                removeTree(dir);
            } else {
                none++;
            }
        }
        System.out.printf("restore (%d ms a run) SIGKILLed 8 times on %s: %d left a whole manifest, %d none%n",
                runMillis, kind, whole, none);

        Files.createDirectories(dir); // what a restore killed before its manifest leaves: still missing
        FelixJar.Result restore = ok(FelixJar.inside(work, store.env(), "restore", "restore", "--config",
                config.toString(), "--all-missing", "--json"));
        JsonNode r = JSON.readTree(restore.out());
        assertThat(r.get("succeeded").asBoolean()).isTrue();
        assertThat(r.get("shards")).as("the legacy shard has no key under n1/").hasSize(1);
        assertThat(r.get("shards").get(0).get("entries_restored").asInt()).isEqualTo(entries.size());
        assertThat(ok(FelixJar.inside(work, Map.of(), "manifest-restored", "manifest", "show", "--shard-dir",
                dir.toString(), "--json")).out()).as("the same manifest, field for field").isEqualTo(manifest);
        assertThat(work.resolve("data").resolve(".offload-restore")).doesNotExist();

        // read serves the whole offloaded range at once, before any local segment exists again.
        List<String> back = records(work, store, gone, "read-restored");
        assertThat(back).hasSize((int) last + 1);
        assertThat(back).isEqualTo(written.subList(0, (int) last + 1));

        // So does the daemon's /read.
        Path daemonConfig = work.resolve("daemon.yaml");
        Files.writeString(daemonConfig, Files.readString(config) + String.join("\n",
                "offload.schedule: 'off'", "retention.schedule: 'off'", "scrub.schedule: 'off'", "http.port: 0", ""),
                StandardCharsets.UTF_8);
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, store.env(), daemonConfig)) {
            String served = get(daemon.base + "/read?shard=" + gone + "&from=0&max=" + (last + 1));
            List<String> lines = new ArrayList<>();
            for (String line : served.split("\n")) {
                if (!line.isBlank()) {
                    lines.add(line.replace(",\"source\":\"remote\"", ""));
                }
            }
            assertThat(lines).isEqualTo(written.subList(0, (int) last + 1));
            assertThat(daemon.terminate()).isZero();
        }

        // The old key form is found by name.
        FelixJar.Result restoreLegacy = ok(FelixJar.inside(work, store.env(), "restore-legacy", "restore", "--config",
                config.toString(), "--shard", legacy, "--json"));
        JsonNode rl = JSON.readTree(restoreLegacy.out()).get("shards").get(0);
        int legacyEntries = JSON.readTree(legacyManifest).get("entries").size();
        assertThat(rl.get("legacy_keys").asInt()).isEqualTo(legacyEntries);
        long legacyLast = JSON.readTree(legacyManifest).get("entries").get(legacyEntries - 1).get("last").asLong();
        assertThat(records(work, store, legacy, "read-legacy")).isEqualTo(writtenLegacy.subList(0, (int) legacyLast + 1));

        // A second restore never replaces what is there; the sweep now has nothing to hold.
        FelixJar.Result again = FelixJar.inside(work, store.env(), "restore-again", "restore", "--config",
                config.toString(), "--shard", gone);
        assertThat(again.exitCode()).isEqualTo(1);
        assertThat(again.out()).contains("never replaces");
        FelixJar.Result after = ok(FelixJar.inside(work, store.env(), "retention-after", "retention", "--config",
                config.toString(), "--json"));
        assertThat(JSON.readTree(after.out()).get("orphans").get("held")).isEmpty();
        assertThat(store.objects()).isEqualTo(before);
    }
}
