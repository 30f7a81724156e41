package dev.felix.offload.cli;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.daemon.Json;
import dev.felix.offload.daemon.RecordLines;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentScanner;
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
 * {@code felix-offload dump --segment FILE [--json]}: one line per record, every record checksum
 * verified. A damaged record ends the dump with one error line naming the corruption kind and the
 * byte position, and exit code 1. The output format is a contract other tools parse.
 */
@Command(name = "dump", mixinStandardHelpOptions = true,
        description = {"Print every record of a segment file, one line each, verifying checksums.",
                "A damaged record ends the dump with an error line (kind and byte position) and exit code 1."})
final class DumpCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--segment", required = true, paramLabel = "FILE", description = "The segment file (*.log).")
    Path segment;

    @Option(names = "--json", description = "One JSON object per line instead of text.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        if (!Files.isRegularFile(segment)) {
            throw new FelixOffload.UsageException("no segment file at " + segment);
        }
        PrintWriter out = spec.commandLine().getOut();
        Path parent = segment.toAbsolutePath().getParent();
        String shard = parent == null || parent.getFileName() == null ? "-" : DataRoot.Shard.nameOf(parent);
        long segmentId = SegmentFile.parseLogName(segment.getFileName().toString()).orElse(CorruptionSite.UNKNOWN_SEGMENT);
        try (SegmentScanner scanner = SegmentScanner.open(segment, shard, segmentId, ScanDepth.RECORDS)) {
            long position = scanner.position();
            Record r;
            while ((r = scanner.nextRecord()) != null) {
                if (json) {
                    RecordLines.json(out, r, position, null);
                } else {
                    RecordLines.text(out, r, position, null);
                }
                position = scanner.position();
            }
            out.flush();
            return FelixOffload.EXIT_OK;
        } catch (CorruptionException e) {
            return FelixOffload.endedCorrupt(out, json, e, () -> writeJsonError(out, e));
        }
    }

    static void writeJsonError(PrintWriter out, CorruptionException e) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            g.writeStringField("error", e.kind().specName());
            if (e.site().segmentId() == CorruptionSite.UNKNOWN_SEGMENT) {
                g.writeNullField("segment");
            } else {
                Json.u64(g, "segment", e.site().segmentId());
            }
            g.writeNumberField("position", e.site().position());
            CorruptionDetails.write(g, e);
            g.writeEndObject();
        }
        out.println();
    }
}
