package dev.felix.offload.reliability;

import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentInfo;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.BatchTag;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * The broker's side of a shard in the crash tests: appends through {@link ShardLog} (plain records
 * and idempotent producers' batches, seeded payloads) and remembers every record it was given an
 * offset for, and every segment it ever saw, so a check can demand all of them back.
 *
 * <p>One thread appends at a time; {@link #records()} and {@link #segmentsEverSeen()} are read
 * after the appending thread is joined.
 */
final class ShardWriter {

    private final Path dir;
    private final String container;
    /** Sealed segments this writer left without a record (ids): nothing to copy, so no entry either. */
    private final java.util.Set<Long> emptySegments = new java.util.TreeSet<>();
    private final ShardLogConfig config;
    private final SplittableRandom random;
    private final int maxPayload;
    private final List<Record> records = new ArrayList<>();
    /** Segment id to base offset, for every segment this writer's log ever had. */
    private final Map<Long, Long> segments = new TreeMap<>();
    private final long[] sequences = new long[3];
    private long timestamp = 1_767_225_600_000_000L;
    private ShardLog log;

    ShardWriter(Path root, ShardKey key, long segmentBytes, int maxPayload, long seed) {
        this(root, "", key, segmentBytes, maxPayload, seed);
    }

    /**
     * A shard under {@code container} of the root ({@code groups}, {@code dead-letters}), or at the
     * top level when it is empty; it is named by its path under the root, as every command names it.
     */
    ShardWriter(Path root, String container, ShardKey key, long segmentBytes, int maxPayload, long seed) {
        this.container = container;
        this.dir = (container.isEmpty() ? root : root.resolve(container)).resolve(key.directoryName());
        // The test JVM never dies, so the page cache is all the offloader reads: no fsync needed.
        this.config = ShardLogConfig.defaults().withSegmentSizeBytes(segmentBytes).withFsyncPolicy(FsyncPolicy.none());
        this.random = new SplittableRandom(seed);
        this.maxPayload = maxPayload;
    }

    Path dir() {
        return dir;
    }

    String name() {
        return container.isEmpty() ? dir.getFileName().toString() : container + "/" + dir.getFileName();
    }

    /** Sealed segments left without a record, as a broker's roll of an empty active segment leaves them. */
    java.util.Set<Long> emptySegments() {
        return Collections.unmodifiableSet(emptySegments);
    }

    /**
     * Seals the active segment as it is and leaves an empty sealed segment after it, as a broker's
     * roll of an empty active segment (the v3 to v4 roll) does: two new segments at the log's next
     * offset, the first of which the next open seals without a record. The log must be closed.
     */
    void leaveEmptySealedSegment() throws IOException, CorruptionException {
        if (log != null) {
            throw new IllegalStateException(name() + ": close the log first");
        }
        SegmentInfo active;
        try (ShardLog l = ShardLog.open(dir, config)) {
            List<SegmentInfo> segs = l.segments();
            active = segs.get(segs.size() - 1);
            for (SegmentInfo s : segs) {
                segments.putIfAbsent(s.file().id(), s.baseOffset());
            }
        }
        long base = active.nextOffset();
        long id = active.file().id();
        int version = Math.max(active.version(), dev.felix.offload.log.format.SegmentHeader.VERSION_3);
        long empty = active.recordCount() > 0 ? id + 1 : id;
        for (long next = id + 1; next <= empty + 1; next++) {
            try (dev.felix.offload.log.SegmentWriter w = dev.felix.offload.log.SegmentWriter.create(
                    dev.felix.offload.log.SegmentFile.in(dir, next),
                    new dev.felix.offload.log.format.SegmentHeader(version, base, timestamp),
                    dev.felix.offload.log.SegmentWriter.DEFAULT_INDEX_SPACING_BYTES)) {
                w.sync();
            }
            segments.putIfAbsent(next, base);
        }
        emptySegments.add(empty);
    }

    /** Opens the log (recovering it, as the broker does at start-up). */
    void open() throws IOException, CorruptionException {
        log = ShardLog.open(dir, config);
        if (log.nextOffset() != records.size()) {
            throw new AssertionError(name() + ": the log reopened at offset " + log.nextOffset() + " but "
                    + records.size() + " records were acknowledged");
        }
        noteSegments();
    }

    /** Appends one plain record or, one time in four, a batch of 2 to 6; answers how many records. */
    int appendSome() throws IOException {
        timestamp += 1000 + random.nextInt(1000);
        if (random.nextInt(4) == 0) {
            int n = 2 + random.nextInt(5);
            int producer = random.nextInt(sequences.length);
            long sequence = sequences[producer]++;
            List<byte[]> payloads = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                payloads.add(payload());
            }
            long producerId = 5000L + producer;
            long first = log.appendBatch(producerId, sequence, timestamp, payloads);
            expect(first);
            records.add(Record.batchOpen(first, timestamp, new BatchTag(producerId, sequence, n), payloads.get(0)));
            for (int i = 1; i < n; i++) {
                records.add(Record.batchContinue(first + i, timestamp, payloads.get(i)));
            }
            noteSegments();
            return n;
        }
        byte[] payload = payload();
        long offset = log.append(timestamp, payload);
        expect(offset);
        records.add(Record.plain(offset, timestamp, payload));
        noteSegments();
        return 1;
    }

    /** Appends until at least {@code n} more records are written. */
    void append(int n) throws IOException {
        int written = 0;
        while (written < n) {
            written += appendSome();
        }
    }

    private void expect(long offset) {
        if (offset != records.size()) {
            throw new AssertionError(name() + ": append answered offset " + offset + ", expected " + records.size());
        }
    }

    private byte[] payload() {
        byte[] b = new byte[random.nextInt(maxPayload + 1)];
        random.nextBytes(b);
        return b;
    }

    private void noteSegments() {
        for (SegmentInfo s : log.segments()) {
            segments.putIfAbsent(s.file().id(), s.baseOffset());
        }
    }

    void close() throws IOException {
        if (log != null) {
            noteSegments();
            log.close();
            log = null;
        }
    }

    /** Every acknowledged record, by offset (offset i at index i). */
    List<Record> records() {
        return Collections.unmodifiableList(records);
    }

    /** Segment id to base offset for every segment the log ever had. */
    Map<Long, Long> segmentsEverSeen() {
        return Collections.unmodifiableMap(segments);
    }
}
