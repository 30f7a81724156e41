package dev.felix.offload.cli;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.SegmentHeader;
import org.apache.commons.io.FileUtils;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload sample-data --data-dir ROOT}: writes a small, deterministic data root to try
 * the tools on. It holds three shards: one healthy with several sealed segments and an idempotent
 * producer's batches, one whose history begins at offset 500 and whose newest segment ends in a torn
 * write (what a crash mid-append leaves: repairable), and one on a v4 segment opened by a
 * generation-start record. A {@code .deleted/} directory shows that dot-directories are not shards.
 *
 * <p>It only writes into an empty or missing directory, or one it wrote before (marked by
 * {@value #MARKER}); it never deletes anything else.
 */
@Command(name = "sample-data", mixinStandardHelpOptions = true,
        description = "Write a small sample data root (three shards, one with a torn tail) to try the tools on.")
final class SampleDataCommand implements Callable<Integer> {

    static final String MARKER = ".felix-sample";
    /** 2026-01-01T00:00:00Z in microseconds: sample timestamps are fixed so the output is reproducible. */
    static final long EPOCH_MICROS = 1_767_225_600_000_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", required = true, paramLabel = "ROOT", description = "Where to write the sample root.")
    Path dataDir;

    @Option(names = "--records-per-segment", defaultValue = "200",
            description = "Records in each sealed segment (default ${DEFAULT-VALUE}).")
    int recordsPerSegment;

    @Override
    public Integer call() throws IOException {
        if (recordsPerSegment < 1) {
            throw new FelixOffload.UsageException("--records-per-segment must be at least 1");
        }
        prepare();
        ShardKey orders0 = new ShardKey("acme", "default", "orders", 0);
        ShardKey orders1 = new ShardKey("acme", "default", "orders", 1);
        ShardKey payments0 = new ShardKey("acme", "default", "payments", 0);

        Path healthy = Files.createDirectories(dataDir.resolve(orders0.directoryName()));
        long next = 0;
        for (long id = 0; id < 3; id++) {
            next = writeSegment(healthy, id, SegmentHeader.v3(next, EPOCH_MICROS), next, recordsPerSegment, id == 1);
        }

        Path trimmed = Files.createDirectories(dataDir.resolve(orders1.directoryName()));
        next = writeSegment(trimmed, 5, SegmentHeader.v3(500, EPOCH_MICROS), 500, recordsPerSegment, false);
        writeSegment(trimmed, 6, SegmentHeader.v3(next, EPOCH_MICROS), next, recordsPerSegment / 2 + 1, false);
        tearTail(SegmentFile.in(trimmed, 6).log(), 7);

        Path generations = Files.createDirectories(dataDir.resolve(payments0.directoryName()));
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(generations, 0), SegmentHeader.v4(0, EPOCH_MICROS),
                SegmentWriter.DEFAULT_INDEX_SPACING_BYTES)) {
            w.append(Record.generationStart(0, EPOCH_MICROS, 1));
            for (long o = 1; o <= recordsPerSegment; o++) {
                w.append(Record.plain(o, EPOCH_MICROS + o * 1000, payload("payment", o)));
            }
            w.sync();
            w.writeIndex();
        }

        Path deleted = Files.createDirectories(dataDir.resolve(DataRoot.DELETED_DIR)
                .resolve(new ShardKey("acme", "default", "old-stream", 0).directoryName()));
        writeSegment(deleted, 0, SegmentHeader.v3(0, EPOCH_MICROS), 0, 3, false);

        PrintWriter out = spec.commandLine().getOut();
        out.println("wrote a sample data root at " + dataDir.toAbsolutePath());
        out.println("  " + orders0.directoryName() + ": 3 sealed segments, " + (3L * recordsPerSegment) + " records");
        out.println("  " + orders1.directoryName() + ": history from offset 500, newest segment ends in a torn write");
        out.println("  " + payments0.directoryName() + ": a v4 segment opened by a generation-start record");
        out.flush();
        return FelixOffload.EXIT_OK;
    }

    private void prepare() throws IOException {
        if (Files.exists(dataDir)) {
            if (!Files.isDirectory(dataDir)) {
                throw new FelixOffload.UsageException(dataDir + " exists and is not a directory");
            }
            boolean empty;
            try (var entries = Files.list(dataDir)) {
                empty = entries.findAny().isEmpty();
            }
            if (!empty) {
                if (!Files.exists(dataDir.resolve(MARKER))) {
                    throw new FelixOffload.UsageException(dataDir + " is not empty and was not written by sample-data; "
                            + "refusing to touch it");
                }
                FileUtils.cleanDirectory(dataDir.toFile());
            }
        }
        Files.createDirectories(dataDir);
        Files.writeString(dataDir.resolve(MARKER), "written by felix-offload sample-data\n");
    }

    /** Writes segment {@code id} with {@code count} records from {@code first}; answers the next offset. */
    private static long writeSegment(Path shardDir, long id, SegmentHeader header, long first, int count,
                                     boolean withBatch) throws IOException {
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(shardDir, id), header,
                SegmentWriter.DEFAULT_INDEX_SPACING_BYTES)) {
            long o = first;
            if (withBatch) {
                // An idempotent producer's batch of three: opened with its tag, then continued.
                w.append(Record.batchOpen(o, micros(o), new BatchTag(42, 7, 3), payload("order", o)));
                o++;
                for (int i = 0; i < 2; i++, o++) {
                    w.append(Record.batchContinue(o, micros(o), payload("order", o)));
                }
            }
            while (o < first + count) {
                w.append(Record.plain(o, micros(o), payload("order", o)));
                o++;
            }
            w.sync();
            w.writeIndex();
            return o;
        }
    }

    private static long micros(long offset) {
        return EPOCH_MICROS + offset * 1000;
    }

    private static byte[] payload(String what, long offset) {
        return ("{\"" + what + "\":" + offset + ",\"amount\":" + (offset * 37 % 1000) + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Cuts {@code bytes} off the end of a file: the shape of a write the process did not finish. */
    private static void tearTail(Path file, int bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - bytes);
        }
    }
}
