package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.daemon.ConfigValues;
import dev.felix.offload.daemon.DaemonConfig;
import dev.felix.offload.daemon.Json;
import dev.felix.offload.daemon.ReplicaCommit;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.pass.KeyCollision;
import dev.felix.offload.copy.LocalRetention;
import dev.felix.offload.root.NodeClaimCheck;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.root.RootLock;
import dev.felix.offload.pass.SegmentUpload;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.copy.VerifyMode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload offload}: one offload pass over a data root. Exit 0 when every eligible segment
 * was offloaded, 1 otherwise (a corrupt segment, a store failure, a key holding another object, another
 * offloader running), 2 on
 * usage errors and when the store's node claim refuses this root (another root holds the node id, or
 * the store does not hold this root's objects; see {@link NodeClaimCheck}).
 */
@Command(name = "offload", mixinStandardHelpOptions = true,
        description = {"Run one offload pass: copy sealed segments to the store, verify them, record them in "
                + "each shard's offload.manifest, then unlink local copies as local retention allows.",
                "Remote credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the "
                        + "AWS SDK's default chain."})
final class OffloadCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Take data-dir, store, node-id and the offload.* settings from this configuration file "
                    + "(instead of --data-dir, --store, --verify, --parallelism, --bandwidth and --max-bytes-in-flight); "
                    + "local copies are then "
                    + "left to the retention command's local.retention.* settings unless a --keep option is given.")
    Path config;

    @Option(names = "--data-dir", paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--store", paramLabel = "URI",
            description = "file:///path, s3://bucket[/prefix]?endpoint=URL&region=R&path-style=true, or minio://bucket[/prefix]?endpoint=URL")
    String store;

    static final class Keep {
        @Option(names = "--keep-local-segments", paramLabel = "N",
                description = "Unlink verified segments beyond the newest N (the active one counts).")
        Integer segments;

        @Option(names = "--keep-local-bytes", paramLabel = "BYTES", converter = ByteOptions.Count.class,
                description = "Unlink verified segments beyond the newest ones that fit in BYTES, with a unit as in "
                        + "the configuration file (512MiB, 2GiB) or without.")
        Long bytes;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Keep keep;

    @Option(names = "--verify", paramLabel = "MODE",
            description = "auto (default), server-checksum, read-back or none.")
    String verify;

    @Option(names = "--parallelism", description = "Shards offloaded at once, 1 to 1024 as offload.parallelism (default "
            + "2); within a shard several segments upload at once, under --max-bytes-in-flight.")
    Integer parallelism;

    @Option(names = "--max-bytes-in-flight", paramLabel = "BYTES", converter = ByteCount.class,
            description = "Bytes of segments uploaded and verified at once, over all shards, with a unit as in the "
                    + "configuration file (256MiB, 1GiB); default 256MiB, at least 1MiB. A larger segment still goes, alone.")
    Long maxBytesInFlight;

    @Option(names = "--bandwidth", paramLabel = "BYTES_PER_SECOND", converter = ByteRate.class,
            description = "Upload limit in bytes per second, with a unit as in the configuration file "
                    + "(100MiB, 50MB, 512KiB) or without; 0 (default) for none.")
    Long bandwidth;

    /** A byte count with the configuration file's units (ConfigValues.bytes), at least 0. */
    static final class ByteRate implements picocli.CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            Long n = ConfigValues.bytes(text);
            if (n == null || n < 0) {
                throw new picocli.CommandLine.TypeConversionException("expected a number of bytes per second, "
                        + "optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), got '" + text + "'");
            }
            return n;
        }
    }

    /** A byte count with the configuration file's units (ConfigValues.bytes), at least 1 MiB. */
    static final class ByteCount implements picocli.CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            Long n = ConfigValues.bytes(text);
            if (n == null || n < OffloadSettings.MIN_BYTES_IN_FLIGHT) {
                throw new picocli.CommandLine.TypeConversionException("expected at least 1MiB, as a number of bytes "
                        + "optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), got '" + text + "'");
            }
            return n;
        }
    }

    @Option(names = "--unlink-settle", paramLabel = "DURATION", converter = SettleTime.class,
            description = "How long a segment's manifest entry stands, and is then read back from disk, before the "
                    + "segment is unlinked (default 5s; the broker's own rewrite of offload.manifest must take less). "
                    + "Before it exits the command waits for the entries it recorded, at most this long.")
    java.time.Duration unlinkSettle;

    /** A duration with the configuration file's units (ConfigValues.duration), at most an hour. */
    static final class SettleTime implements picocli.CommandLine.ITypeConverter<java.time.Duration> {
        @Override
        public java.time.Duration convert(String text) {
            java.time.Duration d = ConfigValues.duration(text);
            if (d == null || d.isNegative() || d.compareTo(java.time.Duration.ofHours(1)) > 0) {
                throw new picocli.CommandLine.TypeConversionException("expected a duration from 0s to 1h (500ms, 5s, "
                        + "2m), got '" + text + "'");
            }
            return d;
        }
    }

    @Option(names = "--json", description = "Print the summary as one JSON object.")
    boolean json;

    @Option(names = "--probe-store", description = "Probe the store's server now (what it does with checksums and "
            + "conditional puts), even where findings of an earlier probe are kept in the data root; see "
            + "docs/configuration.md, probe-max-age.")
    boolean probeStore;

    @Option(names = "--take-over-node-id", description = "Replace another data root's claim on this node id in the "
            + "store (its volume moved here, or a restore after a lost disk); only once that root no longer runs. "
            + "See docs/reliability.md, 'One node id, one data root'.")
    boolean takeOver;

    @Override
    public Integer call() throws IOException {
        Map<String, String> env = FelixOffload.environment(spec);
        OffloadSettings settings;
        String storeSetting = "--store";
        if (config != null) {
            if (dataDir != null || store != null || verify != null || parallelism != null || bandwidth != null
                    || maxBytesInFlight != null) {
                throw new FelixOffload.UsageException("with --config, --data-dir, --store, --verify, --parallelism, "
                        + "--bandwidth and --max-bytes-in-flight come from the file");
            }
            DaemonConfig c = ConfigOption.load(config);
            dataDir = c.dataDir;
            store = c.store;
            storeSetting = c.file + ": store";
            env = c.environment(env);
            settings = c.offloadSettings();
            if (keep != null) {
                settings = settings.withLocalRetention(retention());
            }
        } else {
            if (dataDir == null || store == null) {
                throw new FelixOffload.UsageException("give --data-dir and --store, or --config");
            }
            if (parallelism != null && (parallelism < 1 || parallelism > OffloadSettings.MAX_PARALLELISM)) {
                // the bound of the file's offload.parallelism, in its words
                throw new FelixOffload.UsageException("--parallelism: expected an integer from 1 to "
                        + OffloadSettings.MAX_PARALLELISM + ", got '" + parallelism + "'");
            }
            try {
                settings = OffloadSettings.defaults().withVerify(VerifyMode.parse(verify == null ? "auto" : verify))
                        .withLocalRetention(retention()).withParallelism(parallelism == null ? 2 : parallelism)
                        .withUploadBytesPerSecond(bandwidth == null ? 0 : bandwidth)
                        .withMaxBytesInFlight(maxBytesInFlight == null ? OffloadSettings.DEFAULT_MAX_BYTES_IN_FLIGHT
                                : maxBytesInFlight);
            } catch (IllegalArgumentException e) {
                throw new FelixOffload.UsageException(e.getMessage());
            }
        }
        if (unlinkSettle != null) {
            settings = settings.withUnlinkSettle(unlinkSettle);
        }
        // One run: it waits for the entries it recorded to settle, so it leaves local disk as asked.
        settings = settings.withAwaitSettle(true);
        if (!Files.isDirectory(dataDir)) {
            throw new FelixOffload.UsageException("no data root directory at " + dataDir);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        PassReport report;
        String uploads;
        // The bucket check is the store's first request (its client built for it), before anything is written;
        // the node claim check then runs while the pass reads its first segments (OffloadPass).
        try (ObjectStore objectStore = Stores.open(store, storeSetting, dataDir,
                probeStore ? Stores.Use.WRITER_PROBING : Stores.Use.WRITER)) {
            try {
                Stores.requireBucket(objectStore, storeSetting, new DataRoot(dataDir), env, settings.keyPrefix());
            } catch (dev.felix.offload.store.StoreException e) {
                // The pass's first store failure, met before it wrote anything: this command's exit 1.
                err.println("felix-offload: store " + objectStore.describe() + " (" + storeSetting + "): " + e.getMessage());
                err.flush();
                return FelixOffload.EXIT_CORRUPT;
            }
            ProgressListener progress = System.console() != null && !json ? new ProgressBar(err) : ProgressListener.none();
            report = new OffloadPass(new DataRoot(dataDir), objectStore, settings, StepHook.haltAtSystemProperty(),
                    env, ReplicaCommit::of).checkingClaim(new NodeClaimCheck.Policy(storeSetting, takeOver)).run(progress);
            uploads = objectStore.describeUploads().orElse(null);
        } catch (dev.felix.offload.root.NodeClaimCheck.StoreFailedException | RootLock.HeldException e) {
            // A store failure is this command's exit 1, as it is when an upload or delete fails.
            return FelixOffload.failedBeforePass(err, e);
        }
        if (json) {
            writeJson(out, report, uploads);
        } else {
            writeText(out, report, uploads);
        }
        out.flush();
        return report.complete() ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
    }

    private LocalRetention retention() {
        if (keep == null) {
            return new LocalRetention.KeepAll();
        }
        return keep.segments != null ? new LocalRetention.KeepSegments(keep.segments) : new LocalRetention.KeepBytes(keep.bytes);
    }

    private static Map<String, Integer> verifiedBy(PassReport report) {
        Map<String, Integer> counts = new TreeMap<>();
        for (ShardResult s : report.shards()) {
            for (SegmentUpload u : s.uploaded()) {
                counts.merge(u.verifiedBy().label(), 1, Integer::sum);
            }
        }
        return counts;
    }

    static void writeText(PrintWriter out, PassReport report, String uploads) {
        double seconds = Math.max(report.elapsed().toNanos() / 1e9, 1e-3);
        out.printf("offloaded %d segments (%s) from %d shards in %.1f s (%s/s) as node %s%n", report.segmentsUploaded(),
                Bytes.human(report.bytesUploaded()), report.shards().size(), seconds,
                Bytes.human((long) (report.bytesUploaded() / seconds)), report.nodeId());
        Map<String, Integer> verified = verifiedBy(report);
        if (!verified.isEmpty()) {
            StringBuilder line = new StringBuilder("  verified:");
            verified.forEach((how, n) -> line.append(' ').append(how).append(' ').append(n));
            out.println(line);
        }
        if (uploads != null) {
            out.printf("  sent: %s%n", uploads);
        }
        out.printf("  unlinked locally: %d segments%n", report.segmentsUnlinked());
        long settling = report.shards().stream().filter(s -> s.settling() != null).count();
        if (settling > 0) {
            // Not done over what local retention asked: say so, with when a later pass may unlink them.
            out.printf("  kept locally until their entries settle: %d %s (a later pass unlinks them)%n", settling,
                    settling == 1 ? "shard" : "shards");
        }
        if (!report.cacheShardsLeftAlone().isEmpty()) {
            out.printf("  left alone: %d cache and counter shards (%s)%n", report.cacheShardsLeftAlone().size(),
                    PassReport.CACHE_SHARDS_REASON);
        }
        for (String u : report.unreadable()) {
            out.printf("  not offloaded, could not be read: %s%n", u);
        }
        for (ShardResult s : report.shards()) {
            if (s.problem() != null) {
                out.printf("  %s: %s%n", s.shard(), s.problem());
            }
        }
        if (report.complete()) {
            out.println("every eligible segment is offloaded");
        } else if (!report.unreadable().isEmpty()) {
            // Never success over a skipped shard: what it holds was not even looked at.
            out.printf("some segments were not offloaded: %d %s could not be read%n", report.unreadable().size(),
                    report.unreadable().size() == 1 ? "name under the data root" : "names under the data root");
        } else {
            out.println("some segments were not offloaded");
        }
    }

    static void writeJson(PrintWriter out, PassReport report, String uploads) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeStringField("node_id", report.nodeId());
            g.writeBooleanField("complete", report.complete());
            g.writeNumberField("segments_uploaded", report.segmentsUploaded());
            g.writeNumberField("bytes_uploaded", report.bytesUploaded());
            g.writeNumberField("segments_unlinked", report.segmentsUnlinked());
            g.writeNumberField("elapsed_ms", report.elapsed().toMillis());
            if (uploads != null) {
                g.writeStringField("sent", uploads);
            }
            g.writeObjectFieldStart("cache_shards_left_alone");
            g.writeNumberField("count", report.cacheShardsLeftAlone().size());
            g.writeStringField("reason", PassReport.CACHE_SHARDS_REASON);
            g.writeArrayFieldStart("shards");
            for (String name : report.cacheShardsLeftAlone()) {
                g.writeString(name);
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeArrayFieldStart("unreadable");
            for (String u : report.unreadable()) {
                g.writeString(u);
            }
            g.writeEndArray();
            g.writeObjectFieldStart("verified_by");
            for (Map.Entry<String, Integer> e : verifiedBy(report).entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeArrayFieldStart("shards");
            for (ShardResult s : report.shards()) {
                g.writeStartObject();
                g.writeStringField("dir", s.shard());
                g.writeBooleanField("complete", s.complete());
                g.writeArrayFieldStart("uploaded");
                for (SegmentUpload u : s.uploaded()) {
                    g.writeStartObject();
                    Json.u64(g, "segment", u.segmentId());
                    Json.u64(g, "base", u.baseOffset());
                    Json.u64(g, "last", u.lastOffset());
                    g.writeNumberField("bytes", u.bytes());
                    g.writeStringField("crc32", Json.crc32(u.crc32()));
                    g.writeStringField("key", u.key());
                    g.writeStringField("verified_by", u.verifiedBy().label());
                    g.writeNumberField("attempts", u.attempts());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeArrayFieldStart("unlinked");
                for (long id : s.unlinked()) {
                    g.writeNumber(Long.toUnsignedString(id));
                }
                g.writeEndArray();
                g.writeNumberField("pending", s.pending());
                if (s.settling() != null) {
                    g.writeStringField("settling_until", s.settling().toString());
                }
                if (s.problem() != null) {
                    g.writeStringField("problem", s.problem());
                }
                if (s.collision() != null) {
                    KeyCollision c = s.collision();
                    g.writeObjectFieldStart("collision");
                    Json.u64(g, "segment", c.segmentId());
                    g.writeStringField("key", c.key());
                    g.writeNumberField("found_bytes", c.foundSize());
                    g.writeStringField("found_crc32", Json.crc32(c.foundCrc32()));
                    g.writeNumberField("expected_bytes", c.expectedSize());
                    g.writeStringField("expected_crc32", Json.crc32(c.expectedCrc32()));
                    g.writeEndObject();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        out.println();
    }
}
