package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.tier.ChunkCache;
import dev.felix.offload.tier.TieredRead;
import dev.felix.offload.tier.TieredReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload read}: records of a shard from an offset, locally or from the store below the
 * local base. The JSON lines are {@code dump --json}'s plus {@code "source":"local|remote"}.
 * Exit 0 when records (or the end of the log) were read, 1 when the offset is trimmed or the data is
 * corrupt, 2 on usage errors, 3 on I/O or store errors.
 */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "Print a shard's records from an offset, reading from the store below the local base.")
final class ReadCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", required = true, paramLabel = "ROOT", description = "The broker's data root.")
    Path dataDir;

    @Option(names = "--store", required = true, paramLabel = "URI", description = "The store, as for offload.")
    String store;

    @Option(names = "--shard", required = true, paramLabel = "DIR", description = "The shard directory's name.")
    String shard;

    @Option(names = "--from", required = true, paramLabel = "OFFSET", description = "The first offset to read.")
    String from;

    @Option(names = "--max-records", defaultValue = "100", description = "At most this many (default ${DEFAULT-VALUE}).")
    int maxRecords;

    @Option(names = "--json", description = "One JSON object per record.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        if (!Files.isDirectory(dataDir)) {
            throw new FelixOffload.UsageException("no data root directory at " + dataDir);
        }
        Path dir = readableShard(new DataRoot(dataDir), shard).orElseThrow(
                () -> new FelixOffload.UsageException("no shard directory '" + shard + "' under " + dataDir));
        if (maxRecords < 1) {
            throw new FelixOffload.UsageException("--max-records must be at least 1");
        }
        long offset;
        try {
            offset = Long.parseUnsignedLong(from);
        } catch (NumberFormatException e) {
            throw new FelixOffload.UsageException("--from must be an unsigned 64-bit offset, got " + from);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (ObjectStore objectStore = Stores.openExisting(store, "--store")) {
            TieredReader reader = new TieredReader(dir, objectStore,
                    new ChunkCache(objectStore, ChunkCache.DEFAULT_CHUNK_BYTES, 64L * 1024 * 1024));
            int printed = 0;
            long next = offset;
            while (printed < maxRecords) {
                TieredRead r = reader.read(next, maxRecords - printed, 8L * 1024 * 1024);
                if (r instanceof TieredRead.Trimmed t) {
                    if (printed > 0) {
                        break;
                    }
                    trimmed(out, next, t.nextAvailable());
                    return FelixOffload.EXIT_CORRUPT;
                }
                TieredRead.Records records = (TieredRead.Records) r;
                if (records.records().isEmpty()) {
                    break;
                }
                for (TieredRead.SourcedRecord sr : records.records()) {
                    String source = sr.remote() ? "remote" : "local";
                    if (json) {
                        RecordLines.json(out, sr.record(), -1, source);
                    } else {
                        RecordLines.text(out, sr.record(), -1, source);
                    }
                    printed++;
                }
                next = records.nextOffset();
            }
            out.flush();
            return FelixOffload.EXIT_OK;
        } catch (CorruptionException e) {
            if (json) {
                DumpCommand.writeJsonError(out, e);
            } else {
                out.println("error: " + e.getMessage());
            }
            out.flush();
            return FelixOffload.EXIT_CORRUPT;
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
    }

    /**
     * The directory of {@code shard} when reads may be served from it: one the data root lists as a
     * shard, or a directory directly in it holding an {@code offload.manifest} (a shard restored from
     * the store, whose records are all remote until the broker writes again). Never a path, the root
     * itself (an empty name) or a dot-directory.
     */
    static java.util.Optional<Path> readableShard(DataRoot root, String shard) throws IOException {
        if (shard.isEmpty() || shard.contains("/") || shard.contains("\\") || shard.startsWith(".")) {
            return java.util.Optional.empty();
        }
        Path dir = root.path().resolve(shard);
        if (root.shardDirectories().contains(dir)
                || Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                && Files.isRegularFile(ManifestStore.fileIn(dir), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return java.util.Optional.of(dir);
        }
        return java.util.Optional.empty();
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
