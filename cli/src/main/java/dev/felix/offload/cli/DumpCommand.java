package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordKind;
import dev.felix.offload.log.format.SegmentScanner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
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
        String shard = parent == null || parent.getFileName() == null ? "-" : parent.getFileName().toString();
        long segmentId = SegmentFile.parseLogName(segment.getFileName().toString()).orElse(CorruptionSite.UNKNOWN_SEGMENT);
        Base64.Encoder base64 = Base64.getEncoder();
        try (SegmentScanner scanner = SegmentScanner.open(segment, shard, segmentId, true)) {
            long position = scanner.position();
            Record r;
            while ((r = scanner.nextRecord()) != null) {
                if (json) {
                    writeJson(out, r, position, base64);
                } else {
                    writeText(out, r, position, base64);
                }
                position = scanner.position();
            }
            out.flush();
            return FelixOffload.EXIT_OK;
        } catch (CorruptionException e) {
            if (json) {
                writeJsonError(out, e);
            } else {
                out.println("error: " + e.getMessage());
            }
            out.flush();
            return FelixOffload.EXIT_CORRUPT;
        }
    }

    private static void writeJson(PrintWriter out, Record r, long position, Base64.Encoder base64) throws IOException {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            Json.u64(g, "offset", r.offset());
            Json.u64(g, "timestamp_micros", r.timestampMicros());
            g.writeStringField("kind", r.kind().label());
            g.writeNumberField("position", position);
            g.writeStringField("payload_base64", base64.encodeToString(r.payload()));
            if (r.kind() == RecordKind.BATCH_OPEN) {
                Json.u64(g, "producer_id", r.tag().producerId());
                Json.u64(g, "sequence", r.tag().sequence());
                g.writeNumberField("batch_len", r.tag().recordCount());
            } else if (r.kind() == RecordKind.GENERATION_START) {
                Json.u64(g, "generation", r.generation());
            }
            g.writeEndObject();
        }
        out.println();
    }

    private static void writeText(PrintWriter out, Record r, long position, Base64.Encoder base64) {
        StringBuilder line = new StringBuilder()
                .append("offset=").append(Long.toUnsignedString(r.offset()))
                .append(" timestamp_micros=").append(Long.toUnsignedString(r.timestampMicros()))
                .append(" kind=").append(r.kind().label())
                .append(" position=").append(position)
                .append(" payload_len=").append(r.payload().length);
        if (r.kind() == RecordKind.BATCH_OPEN) {
            line.append(" producer_id=").append(Long.toUnsignedString(r.tag().producerId()))
                    .append(" sequence=").append(Long.toUnsignedString(r.tag().sequence()))
                    .append(" batch_len=").append(r.tag().recordCount());
        } else if (r.kind() == RecordKind.GENERATION_START) {
            line.append(" generation=").append(Long.toUnsignedString(r.generation()));
        }
        line.append(" payload_base64=").append(base64.encodeToString(r.payload()));
        out.println(line);
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
