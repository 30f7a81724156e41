package dev.felix.offload.retention;

import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.fs.FilesystemStore;
import dev.felix.offload.root.SegmentKeys;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import static dev.felix.offload.retention.RetentionSettings.UNLIMITED;
import static org.assertj.core.api.Assertions.assertThat;

/** Whatever the limits and the time, retention keeps the shard whole and within its limits. */
class RetentionPropertiesTest {

    @Property(tries = 40)
    void retentionKeepsTheShardReadableAndWithinItsLimits(@ForAll("bytes") long localBytes, @ForAll("ms") long localMs,
                                                          @ForAll("bytes") long bytes, @ForAll("ms") long ms,
                                                          @ForAll @IntRange(min = 0, max = 600) int minutesLater,
                                                          @ForAll @IntRange(min = 1, max = 5) int batchSize)
            throws Exception {
        Path tmp = Files.createTempDirectory("retention-property");
        try (FilesystemStore store = FilesystemStore.open(Files.createDirectories(tmp.resolve("store")))) {
            Path root = Files.createDirectories(tmp.resolve("root"));
            Path shard = TestData.shardOf(root, "orders", 0);
            List<Record> written = TestData.write(shard, 200, Duration.ofMinutes(1), minutesLater);
            TestData.offload(root, store);
            RetentionSettings settings = new RetentionSettings(localBytes, localMs, bytes, ms);
            Instant now = TestData.FIRST_RECORD.plus(Duration.ofMinutes(minutesLater));

            ShardRetentionResult r = new ShardRetention(shard, store, settings, Clock.fixed(now, ZoneOffset.UTC),
                    RetentionHook.none(), batchSize, TestData.ownership(), TestData.live(shard)).run(StopSignal.never());

            assertThat(r.failure()).isNull();
            assertThat(r.local().blockedBy()).as("every sealed segment is offloaded").isEmpty();
            assertThat(r.remote().blockedBy()).as("local retention went first").isEmpty();
            Manifest manifest = ManifestStore.read(shard);
            List<SegmentFile> local = SegmentFile.list(shard);
            long localTotal = TestData.localBytes(shard);

            if (settings.effectiveLocalBytes() != UNLIMITED) {
                assertThat(localTotal <= settings.effectiveLocalBytes() || local.size() == 1)
                        .as("local bytes %d within %d", localTotal, settings.effectiveLocalBytes()).isTrue();
            }
            if (settings.effectiveLocalMs() != UNLIMITED) {
                long cutoff = TestData.micros(now.minusMillis(settings.effectiveLocalMs()));
                for (ManifestEntry e : manifest.entries()) {
                    if (local.stream().anyMatch(f -> f.id() == e.segmentId())) {
                        assertThat(e.newestTimestampMicros()).as("local segment %d", e.segmentId())
                                .isGreaterThanOrEqualTo(cutoff);
                    }
                }
            }
            if (bytes != UNLIMITED) {
                assertThat(r.remote().totalBytesAfter() <= bytes || manifest.isEmpty()).isTrue();
            }
            if (ms != UNLIMITED) {
                long cutoff = TestData.micros(now.minusMillis(ms));
                assertThat(manifest.entries()).allSatisfy(e -> assertThat(e.newestTimestampMicros())
                        .isGreaterThanOrEqualTo(cutoff));
            }

            // Exactly what the manifest names is in the store: nothing expired is left, nothing kept is gone.
            List<String> named = new ArrayList<>();
            for (ManifestEntry e : manifest.entries()) {
                named.addAll(TestData.storedKeysOf(e));
            }
            assertThat(TestData.keys(store, new SegmentKeys("", TestData.NODE).nodePrefix()))
                    .containsExactlyInAnyOrderElementsOf(named);
            TestData.assertLocalLogOpens(shard, written);
            long first = manifest.oldestEntry().map(ManifestEntry::baseOffset).orElseGet(() -> {
                try (var log = dev.felix.offload.log.ShardLog.open(shard, TestData.SMALL_SEGMENTS)) {
                    return log.firstOffset();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // No gap: the remote copies reach up to the local log.
            TestData.assertReadsExactlyFrom(shard, written, first, store);
        } finally {
            try (var paths = Files.walk(tmp)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Provide
    Arbitrary<Long> bytes() {
        return Arbitraries.oneOf(Arbitraries.just(UNLIMITED), Arbitraries.longs().between(0, 120_000));
    }

    @Provide
    Arbitrary<Long> ms() {
        return Arbitraries.oneOf(Arbitraries.just(UNLIMITED), Arbitraries.longs().between(0, Duration.ofHours(8).toMillis()));
    }
}
