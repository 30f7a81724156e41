package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ReadResult;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.SegmentInfo;
import dev.felix.offload.log.SegmentWriter;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.SegmentHeader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * {@code felix-offload generate}: writes a realistic data root through {@link ShardLog}, for demos,
 * tests and benchmarks. Payloads come from the seed, so the same arguments write the same records;
 * timestamps increase by one millisecond (plus up to a millisecond of seeded jitter) per record.
 * With {@code --producers} above 0, about a third of the records are appended in idempotent
 * producers' batches of 1 to 8 records, each producer's sequence increasing.
 *
 * <p>{@code --under} writes the shards under one of the root's containers ({@code groups/},
 * {@code dead-letters/}, {@code caches/}, {@code counters/}) instead of at its top level, and
 * {@code --empty-segments} leaves sealed segments without a record between the written ones, as a
 * broker's roll of an empty active segment (the v3 to v4 roll) does.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Write a realistic data root through the shard log (reproducible from --seed).")
final class GenerateCommand implements Callable<Integer> {

    /** 2026-01-01T00:00:00Z in microseconds: the default first timestamp, so output is reproducible. */
    static final long DEFAULT_START_MICROS = 1_767_225_600_000_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", required = true, paramLabel = "ROOT", description = "The data root to write into.")
    Path dataDir;

    @Option(names = "--tenant", defaultValue = "acme", description = "Tenant (default ${DEFAULT-VALUE}).")
    String tenant;

    @Option(names = "--namespace", defaultValue = "default", description = "Namespace (default ${DEFAULT-VALUE}).")
    String namespace;

    @Option(names = "--streams", defaultValue = "1",
            description = "How many streams, named stream-0, stream-1, ... (default ${DEFAULT-VALUE}).")
    int streams;

    @Option(names = "--shards-per-stream", defaultValue = "1", description = "Shards per stream (default ${DEFAULT-VALUE}).")
    int shardsPerStream;

    @Option(names = "--records", defaultValue = "10000", description = "Records per shard (default ${DEFAULT-VALUE}).")
    long records;

    @Option(names = "--payload-bytes", defaultValue = "256", converter = ByteOptions.IntCount.class,
            description = "Payload size, with a unit or without (default ${DEFAULT-VALUE}).")
    int payloadBytes;

    @Option(names = "--segment-bytes", defaultValue = "1048576", converter = ByteOptions.Count.class,
            description = "Segment size at which the log rolls, with a unit (1MiB) or without (default ${DEFAULT-VALUE}).")
    long segmentBytes;

    @Option(names = "--producers", defaultValue = "0",
            description = "Idempotent producers writing batches (default ${DEFAULT-VALUE}: none).")
    int producers;

    @Option(names = "--seed", defaultValue = "1", description = "Seed for payloads and batching (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--start-micros", defaultValue = "" + DEFAULT_START_MICROS,
            description = "Timestamp of each shard's first record, in microseconds since the epoch.")
    long startMicros;

    @Option(names = "--under", paramLabel = "CONTAINER",
            description = "Write the shards under this container of the root: groups, dead-letters, caches or counters "
                    + "(default: the root's top level).")
    String under;

    @Option(names = "--empty-segments", defaultValue = "0",
            description = "Sealed segments without records to leave in each shard, spread among the written ones "
                    + "(default ${DEFAULT-VALUE}).")
    int emptySegments;

    @Option(names = "--append",
            description = "Add records to a data root that holds something already, though generate did not write it "
                    + "(a live broker's root, say). Without it such a root is refused.")
    boolean append;

    /** Left at the top of a root generate wrote, so a later run may add to it without --append. */
    static final String MARKER = ".felix-generated";

    /** A bound on one run's shards: each is a directory of files, and a typo in a count should not make millions. */
    static final int MAX_SHARDS = 10_000;

    private static Path existingAncestor(Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        return p == null ? dir.toAbsolutePath().getRoot() : p;
    }

