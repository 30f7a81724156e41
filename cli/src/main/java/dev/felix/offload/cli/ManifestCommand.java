package dev.felix.offload.cli;

import dev.felix.offload.daemon.Json;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.manifest.ManifestTotals;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload manifest show --shard-dir DIR [--json]}: prints a shard's
 * {@code offload.manifest}, read-only. An absent manifest reads as empty, as the broker reads it; a
 * damaged one prints the typed error (kind, file, byte position) and exits 1. The output formats are
 * a contract other tools parse.
 */
@Command(name = "manifest", mixinStandardHelpOptions = true,
        description = "Inspect a shard's offload.manifest: the segments with a copy in the object store.",
        subcommands = {ManifestCommand.Show.class})
final class ManifestCommand {

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = {"Print every entry of a shard's offload.manifest, read-only.",
                    "An absent manifest reads as empty; a damaged one prints the error (kind, file, byte position)"
                            + " and exits 1."})
    static final class Show implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = "--shard-dir", required = true, paramLabel = "DIR", description = "The shard directory.")
        Path shardDir;

        @Option(names = "--json", description = "One JSON object: {\"version\":1,\"entries\":[...]}.")
        boolean json;

        @Override
        public Integer call() throws IOException {
            if (!Files.isDirectory(shardDir)) {
                throw new FelixOffload.UsageException("no shard directory at " + shardDir);
            }
            PrintWriter out = spec.commandLine().getOut();
            try {
                Manifest manifest = ManifestStore.read(shardDir);
                if (json) {
                    writeJson(out, manifest);
                } else {
                    writeText(out, manifest, Files.exists(ManifestStore.fileIn(shardDir)));
                }
                out.flush();
                return FelixOffload.EXIT_OK;
            } catch (CorruptionException e) {
                return FelixOffload.endedCorrupt(out, json, e, () -> writeJsonError(out, e));
            }
        }

        private static void writeJson(PrintWriter out, Manifest manifest) throws IOException {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeNumberField("version", ManifestCodec.VERSION);
                g.writeArrayFieldStart("entries");
                for (ManifestEntry e : manifest.entries()) {
                    g.writeStartObject();
                    Json.u64(g, "segment", e.segmentId());
                    Json.u64(g, "base", e.baseOffset());
                    Json.u64(g, "last", e.lastOffset());
                    Json.u64(g, "size", e.sizeBytes());
                    Json.u64(g, "oldest", e.oldestTimestampMicros());
                    Json.u64(g, "newest", e.newestTimestampMicros());
                    g.writeStringField("crc32", Json.crc32(e.objectCrc32()));
                    g.writeStringField("key", e.objectKey());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            out.println();
        }

        private static void writeText(PrintWriter out, Manifest manifest, boolean present) {
            if (!present) {
                out.println("no " + ManifestStore.FILE_NAME + ": nothing offloaded (reads as empty)");
            }
            for (ManifestEntry e : manifest.entries()) {
                out.println("segment=" + Long.toUnsignedString(e.segmentId())
                        + " base=" + Long.toUnsignedString(e.baseOffset())
                        + " last=" + Long.toUnsignedString(e.lastOffset())
                        + " size=" + Long.toUnsignedString(e.sizeBytes())
                        + " oldest=" + Long.toUnsignedString(e.oldestTimestampMicros())
                        + " newest=" + Long.toUnsignedString(e.newestTimestampMicros())
                        + " crc32=" + String.format("%08x", e.objectCrc32())
                        + " key=" + e.objectKey());
            }
            ManifestTotals t = manifest.totals();
            out.println("entries=" + t.entries() + " bytes=" + Long.toUnsignedString(t.bytes())
                    + " oldest=" + unsignedOrDash(t.oldestTimestampMicros())
                    + " newest=" + unsignedOrDash(t.newestTimestampMicros()));
        }

        private static String unsignedOrDash(OptionalLong value) {
            return value.isPresent() ? Long.toUnsignedString(value.getAsLong()) : "-";
        }

        private static void writeJsonError(PrintWriter out, CorruptionException e) throws IOException {
            try (JsonGenerator g = Json.generator(out)) {
                g.writeStartObject();
                g.writeStringField("error", e.kind().specName());
                g.writeStringField("file", e.site().file());
                g.writeNumberField("position", e.site().position());
                CorruptionDetails.write(g, e);
                g.writeEndObject();
            }
            out.println();
        }
    }
}
