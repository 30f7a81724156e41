package dev.felix.offload.cli;

import dev.felix.offload.daemon.Json;
import dev.felix.offload.daemon.RecordLines;
import dev.felix.offload.scrub.ReaderClaimCheck;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload read}: records of a shard from an offset, locally or from the store below the
 * local base. The JSON lines are {@code dump --json}'s (without {@code position}, which a remote
 * read has no file for) plus {@code "source":"local|remote"}; raw is the records as the segments
 * store them, back to back, as the daemon's {@code /read} answers them (docs/read-api.md).
 * Exit 0 when records (or the end of the log) were read, 1 when the offset is trimmed, past the end of
 * the log, or the data is corrupt, 2 on usage errors, 3 on I/O or store errors.
 */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "Print a shard's records from an offset, reading from the store below the local base.")
final class ReadCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Take data-dir, store and node-id from this configuration file (as offload and scrub do).")
    Path config;

    @Option(names = "--data-dir", paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--store", paramLabel = "URI", description = "The store, as for offload.")
    String store;

    @Option(names = "--shard", required = true, paramLabel = "DIR", description = "The shard's name under the data root: its directory's name, or groups/DIR, dead-letters/DIR, caches/DIR.")
    String shard;

    @Option(names = "--from", required = true, paramLabel = "OFFSET", description = "The first offset to read.")
    String from;

    @Option(names = "--max-records", defaultValue = "100", description = "At most this many (default ${DEFAULT-VALUE}).")
    int maxRecords;

    @Option(names = "--json", description = "One JSON object per record (the same as --format json).")
    boolean jsonFlag;

    /** What a read prints. */
    enum Format { text, json, raw }

    @Option(names = "--format", paramLabel = "FORMAT", description = "text (default), json (one object a line) "
            + "or raw (the records' bytes exactly as stored, every checksum intact; stdout must not be a terminal).")
    Format format;

    private boolean json;

    @Override
    public Integer call() throws IOException {
        String storeSetting = "--store";
        java.util.Map<String, String> env = FelixOffload.environment(spec);
        if (config != null) {
            if (dataDir != null || store != null) {
                throw new FelixOffload.UsageException("give either --config or --data-dir and --store, not both");
            }
            dev.felix.offload.daemon.DaemonConfig c = ConfigOption.load(config);
            dataDir = c.dataDir;
            store = c.store;
            storeSetting = c.file + ": store";
            env = c.environment(env);
        } else if (dataDir == null || store == null) {
            throw new FelixOffload.UsageException("give --data-dir and --store, or --config");
        }
        if (!Files.isDirectory(dataDir)) {
            throw new FelixOffload.UsageException("no data root directory at " + dataDir);
        }
        // Only a shard the data root lists, by its name there (dead-letters/<dir>): not another path,
        // not the root itself (an empty name), not a dot-directory, not a directory without segments.
        DataRoot dataRoot = new DataRoot(dataDir);
        java.util.Optional<DataRoot.Shard> found = dataRoot.shard(shard);
        if (found.isEmpty()) {
            dataRoot.requireReadable(shard); // a name the root could not read is an I/O error (exit 3), not unknown
            throw new FelixOffload.UsageException("no shard directory '" + shard + "' under " + dataDir);
        }
        Path dir = found.get().directory();
        if (maxRecords < 1) {
            throw new FelixOffload.UsageException("--max-records must be at least 1");
        }
        long offset;
        try {
            offset = Long.parseUnsignedLong(from);
        } catch (NumberFormatException e) {
            throw new FelixOffload.UsageException("--from must be an unsigned 64-bit offset, got " + from);
        }
        if (jsonFlag && format != null && format != Format.json) {
            throw new FelixOffload.UsageException("--json and --format " + format + " contradict each other");
        }
        Format chosen = format != null ? format : jsonFlag ? Format.json : Format.text;
        json = chosen == Format.json;
        if (chosen == Format.raw && System.console() != null) {
            throw new FelixOffload.UsageException("--format raw writes binary records; redirect stdout to a file or pipe");
        }
        PrintWriter out = spec.commandLine().getOut();
        OutputStream rawOut = chosen == Format.raw ? new BufferedOutputStream(FelixOffload.binaryOut(spec)) : null;
        // The store is contacted (its client built, its bucket checked, the node claim read) only if the
        // read reaches below the local base: a read of local records needs nothing from it.
        String setting = storeSetting;
        java.util.Map<String, String> environment = env;
        FirstUseStore objectStore = new FirstUseStore(Stores.openExisting(store, setting, dataDir, Stores.Use.READER),
                s -> {
                    Stores.requireBucket(s, setting, dataRoot, environment, "");
                    ReaderClaimCheck.run(new DataRoot(dataDir), s, environment, "", setting)
                            .flatMap(dev.felix.offload.root.NodeClaimCheck.Result::warning)
                            .ifPresent(w -> spec.commandLine().getErr().println("felix-offload: warning: " + w));
                });
        try (objectStore;
                ChunkCache chunks = ChunkCache.forReads(objectStore, 64L * 1024 * 1024)) {
            TieredReader reader = new TieredReader(shard, dir, objectStore, chunks);
            int printed = 0;
            long next = offset;
            while (printed < maxRecords) {
                TieredRead r = reader.read(next, maxRecords - printed, 8L * 1024 * 1024);
                if (r instanceof TieredRead.Trimmed t) {
                    if (printed > 0) {
                        break;
                    }
                    trimmed(rawOut != null ? spec.commandLine().getErr() : out, next, t.nextAvailable());
                    return FelixOffload.EXIT_CORRUPT;
                }
                if (r instanceof TieredRead.Gap gap) {
                    // Never a silent end: the records before it stand, and the hole is named.
                    if (rawOut != null) {
                        rawOut.flush();
                    }
                    gap(rawOut != null ? spec.commandLine().getErr() : out, gap);
                    return FelixOffload.EXIT_CORRUPT;
                }
                TieredRead.Records records = (TieredRead.Records) r;
                if (records.records().isEmpty()) {
                    break;
                }
                for (TieredRead.SourcedRecord sr : records.records()) {
                    String source = sr.remote() ? "remote" : "local";
                    if (rawOut != null) {
                        rawOut.write(RecordCodec.encode(sr.record()));
                    } else if (json) {
                        RecordLines.json(out, sr.record(), -1, source);
                    } else {
                        RecordLines.text(out, sr.record(), -1, source);
                    }
                    printed++;
                }
                next = records.nextOffset();
            }
            if (printed == 0) {
                // Nothing at all: the end of the log is a success (caught up), past it a mistake to say.
                java.util.OptionalLong end = reader.bounds().logEnd();
                if (end.isPresent() && Long.compareUnsigned(offset, end.getAsLong()) > 0) {
                    beyondEnd(rawOut != null ? spec.commandLine().getErr() : out, offset, end.getAsLong());
                    return FelixOffload.EXIT_CORRUPT;
                }
            }
            out.flush();
            if (rawOut != null) {
                rawOut.flush();
            }
            return FelixOffload.EXIT_OK;
        } catch (CorruptionException e) {
            if (rawOut != null) {
                rawOut.flush(); // the whole records before the damage; the error goes to stderr
                spec.commandLine().getErr().println("felix-offload: " + e.getMessage());
                return FelixOffload.EXIT_CORRUPT;
            }
            if (json) {
                DumpCommand.writeJsonError(out, e);
            } else {
                out.println("error: " + e.getMessage());
            }
            out.flush();
            return FelixOffload.EXIT_CORRUPT;
        } catch (StoreException e) {
            if (objectStore.refusal().isPresent()) {
                throw objectStore.refusal().get();
            }
            throw new IOException("store: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // the first-use check's refusal (a missing bucket), however the reader passed it on
            throw objectStore.refusal().orElse(e);
        }
    }


    private void gap(PrintWriter out, TieredRead.Gap gap) throws IOException {
        if (json) {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeStringField("error", "Gap");
                Json.u64(g, "first_missing", gap.firstMissing());
                Json.u64(g, "last_missing", gap.lastMissing());
                Json.u64(g, "next_available", gap.nextAvailable());
                g.writeEndObject();
            }
            out.println();
        } else {
            out.println("error: offsets " + Long.toUnsignedString(gap.firstMissing()) + ".."
                    + Long.toUnsignedString(gap.lastMissing()) + " are held nowhere (a gap in the shard's history: no "
                    + "copy the manifest names and no local segment); the next available offset is "
                    + Long.toUnsignedString(gap.nextAvailable()));
        }
        out.flush();
    }

    private void beyondEnd(PrintWriter out, long offset, long logEnd) throws IOException {
        if (json) {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeStringField("error", "BeyondLogEnd");
                Json.u64(g, "offset", offset);
                Json.u64(g, "log_end", logEnd);
                g.writeEndObject();
            }
            out.println();
        } else {
            out.println("error: offset " + Long.toUnsignedString(offset) + " is past the end of the log: the next offset "
                    + "to be written is " + Long.toUnsignedString(logEnd) + "; nothing was read");
        }
        out.flush();
    }

    private void trimmed(PrintWriter out, long offset, long nextAvailable) throws IOException {
        if (json) {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeStringField("error", "Trimmed");
                Json.u64(g, "offset", offset);
                Json.u64(g, "next_available", nextAvailable);
                g.writeEndObject();
            }
            out.println();
        } else {
            out.println("error: offset " + Long.toUnsignedString(offset) + " is trimmed; the next available offset is "
                    + Long.toUnsignedString(nextAvailable));
        }
        out.flush();
    }
}
