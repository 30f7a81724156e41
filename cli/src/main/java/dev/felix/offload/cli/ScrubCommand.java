package dev.felix.offload.cli;

import dev.felix.offload.daemon.ConfigValues;
import dev.felix.offload.daemon.DaemonConfig;
import dev.felix.offload.daemon.Json;
import dev.felix.offload.scrub.Scrub;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
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
 * {@code felix-offload scrub}: checks every manifest entry against the store and lists orphans.
 * Exit 0 when nothing is wrong, 1 on any anomaly, 2 on usage errors, 3 when the store cannot be used.
 */
@Command(name = "scrub", mixinStandardHelpOptions = true,
        description = {"Check that every object a manifest names exists with the manifest's size and CRC32 (the "
                + "store's stored checksum where it keeps one, else a rate-limited full read), and list orphans: "
                + "objects under this node's prefix that no manifest names. Reads only.",
                "Anomalies: missing, size-mismatch, crc-mismatch, orphan, foreign-key (an entry naming a key outside its "
                        + "own shard's prefix; key_shard in --json names the shard it lies in), missing-shard, unrecorded-history, "
                        + "unreadable."})
final class ScrubCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Take data-dir, store, node-id and scrub.read-bandwidth from this configuration file.")
    Path config;

    @Option(names = "--data-dir", paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--store", paramLabel = "URI", description = "The store, as for offload.")
    String store;

    @Option(names = "--read-bandwidth", paramLabel = "BYTES_PER_SECOND",
            description = "Limit of full reads (default 32MiB a second; 0 for none).")
    String readBandwidth;

    @Option(names = "--full", description = "Read every object in full, even where the store answers a stored "
            + "checksum (that proves what the server received, not that the bytes are still whole).")
    boolean full;

    @Option(names = "--json", description = "Print the report as one JSON object.")
    boolean json;

    @Option(names = "--concurrency", paramLabel = "N",
            description = "Entries checked at once, 1 to 64 (default 4, or scrub.concurrency of --config).")
    Integer concurrency;

    @Option(names = "--request-budget", paramLabel = "N",
            description = "At most N requests for the checks (a HEAD an entry, a GET for each 8 MiB read in full); "
                    + "when the next entry would not fit the run stops checking, says what share it covered and where "
                    + "the next run starts (--start-at). 0 for none (default, or scrub.request-budget of --config).")
    Long requestBudget;

    @Option(names = "--start-at", paramLabel = "SHARD@OFFSET",
            description = "Start at this entry (shards by name, entries by base offset) and go round to it: where an "
                    + "earlier run's budget ran out, as it printed.")
    String startAt;

    @Override
    public Integer call() throws IOException, InterruptedException {
        RootChoice choice = RootChoice.of(config, dataDir, store, FelixOffload.environment(spec));
        Path root = choice.root();
        String uri = choice.storeUri();
        String storeSetting = choice.storeSetting();
        Map<String, String> env = choice.env();
        long bandwidth = choice.config().map(c -> c.scrubReadBandwidth).orElse(DaemonConfig.DEFAULT_SCRUB_READ_BANDWIDTH);
        if (readBandwidth != null) {
            Long v = ConfigValues.bytes(readBandwidth);
            if (v == null || v < 0) {
                throw new FelixOffload.UsageException("--read-bandwidth must be a number of bytes >= 0, got " + readBandwidth);
            }
            bandwidth = v;
        }
        int checksAtOnce = concurrency != null ? concurrency
                : choice.config().map(c -> c.scrubConcurrency).orElse(Scrub.Limits.DEFAULT_CONCURRENCY);
        if (checksAtOnce < 1 || checksAtOnce > Scrub.Limits.MAX_CONCURRENCY) {
            throw new FelixOffload.UsageException("--concurrency must be from 1 to " + Scrub.Limits.MAX_CONCURRENCY
                    + ", got " + checksAtOnce);
        }
        long budget = requestBudget != null ? requestBudget : choice.config().map(c -> c.scrubRequestBudget).orElse(0L);
        if (budget < 0) {
            throw new FelixOffload.UsageException("--request-budget must be a number of requests >= 0 (0 for none), got "
                    + budget);
        }
        java.util.Optional<Scrub.Cursor> start = java.util.Optional.empty();
        if (startAt != null) {
            start = Scrub.Cursor.parse(startAt);
            if (start.isEmpty()) {
                throw new FelixOffload.UsageException("--start-at must be SHARD@OFFSET as a run printed it, got '"
                        + startAt + "'");
            }
        }
        if (!Files.isDirectory(root)) {
            throw new FelixOffload.UsageException("no data root directory at " + root);
        }
        Scrub.Report report;
        try (ObjectStore objectStore = Stores.openExisting(uri, storeSetting, root, Stores.Use.READER)) {
            Stores.requireBucket(objectStore, storeSetting, new DataRoot(root), env, "");
            report = new Scrub(new DataRoot(root), objectStore, env, bandwidth, Clock.systemUTC(),
                    full ? Scrub.Share.ALL : Scrub.Share.NONE, new Scrub.Limits(checksAtOnce, budget, start))
                    .run(StopSignal.never(), null);
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            writeJson(out, report);
        } else {
            writeText(out, report);
        }
        out.flush();
        return report.clean() ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
    }

    static void writeText(PrintWriter out, Scrub.Report r) {
        for (Scrub.Anomaly a : r.anomalies()) {
            StringBuilder line = new StringBuilder(a.kind().label()).append(" shard=").append(a.shard());
            a.segmentId().ifPresent(id -> line.append(" segment=").append(Long.toUnsignedString(id)));
            a.key().ifPresent(key -> line.append(" key=").append(key));
            a.byteAt().ifPresent(at -> line.append(" byte=").append(at));
            out.println(line.append(": ").append(a.detail()));
        }
        for (String note : r.notes()) {
            out.println("note: " + note);
        }
        StringBuilder by = new StringBuilder();
        r.checkedBy().forEach((how, n) -> by.append(by.length() == 0 ? " (" : ", ").append(how).append(' ').append(n));
        if (by.length() > 0) {
            by.append(')');
        }
        String of = r.budgetSpent() ? String.format(java.util.Locale.ROOT, " of %d (%.1f%%)", r.entriesTotal(),
                100 * r.covered()) : "";
        out.printf("checked %d%s entries in %d shards%s%s in %.1f s (%d requests): %s%n", r.entriesChecked(), of,
                r.shards(), by, r.orphansListed() ? " and listed " + r.nodePrefix() + " for orphans" : "",
                r.elapsed().toNanos() / 1e9, r.requests(), r.clean() ? "no anomalies" : r.anomalies().size() + " anomalies");
        r.resumeAt().ifPresent(c -> out.println("next: --start-at " + c.text()));
    }

    static void writeJson(PrintWriter out, Scrub.Report r) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeBooleanField("clean", r.clean());
            g.writeNumberField("shards", r.shards());
            g.writeNumberField("entries_checked", r.entriesChecked());
            g.writeNumberField("entries_total", r.entriesTotal());
            g.writeNumberField("covered", r.covered());
            g.writeNumberField("requests", r.requests());
            if (r.requestBudget() > 0) {
                g.writeNumberField("request_budget", r.requestBudget());
            }
            if (r.resumeAt().isPresent()) {
                g.writeObjectFieldStart("next_start");
                g.writeStringField("shard", r.resumeAt().get().shard());
                Json.u64(g, "base_offset", r.resumeAt().get().baseOffset());
                g.writeStringField("start_at", r.resumeAt().get().text());
                g.writeEndObject();
            }
            g.writeObjectFieldStart("checked_by");
            for (Map.Entry<String, Integer> e : r.checkedBy().entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeBooleanField("orphans_listed", r.orphansListed());
            if (r.nodePrefix() != null) {
                g.writeStringField("node_prefix", r.nodePrefix());
            }
            g.writeArrayFieldStart("anomalies");
            for (Scrub.Anomaly a : r.anomalies()) {
                g.writeStartObject();
                g.writeStringField("kind", a.kind().label());
                g.writeStringField("shard", a.shard());
                if (a.segmentId().isPresent()) {
                    Json.u64(g, "segment", a.segmentId().getAsLong());
                }
                if (a.key().isPresent()) {
                    g.writeStringField("key", a.key().get());
                }
                if (a.byteAt().isPresent()) {
                    g.writeNumberField("byte", a.byteAt().getAsLong());
                }
                g.writeStringField("detail", a.detail());
                if (a.keyShard().isPresent()) {
                    g.writeStringField("key_shard", a.keyShard().get());
                }
                if (a.held().isPresent()) {
                    g.writeNumberField("objects", a.held().get().objects());
                    g.writeNumberField("bytes", a.held().get().bytes());
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("notes");
            for (String n : r.notes()) {
                g.writeString(n);
            }
            g.writeEndArray();
            g.writeBooleanField("stopped", r.stopped());
            g.writeNumberField("elapsed_ms", r.elapsed().toMillis());
            g.writeEndObject();
        }
        out.println();
    }
}