    @Override
    public Integer call() throws IOException {
        validate();
        boolean fresh = refuseForeignRoot();
        ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(segmentBytes)
                .withFsyncPolicy(FsyncPolicy.none()); // one flush per segment on roll and at close is enough here
        PrintWriter out = spec.commandLine().getOut();
        long totalRecords = 0;
        long totalBytes = 0;
        for (int s = 0; s < streams; s++) {
            for (int k = 0; k < shardsPerStream; k++) {
                ShardKey key = new ShardKey(tenant, namespace, "stream-" + s, k);
                SplittableRandom random = new SplittableRandom(seed * 1_000_003L + key.hash());
                String name = under == null ? key.directoryName() : under + "/" + key.directoryName();
                Path dir = dataDir.resolve(name);
                try {
                    long first = -1;
                    long before = 0;
                    long start = startMicros;
                    if (Files.isDirectory(dir)) {
                        // Appending: the new records follow the shard's newest one in time, and the bytes
                        // reported are those this run added, not the shard's total.
                        try (ShardLog log = ShardLog.open(dir, config)) {
                            before = log.segments().stream().mapToLong(SegmentInfo::size).sum();
                            start = Math.max(start, newestTimestamp(log));
                        }
                    }
                    long[] state = new long[] {0, start}; // records written, last timestamp
                    for (int part = 0; part <= emptySegments; part++) {
                        if (part > 0) {
                            leaveEmptySealedSegment(dir, config, state[1]);
                        }
                        long upTo = records * (part + 1) / (emptySegments + 1);
                        try (ShardLog log = ShardLog.open(dir, config)) {
                            if (first < 0) {
                                first = log.nextOffset();
                            }
                            writeShard(log, random, state, upTo);
                        }
                    }
                    try (ShardLog log = ShardLog.open(dir, config)) {
                        long bytes = log.segments().stream().mapToLong(SegmentInfo::size).sum() - before;
                        out.printf("%s: offsets %d to %d, %d segments, %d bytes%s%n", name, first,
                                log.nextOffset(), log.segments().size(), bytes, before > 0 ? " added" : "");
                        totalRecords += log.nextOffset() - first;
                        totalBytes += bytes;
                    }
                } catch (CorruptionException e) {
                    throw new FelixOffload.UsageException("cannot append to " + name + ": " + e.getMessage());
                }
            }
        }
        if (fresh) {
            Files.writeString(dataDir.resolve(MARKER), "written by felix-offload generate\n");
        }
        out.printf("wrote %d records (%d bytes) in %d shards under %s%n", totalRecords, totalBytes,
                streams * shardsPerStream, dataDir.toAbsolutePath());
        out.flush();
        return FelixOffload.EXIT_OK;
    }

    /**
     * Refuses a data root that holds anything generate did not write, unless {@code --append} is given:
     * records added to a live broker's shard by mistake cannot be taken back. Answers whether the root
     * was new or empty (so the marker is to be written).
     */
    private boolean refuseForeignRoot() throws IOException {
        if (!Files.isDirectory(dataDir)) {
            return true;
        }
        boolean empty;
        try (var entries = Files.list(dataDir)) {
            empty = entries.findAny().isEmpty();
        }
        if (empty) {
            return true;
        }
        if (!append && !Files.exists(dataDir.resolve(MARKER))) {
            throw new FelixOffload.UsageException("--data-dir: " + dataDir.toAbsolutePath() + " is not empty and was not"
                    + " written by generate (it has no " + MARKER + "); give a new or empty directory, or --append to"
                    + " add records to the shards there");
        }
        return false;
    }

    /** The timestamp of the shard's newest record, or 0 when it holds none. */
    private static long newestTimestamp(ShardLog log) throws IOException, CorruptionException {
        if (log.nextOffset() == log.firstOffset()) {
            return 0;
        }
        ReadResult r = log.read(log.nextOffset() - 1, 1, Long.MAX_VALUE);
        if (r instanceof ReadResult.Records records && !records.records().isEmpty()) {
            return records.records().get(records.records().size() - 1).timestampMicros();
        }
        return 0;
    }

