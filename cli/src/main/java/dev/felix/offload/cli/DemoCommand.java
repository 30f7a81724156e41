package dev.felix.offload.cli;

import dev.felix.offload.daemon.Bytes;
import dev.felix.offload.daemon.ReplicaCommit;
import dev.felix.offload.daemon.ShardSurvey;
import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.ReadResult;
import dev.felix.offload.log.ShardReader;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.retention.RetentionHook;
import dev.felix.offload.retention.RetentionOverride;
import dev.felix.offload.retention.RetentionPass;
import dev.felix.offload.retention.RetentionPassSettings;
import dev.felix.offload.retention.RetentionReport;
import dev.felix.offload.retention.RetentionRules;
import dev.felix.offload.retention.RetentionSettings;
import dev.felix.offload.copy.StopSignal;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.copy.CopyProofKind;
import dev.felix.offload.pass.SegmentUpload;
import dev.felix.offload.pass.ShardResult;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.copy.VerifyMode;
import org.apache.commons.io.file.PathUtils;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * {@code felix-offload demo}: the main job end to end on the embedded filesystem store, in one
 * directory: write a data root with a few streams, offload it, apply retention (local copies over a
 * limit go once verified; one stream's oldest remote copies expire), read records back from below
 * the local base and compare them with what was written, and report what went where, how it was
 * verified, and how long each step took. Running it again starts over in the same directory.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Write a small data root, offload it to a filesystem store, apply retention, read back from "
                + "the store, and report what went where.")
final class DemoCommand implements Callable<Integer> {

    /** How long the demo's entries stand before retention may unlink their segments (5 s by default). */
    private static final java.time.Duration DEMO_SETTLE = java.time.Duration.ofSeconds(1);


