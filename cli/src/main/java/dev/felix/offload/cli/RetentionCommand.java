package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.daemon.DaemonConfig;
import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.retention.HeldShard;
import dev.felix.offload.retention.OrphanSweepReport;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.retention.RetentionPass;
import dev.felix.offload.retention.RetentionProblem;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.retention.ShardRetentionResult;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.root.RootLock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload retention --config FILE}: one retention pass (local and remote retention,
 * deleted streams, the orphan sweep) as the daemon runs it, for system cron or a Kubernetes CronJob.
 * Exit 0 when nothing failed, 1 when a shard, a deleted stream or the sweep failed or another
 * offloader holds the root, 2 on configuration errors.
 */
@Command(name = "retention", mixinStandardHelpOptions = true,
        description = {"Run one retention pass with the settings of a configuration file: local copies past "
                + "local.retention.* go (only those with a verified copy), remote copies past retention.* go, "
                + "deleted streams are finished, and orphans are swept (see docs/configuration.md)."})
final class RetentionCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The configuration file.")
    Path config;

    @Option(names = "--json", description = "Print the summary as one JSON object.")
    boolean json;

    @Option(names = "--full-sweep", description = "List the node's whole key prefix in this pass's orphan sweep, "
            + "whatever orphans.full-sweep-every says (between full sweeps only the keys of the root's journal of "
            + "pending writes are checked).")
    boolean fullSweep;

    @Option(names = "--take-over-node-id", description = "Replace another data root's claim on this node id in the "
            + "store; only once that root no longer runs (see docs/reliability.md).")
    boolean takeOver;

    @Override
    public Integer call() throws IOException {
        DaemonConfig c = ConfigOption.load(config);
        if (!Files.isDirectory(c.dataDir)) {
            throw new FelixOffload.UsageException(c.file + ": data-dir: no directory at " + c.dataDir);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        RetentionReport report;
        try (ObjectStore store = Stores.openExisting(c.store, c.file + ": store", c.dataDir, Stores.Use.WRITER)) {
            try {
                Stores.requireBucket(store, c.file + ": store", new DataRoot(c.dataDir), c.environment(FelixOffload.environment(spec)),
                        c.retentionPassSettings().keyPrefix());
            } catch (dev.felix.offload.store.StoreException e) {
                // The pass's first store failure, met before it wrote anything: this command's exit 1.
                err.println("felix-offload: store " + store.describe() + " (" + c.file + ": store): " + e.getMessage());
                err.flush();
                return FelixOffload.EXIT_CORRUPT;
            }
            dev.felix.offload.retention.RetentionPassSettings settings = c.retentionPassSettings();
            settings = settings.withOrphanSweep(settings.orphanSweep().withFullSweep(fullSweep));
            report = new RetentionPass(new DataRoot(c.dataDir), store, c.rules, settings,
                    Clock.systemUTC(), c.environment(FelixOffload.environment(spec)), RetentionHook.none())
                    .checkingClaim(new dev.felix.offload.root.NodeClaimCheck.Policy(c.file + ": store", takeOver))
                    .run(StopSignal.never());
        } catch (dev.felix.offload.root.NodeClaimCheck.StoreFailedException | RootLock.HeldException e) {
            // A store failure is this command's exit 1, as it is when an upload or delete fails.
            return FelixOffload.failedBeforePass(err, e);
        }
        if (json) {
            writeJson(out, report);
        } else {
            writeText(out, report);
        }
        out.flush();
        return report.succeeded() ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
    }

    static void writeText(PrintWriter out, RetentionReport r) {
        out.printf("retention as node %s in %.1f s%n", r.nodeId(), r.elapsed().toNanos() / 1e9);
        out.printf("  local: %d segments (%s) removed%n", r.localSegmentsDeleted(), Bytes.human(r.localBytesDeleted()));
        out.printf("  remote: %d segments (%s) expired, %d objects deleted%s%n", r.remoteSegmentsDeleted(),
                Bytes.human(r.remoteBytesDeleted()), r.remoteObjectsDeleted(), r.remoteObjectsKept() == 0 ? ""
                        : ", " + r.remoteObjectsKept() + " kept (another shard's, outside the shard's own prefix, or "
                        + "keys without a node id, which other replicas may name: see `felix-offload legacy-keys`)");
        out.printf("  deleted streams: %d directories finished%n", r.deletedStreamDirectoriesFinished());
        r.orphanSweep().ifPresent(o -> out.printf("  orphans under %s: %d found, %d past the grace period, %d deleted, "
                        + "%d incomplete uploads aborted%s%n", o.prefix(), o.foundCount(), o.eligible().size(),
                o.deletedCount(), o.abortedUploads().size(), o.dryRun() ? " (dry run)" : ""));
        r.orphanSweep().filter(o -> !o.sweep().isEmpty()).ifPresent(o -> out.printf("  orphan sweep by %s%n", o.sweep()));
        r.orphanSweep().ifPresent(o -> o.held().forEach(h -> out.printf("  %s %s: %d objects (%s) kept, none deleted: %s%n",
                h.reason().label(), h.shard(), h.objects(), Bytes.human(h.bytes()), h.detail())));
        // why local segments past a limit stay (not offloaded yet, a copy that could not be proven, ...)
        r.shards().forEach(s -> s.local().blockedBy().ifPresent(b -> out.printf(
                "  %s: local segments kept: %s%n", s.shard(), b.label())));
        r.uncertainStreams().forEach((shard, why) -> out.printf("  %s: %s%n", shard, why));
        r.failureList().stream().filter(f -> f.site() != RetentionReport.Failure.Site.HELD_BY_SWEEP) // its line is above
                .forEach(f -> out.printf("  %s: %s%n", f.where(), f.why()));
        out.println(r.succeeded() ? "retention done" : "retention failed in places");
    }

    static void writeJson(PrintWriter out, RetentionReport r) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeStringField("node_id", r.nodeId());
            g.writeBooleanField("succeeded", r.succeeded());
            g.writeBooleanField("stopped", r.stopped());
            g.writeNumberField("local_segments_deleted", r.localSegmentsDeleted());
            g.writeNumberField("local_bytes_deleted", r.localBytesDeleted());
            g.writeNumberField("remote_segments_deleted", r.remoteSegmentsDeleted());
            g.writeNumberField("remote_bytes_deleted", r.remoteBytesDeleted());
            g.writeNumberField("remote_objects_deleted", r.remoteObjectsDeleted());
            g.writeNumberField("remote_objects_kept", r.remoteObjectsKept());
            g.writeNumberField("deleted_stream_directories_finished", r.deletedStreamDirectoriesFinished());
            g.writeArrayFieldStart("shards");
            for (ShardRetentionResult s : r.shards()) {
                g.writeStartObject();
                g.writeStringField("dir", s.shard());
                g.writeNumberField("local_segments_removed", s.local().removedSegments().size());
                g.writeNumberField("local_bytes_after", s.local().localBytesAfter());
                g.writeNumberField("remote_segments_expired", s.remote().expiredSegments().size());
                g.writeNumberField("total_bytes_after", s.remote().totalBytesAfter());
                if (!s.remote().objectsKept().isEmpty()) {
                    // why each object of an expired entry stayed (the first hundred; the total is above)
                    g.writeObjectFieldStart("objects_kept");
                    int written = 0;
                    for (Map.Entry<String, dev.felix.offload.root.KeyOwnership.Refusal> e
                            : s.remote().objectsKept().entrySet()) {
                        if (written++ == 100) {
                            break;
                        }
                        g.writeStringField(e.getKey(), e.getValue().label());
                    }
                    g.writeEndObject();
                }
                if (s.local().blockedBy().isPresent()) {
                    g.writeStringField("local_blocked_by", s.local().blockedBy().get().label());
                }
                if (s.remote().blockedBy().isPresent()) {
                    g.writeStringField("remote_blocked_by", s.remote().blockedBy().get().label());
                }
                if (s.failure() != null) {
                    g.writeStringField("failure", s.failure());
                }
                if (!s.problems().isEmpty()) {
                    g.writeArrayFieldStart("problems");
                    for (RetentionProblem p : s.problems()) {
                        g.writeStartObject();
                        g.writeStringField("kind", p.kind().label());
                        g.writeNumberField("segment", p.segment());
                        if (p.byteAt() >= 0) {
                            g.writeNumberField("byte", p.byteAt());
                        }
                        g.writeStringField("detail", p.detail());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            if (r.orphanSweep().isPresent()) {
                OrphanSweepReport o = r.orphanSweep().get();
                g.writeObjectFieldStart("orphans");
                g.writeStringField("prefix", o.prefix());
                g.writeBooleanField("dry_run", o.dryRun());
                g.writeStringField("sweep", o.sweep());
                writeStrings(g, "found", o.found());
                writeStrings(g, "eligible", o.eligible());
                writeStrings(g, "deleted", o.deleted());
                writeStrings(g, "waiting", o.waiting());
                writeStrings(g, "aborted_uploads", o.abortedUploads());
                writeStrings(g, "problems", o.problems());
                g.writeArrayFieldStart("held");
                for (HeldShard h : o.held()) {
                    g.writeStartObject();
                    g.writeStringField("kind", h.reason().label());
                    g.writeStringField("shard", h.shard());
                    g.writeNumberField("objects", h.objects());
                    if (!h.keys().isEmpty()) {
                        writeStrings(g, "keys", h.keys());
                    }
                    if (h.span() != null) {
                        Json.u64(g, "first_base", h.span().firstBase());
                        Json.u64(g, "last_base", h.span().lastBase());
                    }
                    g.writeNumberField("bytes", h.bytes());
                    g.writeStringField("detail", h.detail());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeObjectFieldStart("uncertain_streams");
            for (Map.Entry<String, String> e : r.uncertainStreams().entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeObjectFieldStart("failures");
            for (Map.Entry<String, String> e : r.failures().entrySet()) {
                g.writeStringField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeNumberField("elapsed_ms", r.elapsed().toMillis());
            g.writeEndObject();
        }
        out.println();
    }

    private static void writeStrings(JsonGenerator g, String field, java.util.List<String> values) throws IOException {
        g.writeArrayFieldStart(field);
        for (String v : values) {
            g.writeString(v);
        }
        g.writeEndArray();
    }
}
