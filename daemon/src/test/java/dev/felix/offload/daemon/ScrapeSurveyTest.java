package dev.felix.offload.daemon;

import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.schedule.PassClock;
import dev.felix.offload.store.fs.FilesystemStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a {@code /metrics} scrape costs in manifest reads: each manifest decoded at most once by the
 * scrape's one survey (six gauges and the per-shard series read it), and not again by later surveys
 * while the file has not changed.
 */
class ScrapeSurveyTest {

    private static final int SHARDS = 40;

    @TempDir
    Path tmp;

    private static ManifestEntry entry(String shard, long segment) {
        long base = segment * 10;
        return new ManifestEntry(segment, base, base + 9, 1000, 1_700_000_000_000_000L + base,
                1_700_000_000_000_000L + base + 9, 7, "node-1/" + shard + "/" + String.format("%020d-%020d.segment", base,
                segment));
    }

    /** A shard with a manifest of three entries and no local segments, last changed a minute ago. */
    private static void shard(Path root, String name) throws Exception {
        Path dir = Files.createDirectories(root.resolve(name));
        List<ManifestEntry> entries = new ArrayList<>();
        for (long s = 0; s < 3; s++) {
            entries.add(entry(name, s));
        }
        Path temp = dir.resolve("manifest.tmp");
        Files.write(temp, ManifestCodec.encode(Manifest.of(entries)));
        Files.move(temp, ManifestStore.fileIn(dir), StandardCopyOption.ATOMIC_MOVE);
        FileTime minuteAgo = FileTime.from(Instant.now().minusSeconds(60));
        Files.setLastModifiedTime(ManifestStore.fileIn(dir), minuteAgo);
        Files.setLastModifiedTime(dir, minuteAgo);
    }

    @Test
    void aScrapeDecodesEachManifestAtMostOnceAndAnUnchangedOneNeverAgain() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        for (int i = 0; i < SHARDS; i++) {
            shard(root, String.format("acme_default_s%03d_0-0d3aed4b998d27%02d", i, i));
        }
        Map<String, String> values = new LinkedHashMap<>();
        values.put("data-dir", root.toString());
        values.put("store", Files.createDirectories(tmp.resolve("store")).toUri().toString());
        values.put("node-id", "node-1");
        values.put("http.port", "0");
        values.put("metrics.shards", "10");
        Daemon daemon = new Daemon(DaemonConfig.of(tmp.resolve("felix.yaml"), values),
                FilesystemStore.open(tmp.resolve("store")), Map.of(), PassClock.system(ZoneOffset.UTC));

        long before = ManifestStore.decodes();
        String first = daemon.metrics().scrape();
        assertThat(first).contains("felix_remote_segments " + (3.0 * SHARDS), "felix_remote_bytes " + (3000.0 * SHARDS));
        assertThat(ManifestStore.decodes() - before).as("manifests decoded by the first scrape").isLessThanOrEqualTo(SHARDS);
        assertThat(daemon.surveysTaken()).isEqualTo(1);

        // Past the survey's reuse time: a new survey (behind the scrape), but no manifest changed, so none
        // is decoded again.
        Thread.sleep(SurveyCache.REUSE_NANOS / 1_000_000 + 100);
        long second = ManifestStore.decodes();
        assertThat(daemon.metrics().scrape()).contains("felix_remote_segments " + (3.0 * SHARDS));
        awaitSurveys(daemon, 2);
        assertThat(ManifestStore.decodes() - second).as("manifests decoded by a later survey").isZero();

        // One manifest replaced (as the broker or a pass does): that one, and only it, is decoded again.
        String changed = String.format("acme_default_s%03d_0-0d3aed4b998d27%02d", 7, 7);
        Path dir = root.resolve(changed);
        Path temp = dir.resolve("manifest.tmp");
        Files.write(temp, ManifestCodec.encode(Manifest.of(List.of(entry(changed, 0)))));
        Files.setLastModifiedTime(temp, FileTime.from(Instant.now().minusSeconds(30)));
        Files.move(temp, ManifestStore.fileIn(dir), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.setLastModifiedTime(dir, FileTime.from(Instant.now().minusSeconds(30)));
        Thread.sleep(SurveyCache.REUSE_NANOS / 1_000_000 + 100);
        long third = ManifestStore.decodes();
        daemon.metrics().scrape(); // answered from the survey before; the next one runs behind it
        awaitSurveys(daemon, 3);
        assertThat(daemon.metrics().scrape()).contains("felix_remote_segments " + (3.0 * SHARDS - 2));
        assertThat(ManifestStore.decodes() - third).isEqualTo(1);
    }

    /** Waits for the survey a scrape began behind itself to end (a minute at most). */
    private static void awaitSurveys(Daemon daemon, long count) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (daemon.surveysTaken() < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(daemon.surveysTaken()).isEqualTo(count);
    }
}
