package dev.felix.offload.reliability;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.Record;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A writer process for the torn-write test: opens a shard log (recovering it) under
 * {@link FsyncPolicy#onCommit()} with small segments, and appends records until it is killed or has
 * written {@code maxRecords}, printing {@code ack <offset> <count>} for each append once it
 * returned, i.e. once the records are durable. Which records are written is a function of the seed
 * and the offset alone ({@link #intended}), so a restarted writer carries on with the same sequence
 * and a check can tell the exact bytes every offset must hold.
 *
 * <p>Usage: {@code TornWriter DIR SEGMENT_BYTES SEED MAX_RECORDS}. It prints {@code open <next offset>}
 * first.
 */
public final class TornWriter {

    private TornWriter() {
    }

    /** The config both this writer and the check open the log with. */
    static ShardLogConfig config(long segmentBytes) {
        return ShardLogConfig.defaults().withSegmentSizeBytes(segmentBytes).withFsyncPolicy(FsyncPolicy.onCommit());
    }

    /**
     * The records the writer appends at {@code offset}: one plain record, or (one time in five) an
     * idempotent batch of 2 to 5 records whose sequence is its first offset.
     */
    static List<Record> intended(long seed, long offset) {
        SplittableRandom r = new SplittableRandom(seed ^ (offset * 0x9E3779B97F4A7C15L));
        long ts = 1_767_225_600_000_000L + offset * 1000;
        if (r.nextInt(5) == 0) {
            int n = 2 + r.nextInt(4);
            long producer = 7000 + r.nextInt(3);
            List<Record> batch = new ArrayList<>(n);
            batch.add(Record.batchOpen(offset, ts, new BatchTag(producer, offset, n), payload(r)));
            for (int i = 1; i < n; i++) {
                batch.add(Record.batchContinue(offset + i, ts, payload(r)));
            }
            return batch;
        }
        return List.of(Record.plain(offset, ts, payload(r)));
    }

    private static byte[] payload(SplittableRandom r) {
        byte[] b = new byte[r.nextInt(1200)];
        r.nextBytes(b);
        return b;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long segmentBytes = Long.parseLong(args[1]);
        long seed = Long.parseLong(args[2]);
        long max = Long.parseLong(args[3]);
        PrintStream out = System.out;
        try (ShardLog log = ShardLog.open(dir, config(segmentBytes))) {
            out.println("open " + log.nextOffset());
            out.flush();
            while (log.nextOffset() < max) {
                long at = log.nextOffset();
                List<Record> records = intended(seed, at);
                long got;
                if (records.size() == 1) {
                    Record r = records.get(0);
                    got = log.append(r.timestampMicros(), r.payload());
                } else {
                    List<byte[]> payloads = new ArrayList<>(records.size());
                    for (Record r : records) {
                        payloads.add(r.payload());
                    }
                    BatchTag tag = records.get(0).tag();
                    got = log.appendBatch(tag.producerId(), tag.sequence(), records.get(0).timestampMicros(), payloads);
                }
                if (got != at) {
                    out.println("error appended at " + got + ", expected " + at);
                    out.flush();
                    System.exit(3);
                }
                out.println("ack " + at + " " + records.size());
                out.flush();
            }
        }
        out.println("done");
        out.flush();
    }
}