    /**
     * Seals the shard's active segment as it is and leaves an empty sealed segment after it: two new
     * segments at the log's next offset, the first of which the next open seals without a record.
     * The active segment is first sealed by the same means when it holds records.
     */
    private static void leaveEmptySealedSegment(Path dir, ShardLogConfig config, long createdMicros)
            throws IOException, CorruptionException {
        SegmentInfo active;
        try (ShardLog log = ShardLog.open(dir, config)) {
            List<SegmentInfo> segments = log.segments();
            active = segments.get(segments.size() - 1);
        }
        long base = active.nextOffset();
        long id = active.file().id();
        int version = Math.max(active.version(), SegmentHeader.VERSION_3);
        if (active.recordCount() > 0) {
            // The active segment holds records: the first new one is the empty sealed segment, the second the active.
            create(dir, id + 1, version, base, createdMicros);
            create(dir, id + 2, version, base, createdMicros);
        } else {
            // Already empty (the previous call's active, or a fresh log): it becomes the empty sealed one.
            create(dir, id + 1, version, base, createdMicros);
        }
    }

    private static void create(Path dir, long id, int version, long base, long createdMicros) throws IOException {
        try (SegmentWriter w = SegmentWriter.create(SegmentFile.in(dir, id), new SegmentHeader(version, base, createdMicros),
                SegmentWriter.DEFAULT_INDEX_SPACING_BYTES)) {
            w.sync();
        }
    }

    private void validate() throws IOException {
        if (streams < 1 || shardsPerStream < 1) {
            throw new FelixOffload.UsageException("--streams and --shards-per-stream must be at least 1");
        }
        long shards = (long) streams * shardsPerStream;
        if (shards > MAX_SHARDS) {
            throw new FelixOffload.UsageException("--streams times --shards-per-stream is " + shards + " shards; at most "
                    + MAX_SHARDS + " are generated at once");
        }
        if (records < 0) {
            throw new FelixOffload.UsageException("--records must not be negative");
        }
        if (payloadBytes < 0 || payloadBytes > RecordCodec.MAX_PAYLOAD_BYTES) {
            throw new FelixOffload.UsageException("--payload-bytes must be between 0 and " + RecordCodec.MAX_PAYLOAD_BYTES);
        }
        // Refused up front rather than found out when the disk fills part-way through a shard.
        double wanted = (double) shards * records * (payloadBytes + RecordCodec.MAX_HEADER_LENGTH);
        long usable = Files.getFileStore(existingAncestor(dataDir)).getUsableSpace();
        if (wanted > usable) {
            throw new FelixOffload.UsageException(String.format("--data-dir: %d shards of %d records of %d bytes need about"
                    + " %s, and %s has %s free", shards, records, payloadBytes, Bytes.human((long) Math.min(wanted,
                    Long.MAX_VALUE)), dataDir.toAbsolutePath(), Bytes.human(usable)));
        }
        if (segmentBytes < 64) {
            throw new FelixOffload.UsageException("--segment-bytes must be at least 64");
        }
        if (under != null && !List.of(DataRoot.GROUPS_DIR, DataRoot.DEAD_LETTERS_DIR, DataRoot.CACHES_DIR,
                DataRoot.COUNTERS_DIR).contains(under)) {
            throw new FelixOffload.UsageException("--under must be one of groups, dead-letters, caches, counters; got "
                    + under);
        }
        if (emptySegments < 0 || emptySegments > 1000) {
            throw new FelixOffload.UsageException("--empty-segments must be between 0 and 1000");
        }
        if (producers < 0) {
            throw new FelixOffload.UsageException("--producers must not be negative");
        }
    }

    private long[] sequences;

    /** Appends records until {@code state[0]} (records written so far) reaches {@code upTo}. */
    private void writeShard(ShardLog log, SplittableRandom random, long[] state, long upTo) throws IOException {
        if (sequences == null || state[0] == 0) {
            sequences = new long[producers];
        }
        long written = state[0];
        long ts = state[1];
        long records = upTo;
        while (written < records) {
            ts += 1000 + random.nextInt(1000);
            if (producers > 0 && random.nextInt(3) == 0) {
                int n = (int) Math.min(records - written, 1 + random.nextInt(8));
                int p = random.nextInt(producers);
                List<byte[]> batch = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    batch.add(payload(random));
                }
                log.appendBatch(1000L + p, sequences[p]++, ts, batch);
                written += n;
            } else {
                log.append(ts, payload(random));
                written++;
            }
        }
        state[0] = written;
        state[1] = ts;
    }

    private byte[] payload(SplittableRandom random) {
        byte[] b = new byte[payloadBytes];
        random.nextBytes(b);
        return b;
    }
}
