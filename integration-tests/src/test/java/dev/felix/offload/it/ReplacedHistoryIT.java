package dev.felix.offload.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.root.RootLock;
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
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon serves a shard's remote range (its caches warm); the broker then resets the shard the
 * spec's way (the manifest's entries dropped first, then the log) and writes a new history of
 * records the same sizes as the old, which the daemon offloads under the same keys with the same
 * sizes. Every {@code /read} after that must answer the new records, never cached bytes of the old.
 */
class ReplacedHistoryIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final int RECORDS = 600;
    private static final long LOCAL_LIMIT = 40 * 1024;

    @TempDir
    Path work;

    @Test
    void afterAResetEveryReadAnswersTheNewHistory() throws Exception {
        Path root = Files.createDirectories(work.resolve("data"));
        Path store = Files.createDirectories(work.resolve("store"));
        String dir = new ShardKey("acme", "default", "reset", 0).directoryName();
        Path shard = root.resolve(dir);
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: data",
                "store: " + store.toUri(),
                "node-id: it-node",
                "offload.schedule: '* * * * * ?'",
                "retention.schedule: '* * * * * ?'",
                "local.retention.bytes: " + LOCAL_LIMIT,
                // the reset below rewrites the manifest with the root's lock held, so no rewrite meets an unlink:
                // entries need not stand 5 s before their local segments go
                "offload.unlink-settle: 0s",
                // the old history's objects are orphans once the broker drops their entries
                "orphans.grace: 0s",
                "http.port: 0",
                ""), StandardCharsets.UTF_8);
        ShardLogConfig logConfig = ShardLogConfig.defaults().withSegmentSizeBytes(16 * 1024).withFsyncPolicy(FsyncPolicy.none());

        List<byte[]> old;
        try (ShardLog log = ShardLog.open(shard, logConfig)) {
            old = append(log, 1);
        }
        try (FelixJar.Daemon daemon = FelixJar.Daemon.start(work, Map.of(), config)) {
            FelixJar.await("the old history is offloaded", Duration.ofSeconds(90), () -> remoteBelowLocalBase(shard) >= 3);
            List<ManifestEntry> oldEntries = ManifestStore.read(shard).entries();
            long served = readAndCompare(daemon, dir, shard, old);
            assertThat(served).as("records served from the store before the reset").isPositive();

            // The reset, with the root's lock held so that no pass runs across it (that race is another test's).
            try (RootLock lock = acquireBetweenPasses(root)) {
                ManifestStore.open(shard).save(Manifest.empty());
                try (Stream<Path> files = Files.list(shard)) {
                    for (Path f : files.filter(f -> !f.getFileName().toString().equals(ManifestStore.FILE_NAME)).toList()) {
                        Files.delete(f);
                    }
                }
            }
            List<byte[]> fresh;
            try (ShardLog log = ShardLog.open(shard, logConfig)) {
                fresh = append(log, 2);
            }
            FelixJar.await("the new history is offloaded under the old keys", Duration.ofSeconds(120), () -> {
                try {
                    List<ManifestEntry> now = ManifestStore.read(shard).entries();
                    return now.size() >= 3 && remoteBelowLocalBase(shard) >= 3
                            && now.get(0).objectKey().equals(oldEntries.get(0).objectKey())
                            && now.get(0).objectCrc32() != oldEntries.get(0).objectCrc32();
                } catch (Exception e) {
                    return false;
                }
            });
            List<ManifestEntry> newEntries = ManifestStore.read(shard).entries();
            assertThat(newEntries.get(0).sizeBytes()).as("same sizes, so only the bytes differ")
                    .isEqualTo(oldEntries.get(0).sizeBytes());
            assertThat(readAndCompare(daemon, dir, shard, fresh)).isPositive();
            assertThat(daemon.terminate()).as(daemon.stderr()).isZero();
        }
    }

    /**
     * The root's lock, taken between two of the daemon's passes: a pass runs every second and holds
     * the lock meanwhile, so an attempt that meets one waits for it to end and tries again.
     */
    private static RootLock acquireBetweenPasses(Path root) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                return RootLock.acquire(root);
            } catch (RootLock.HeldException held) {
                if (System.nanoTime() > deadline) {
                    throw held;
                }
                Thread.sleep(50);
            }
        }
    }

    /** Records of 200 bytes whose payloads depend on {@code seed}, at the same timestamps whatever the seed. */
    private static List<byte[]> append(ShardLog log, long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        List<byte[]> written = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            byte[] payload = new byte[200];
            random.nextBytes(payload);
            assertThat(log.append(1_767_225_600_000_000L + i * 1000L, payload)).isEqualTo(i);
            written.add(payload);
        }
        log.flush();
        return written;
    }

    /** Entries of the manifest below the shard's first local segment, i.e. readable only from the store. */
    private static int remoteBelowLocalBase(Path shard) {
        try {
            long localBase = new dev.felix.offload.log.ShardReader(shard).firstOffset().orElse(0);
            return (int) ManifestStore.read(shard).entries().stream().filter(e -> e.lastOffset() < localBase).count();
        } catch (Exception e) {
            return 0;
        }
    }

    /** Reads every record through {@code /read} and compares it with {@code expected}; answers how many came remote. */
    private static long readAndCompare(FelixJar.Daemon daemon, String dir, Path shard, List<byte[]> expected) throws Exception {
        String body = HTTP.send(HttpRequest.newBuilder(URI.create(daemon.base + "/read?shard=" + dir + "&from=0&max=" + RECORDS))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
        List<String> lines = body.lines().toList();
        assertThat(lines).as(body.length() > 500 ? body.substring(0, 500) : body).hasSize(RECORDS);
        long remote = 0;
        for (int i = 0; i < RECORDS; i++) {
            JsonNode r = JSON.readTree(lines.get(i));
            assertThat(r.get("offset").asLong()).isEqualTo(i);
            assertThat(Base64.getDecoder().decode(r.get("payload_base64").asText())).as("payload at offset %d (%s)", i,
                    r.get("source").asText()).isEqualTo(expected.get(i));
            remote += r.get("source").asText().equals("remote") ? 1 : 0;
        }
        return remote;
    }
}