    /** Marks a directory the demo wrote, so a second run may empty it. */
    static final String MARKER = ".felix-demo";
    static final int STREAMS = 3;
    static final int SHARDS_PER_STREAM = 2;
    static final int RECORDS = 2000;
    static final int SEGMENT_BYTES = 64 * 1024;
    /** What each shard keeps locally. */
    static final long LOCAL_BYTES = 160 * 1024;
    /** The total one stream keeps, local and remote. */
    static final long STREAM_2_TOTAL_BYTES = 256 * 1024;
    static final String NODE_ID = "demo-node";
    static final int READ_BACK_RECORDS = 100;

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", defaultValue = "felix-demo", paramLabel = "DIR",
            description = "Where the demo writes its data root and store (default ${DEFAULT-VALUE}); emptied first "
                    + "when an earlier demo wrote it.")
    Path dir;

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        prepare();
        Path data = dir.resolve("data");
        Path storeDir = dir.resolve("store").toAbsolutePath();
        Files.createDirectories(storeDir);
        String storeUri = storeDir.toUri().toString();
        Map<String, String> env = new TreeMap<>(FelixOffload.environment(spec));
        env.put(NodeId.ENV, NODE_ID);
        out.printf("felix-offload demo in %s%n", dir.toAbsolutePath());

        // 1. Write the data root through the shard log.
        long t0 = System.nanoTime();
        StringWriter generated = new StringWriter();
        CommandLine generate = FelixOffload.commandLine();
        generate.setOut(new PrintWriter(generated));
        generate.setErr(new PrintWriter(generated, true)); // so a refusal's reason reaches the message below
        long startMicros = (System.currentTimeMillis() - 3_600_000L) * 1000;
        int rc = generate.execute("generate", "--data-dir", data.toString(), "--streams", "" + STREAMS,
                "--shards-per-stream", "" + SHARDS_PER_STREAM, "--records", "" + RECORDS, "--payload-bytes", "256",
                "--segment-bytes", "" + SEGMENT_BYTES, "--producers", "2", "--start-micros", "" + startMicros);
        if (rc != FelixOffload.EXIT_OK) {
            throw new IOException("writing the demo data root failed: " + generated);
        }
        DataRoot root = new DataRoot(data);
        List<Path> shards = root.streamShards().stream().map(DataRoot.Shard::directory).toList();
        ShardSurvey.Totals before = ShardSurvey.Totals.of(ShardSurvey.of(root));
        out.printf("1. wrote %d streams of %d shards, %d records each (%s in %d segments of up to %s)  [%s]%n",
                STREAMS, SHARDS_PER_STREAM, RECORDS, Bytes.human(before.localBytes()), before.localSegments(),
                Bytes.human(SEGMENT_BYTES), millis(t0));

        // Keep the first records of one shard as written, to compare with what comes back from the store.
        Path readShard = shards.get(0);
        List<Record> written = readLocal(readShard);

        try (ObjectStore store = Stores.open(storeUri);
                ChunkCache chunks = ChunkCache.forReads(store, 64L * 1024 * 1024)) {
            // 2. Offload.
            long t1 = System.nanoTime();
            OffloadSettings settings = OffloadSettings.defaults().withVerify(VerifyMode.AUTO);
            PassReport offload = new OffloadPass(root, store, settings, StepHook.none(), env, ReplicaCommit::of)
                    .run(ProgressListener.none());
            Map<CopyProofKind, Integer> verified = new java.util.EnumMap<>(CopyProofKind.class);
            for (ShardResult s : offload.shards()) {
                for (SegmentUpload u : s.uploaded()) {
                    verified.merge(u.verifiedBy(), 1, Integer::sum);
                }
            }
            out.printf("2. offload: %d sealed segments (%s) copied to %s, each with its index; recorded in each "
                            + "shard's offload.manifest; the active segments stay  [%s]%n",
                    offload.segmentsUploaded(), Bytes.human(offload.bytesUploaded()), store.describe(), millis(t1));
            out.printf("   proven: %s%n", verified.isEmpty() ? "nothing was copied" : verified.entrySet().stream()
                    .map(e -> e.getValue() + " by " + proof(e.getKey())).collect(java.util.stream.Collectors.joining("; ")));
            out.printf("   keys: %s%n", offload.shards().get(0).uploaded().isEmpty() ? "-"
                    : offload.shards().get(0).uploaded().get(0).key() + ", ...");

            // 3. Retention. An entry stands a settle time before its local segment goes (a broker's rewrite of
            // the manifest begun before it was saved has renamed by then); the demo settles for 1 s, not 5.
            try {
                Thread.sleep(DEMO_SETTLE.toMillis() + 50); // every entry was recorded before now
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while the entries settled");
            }
            long t2 = System.nanoTime();
            RetentionRules rules = RetentionRules.builder(RetentionSettings.defaults()
                            .with(RetentionSettings.LOCAL_RETENTION_BYTES, LOCAL_BYTES))
                    .forStreams("acme/default/stream-2",
                            RetentionOverride.none().with(RetentionSettings.RETENTION_BYTES, STREAM_2_TOTAL_BYTES))
                    .build();
            RetentionReport retention = new RetentionPass(root, store, rules,
                    RetentionPassSettings.defaults().withUnlinkSettle(DEMO_SETTLE), Clock.systemUTC(), env,
                    RetentionHook.none()).run(StopSignal.never());
            out.printf("3. retention: local.retention.bytes=%s per shard removed %d local segments (%s), each only "
                            + "once its manifest entry had stood %d s (offload.unlink-settle) and read back from disk; "
                            + "retention.bytes=%s for acme/default/stream-2 expired "
                            + "%d remote segments (%d objects deleted); orphan sweep found %d  [%s]%n",
                    Bytes.human(LOCAL_BYTES), retention.localSegmentsDeleted(),
                    Bytes.human(retention.localBytesDeleted()), DEMO_SETTLE.toSeconds(),
                    Bytes.human(STREAM_2_TOTAL_BYTES), retention.remoteSegmentsDeleted(),
                    retention.remoteObjectsDeleted(), retention.orphansFound(), millis(t2));

            // 4. Where everything is now.
            out.println("4. where the data is now (offsets first..last; \"both\" is the range held locally and in the"
                    + " store at once: copies retention has not removed yet, so local and remote overlap there):");
            out.printf("   %-42s %12s %16s %12s %16s %12s%n", "shard", "local", "local size", "remote", "remote size",
                    "both");
            for (ShardSurvey.ShardStatus s : ShardSurvey.of(root)) {
                OptionalLong localEnd = new ShardReader(data.resolve(s.shard())).endOffset();
                String local = s.localBase().isPresent() && localEnd.isPresent()
                        && Long.compareUnsigned(localEnd.getAsLong(), s.localBase().getAsLong()) > 0
                        ? u64(s.localBase()) + ".." + Long.toUnsignedString(localEnd.getAsLong() - 1) : "-";
                String remoteRange = s.remoteFirst().isPresent() ? u64(s.remoteFirst()) + ".." + u64(s.remoteLast()) : "-";
                String both = "-";
                if (!local.equals("-") && s.remoteFirst().isPresent()) {
                    long from = Math.max(s.localBase().getAsLong(), s.remoteFirst().getAsLong());
                    long to = Math.min(localEnd.getAsLong() - 1, s.remoteLast().getAsLong());
                    if (from <= to) {
                        both = from + ".." + to;
                    }
                }
                out.printf("   %-42s %12s %16s %12s %16s %12s%n", s.shard(), local,
                        s.localSegments() + " seg " + Bytes.human(s.localBytes()), remoteRange,
                        s.remoteSegments() + " seg " + Bytes.human(s.remoteBytes()), both);
            }

            // 5. Read back from below the local base.
            long t3 = System.nanoTime();
            TieredReader reader = new TieredReader(readShard, store, chunks);
            OptionalLong localBase = new ShardReader(readShard).firstOffset();
            List<TieredRead.SourcedRecord> back = readTiered(reader, written.get(0).offset(), written.size());
            long remote = back.stream().filter(TieredRead.SourcedRecord::remote).count();
            boolean same = back.size() == written.size();
            for (int i = 0; same && i < back.size(); i++) {
                Record a = back.get(i).record();
                Record b = written.get(i);
                same = a.offset() == b.offset() && a.timestampMicros() == b.timestampMicros()
                        && a.payloadView().equals(b.payloadView()) && a.kind() == b.kind();
            }
            out.printf("5. read back %s offsets %d..%d (the local base is now %s): %d records, %d from the store "
                            + "(%d object reads, %s of records), every record checksum verified; %s  [%s]%n",
                    readShard.getFileName(), written.get(0).offset(), written.get(written.size() - 1).offset(),
                    u64(localBase), back.size(), remote, reader.remoteReads(),
                    Bytes.human(reader.remoteRecordBytes()),
                    same ? "identical to what was written" : "DIFFERENT from what was written", millis(t3));
            out.printf("   try: java -jar cli/target/felix-offload.jar read --data-dir %s --store %s --shard %s "
                    + "--from 0 --max-records 3%n", data, storeUri, readShard.getFileName());
            out.flush();
            boolean ok = offload.complete() && retention.succeeded() && same && remote > 0;
            if (!ok) {
                out.println("the demo did not go as expected");
                out.flush();
            }
            return ok ? FelixOffload.EXIT_OK : FelixOffload.EXIT_CORRUPT;
        } catch (CorruptionException e) {
            out.println("error: " + e.getMessage());
            out.flush();
            return FelixOffload.EXIT_CORRUPT;
        } catch (StoreException e) {
            throw new IOException("store: " + e.getMessage(), e);
        }
    }

    /** Makes {@code dir} an empty demo directory: new, empty, or one an earlier demo wrote. */
    private void prepare() throws IOException {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new FelixOffload.UsageException(dir + " exists and is not a directory");
            }
            boolean empty;
            try (Stream<Path> entries = Files.list(dir)) {
                empty = entries.findAny().isEmpty();
            }
            if (!empty && !Files.exists(dir.resolve(MARKER))) {
                throw new FelixOffload.UsageException(dir + " is not empty and no demo wrote it; give another --dir");
            }
            // Every entry, directories too (cleanDirectory keeps them): generate refuses a root left holding
            // empty shard directories it did not write.
            try (Stream<Path> entries = Files.list(dir)) {
                for (Path entry : entries.toList()) {
                    PathUtils.delete(entry);
                }
            }
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(MARKER), "written by felix-offload demo; a new demo run empties this directory\n");
    }

    private static List<Record> readLocal(Path shard) throws IOException {
        try {
            ReadResult r = new ShardReader(shard).read(0, READ_BACK_RECORDS, Long.MAX_VALUE);
            if (r instanceof ReadResult.Records records && !records.records().isEmpty()) {
                return records.records();
            }
            throw new IOException("the demo shard " + shard.getFileName() + " holds no records at offset 0");
        } catch (CorruptionException e) {
            throw new IOException("the demo shard " + shard.getFileName() + " does not read back: " + e.getMessage(), e);
        }
    }

    private static List<TieredRead.SourcedRecord> readTiered(TieredReader reader, long from, int count)
            throws IOException, CorruptionException, StoreException {
        List<TieredRead.SourcedRecord> out = new ArrayList<>();
        long next = from;
        for (int round = 0; round < count && out.size() < count; round++) {
            TieredRead r = reader.read(next, count - out.size(), 8L * 1024 * 1024);
            if (!(r instanceof TieredRead.Records records) || records.records().isEmpty()) {
                break;
            }
            out.addAll(records.records());
            next = records.nextOffset();
        }
        return out;
    }

    private static String u64(OptionalLong v) {
        return v.isPresent() ? Long.toUnsignedString(v.getAsLong()) : "-";
    }

    /** What a {@code verified_by} value proved, in words, so that no store's proof reads as another's. */
    static String proof(CopyProofKind verifiedBy) {
        return switch (verifiedBy) {
            case SERVER_CHECKSUM -> "the CRC32 the server computed over the bytes it received, equal to the local"
                    + " segment's (checked by the server at the upload, or kept by it and asked for by a head)";
            case STORE_CHECKSUM -> "the CRC32 the filesystem store computed over the bytes as it wrote and fsynced each"
                    + " file, equal to the local segment's (no server checked anything; the file was not read back)";
            case CONTENT_MD5 -> "the server checking each upload's Content-MD5 (taken in the same read as the local"
                    + " segment's CRC32) and answering the ETag those MD5s predict; nothing was read back";
            case READ_BACK -> "reading every object back: its bytes' CRC32 equals the local segment's";
            case NONE -> "nothing: verification was off";
        };
    }

    private static String millis(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000 + " ms";
    }
}
