package dev.felix.offload.bench;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.Record;
import dev.felix.offload.log.format.RecordCodec;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestLookup;
import dev.felix.offload.manifest.ManifestStore;
import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreException;
import dev.felix.offload.store.s3.AwsSdkWire;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.root.NodeId;
import dev.felix.offload.pass.OffloadPass;
import dev.felix.offload.pass.OffloadSettings;
import dev.felix.offload.pass.PassReport;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.pass.StepHook;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;

/**
 * Reads below the local base offset against one S3 server. One shard of the offload root is offloaded
 * once (untimed); a reader directory then holds only that shard's manifest and its newest segment,
 * so every offset below that segment is remote.
 *
 * <p>The tiered reader ({@link TieredReader} with a fresh {@link ChunkCache} each run, default sizes)
 * is compared with a baseline that serves each read by downloading the whole object holding the
 * offset and walking its records to it (checksums verified, like the tiered reader). Random reads: the
 * same random offsets for both sides in a run. Scan: every remote record, front to back; the baseline
 * downloads each object once and decodes every record.
 */
final class ReadsSection {

    private final BenchConfig config;
    private final RootGenerator.Root root;

    /** Per server: what the runs measured. */
    static final class Result {
        final String server;
        long remoteBytes;
        long remoteRecords;
        int objects;
        final List<Double> tieredLatencyMs = new ArrayList<>();
        final List<Double> baselineLatencyMs = new ArrayList<>();
        final List<Double> tieredBytesPerRead = new ArrayList<>();
        final List<Double> baselineBytesPerRead = new ArrayList<>();
        final List<Double> tieredGetsPerRead = new ArrayList<>();
        final List<Double> baselineGetsPerRead = new ArrayList<>();
        final List<Double> latencyRatio = new ArrayList<>();
        /** One ranged GET of a chunk holding each offset: the latency floor a tiered read is held to. */
        final List<Double> chunkGetLatencyMs = new ArrayList<>();
        final List<Double> chunkGetRatio = new ArrayList<>();
        final List<Double> scanTieredSeconds = new ArrayList<>();
        final List<Double> scanBaselineSeconds = new ArrayList<>();
        final List<Double> scanTieredGets = new ArrayList<>();
        final List<Double> scanTieredBytes = new ArrayList<>();
        final List<Double> scanBaselineGets = new ArrayList<>();
        final List<Double> scanBaselineBytes = new ArrayList<>();
        final List<Double> scanHitRatio = new ArrayList<>();
        final List<Double> scanRatio = new ArrayList<>();
        String failure;

        Result(String server) {
            this.server = server;
        }
    }

    ReadsSection(BenchConfig config, RootGenerator.Root root) {
        this.config = config;
        this.root = root;
    }

    Result run(S3ServerProcess server) throws IOException {
        Result result = new Result(server.label());
        String bucket = "bench-reads";
        server.createBucket(bucket);
        try (ObjectStore store = AwsSdkWire.store(server.settings(bucket))) {
            Path readerDir = prepare(store, server.name);
            Manifest manifest;
            try {
                manifest = ManifestStore.read(readerDir);
            } catch (CorruptionException e) {
                throw new IOException(e);
            }
            long first = manifest.oldestEntry().orElseThrow().baseOffset();
            long localBase = manifest.newestEntry().orElseThrow().lastOffset() + 1;
            result.remoteRecords = localBase - first;
            result.remoteBytes = manifest.entries().stream().mapToLong(ManifestEntry::sizeBytes).sum();
            result.objects = manifest.size();
            CountingFetcher fetcher = new CountingFetcher(store);

            for (int round = -config.warmups; round < config.runs; round++) {
                SplittableRandom random = new SplittableRandom(1000 + round);
                long[] offsets = new long[config.randomReads];
                for (int i = 0; i < offsets.length; i++) {
                    offsets[i] = first + random.nextLong(localBase - first);
                }
                boolean tieredFirst = Math.floorMod(round, 2) == 0;
                double[] tiered = null;
                double[] baseline = null;
                for (int side = 0; side < 2; side++) {
                    if ((side == 0) == tieredFirst) {
                        tiered = randomTiered(readerDir, fetcher, offsets, round >= 0 ? result : null);
                    } else {
                        baseline = randomBaseline(manifest, fetcher, offsets, round >= 0 ? result : null);
                    }
                }
                double[] chunkGets = randomChunkGets(manifest, fetcher, offsets, round >= 0 ? result : null);
                if (round >= 0) {
                    result.latencyRatio.add(Stats.median(tiered) / Stats.median(baseline));
                    result.chunkGetRatio.add(Stats.median(tiered) / Stats.median(chunkGets));
                }
                System.out.printf("  [reads %s] %s random: tiered p50 %.2f ms, whole-object p50 %.1f ms%n", server.name,
                        round < 0 ? "warm-up" : "run " + (round + 1) + "/" + config.runs, Stats.median(tiered),
                        Stats.median(baseline));

                double ts = 0;
                double bs = 0;
                for (int side = 0; side < 2; side++) {
                    if ((side == 0) == tieredFirst) {
                        ts = scanTiered(readerDir, fetcher, first, localBase, round >= 0 ? result : null);
                    } else {
                        bs = scanBaseline(manifest, fetcher, round >= 0 ? result : null);
                    }
                }
                if (round >= 0) {
                    result.scanRatio.add(ts / bs);
                }
                System.out.printf("  [reads %s] %s scan: tiered %.2f s, whole objects %.2f s%n", server.name,
                        round < 0 ? "warm-up" : "run " + (round + 1) + "/" + config.runs, ts, bs);
            }
        } catch (StoreException | CorruptionException e) {
            throw new IOException(e);
        } finally {
            server.deleteAll(bucket, "reads/");
        }
        return result;
    }

    /**
     * Offloads the root once under the prefix {@code reads} and builds the reader directory: the first
     * shard's manifest and newest segment only.
     */
    private Path prepare(ObjectStore store, String serverName) throws IOException {
        OffloadSection.resetManifests(root);
        try {
            OffloadSettings settings = OffloadSettings.defaults().withKeyPrefix("reads")
                    .withParallelism(config.offloadParallelism);
            PassReport report = new OffloadPass(new DataRoot(root.path()), store, settings, StepHook.none(),
                    Map.of(NodeId.ENV, "bench-node"), s -> OptionalLong.empty()).run(ProgressListener.none());
            if (!report.complete()) {
                throw new IOException("the offload pass for the read benchmark did not complete: " + report);
            }
            Path shard = root.shards().get(0);
            Path readerDir = config.work.resolve("reads-" + serverName).resolve(shard.getFileName());
            BenchFiles.deleteTree(readerDir.getParent());
            Files.createDirectories(readerDir);
            Files.copy(ManifestStore.fileIn(shard), ManifestStore.fileIn(readerDir), StandardCopyOption.REPLACE_EXISTING);
            List<SegmentFile> files = SegmentFile.list(shard);
            SegmentFile newest = files.get(files.size() - 1);
            Files.copy(newest.log(), readerDir.resolve(newest.log().getFileName()));
            if (Files.exists(newest.index())) {
                Files.copy(newest.index(), readerDir.resolve(newest.index().getFileName()));
            }
            return readerDir;
        } finally {
            OffloadSection.resetManifests(root);
        }
    }

    private double[] randomTiered(Path readerDir, CountingFetcher fetcher, long[] offsets, Result r)
            throws IOException, StoreException, CorruptionException {
        fetcher.reset();
        ChunkCache cache = new ChunkCache(fetcher, config.chunkBytes, ChunkCache.DEFAULT_MAX_BYTES);
        TieredReader reader = new TieredReader(readerDir, fetcher, cache);
        double[] ms = new double[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            long start = System.nanoTime();
            TieredRead read = reader.read(offsets[i], 1, 1 << 20);
            ms[i] = (System.nanoTime() - start) / 1e6;
            if (!(read instanceof TieredRead.Records records) || records.records().size() != 1
                    || records.records().get(0).record().offset() != offsets[i] || !records.records().get(0).remote()) {
                throw new IllegalStateException("tiered read at " + offsets[i] + " answered " + read);
            }
        }
        if (r != null) {
            kept(ms, fetcher, r.tieredLatencyMs, r.tieredBytesPerRead, r.tieredGetsPerRead);
        }
        return ms;
    }

    /** Keeps one round's latencies, and its bytes and requests per read as {@code fetcher} counted them. */
    private static void kept(double[] ms, CountingFetcher fetcher, List<Double> latencyMs, List<Double> bytesPerRead,
                             List<Double> getsPerRead) {
        for (double m : ms) {
            latencyMs.add(m);
        }
        bytesPerRead.add(fetcher.bytes() / (double) ms.length);
        getsPerRead.add((fetcher.gets() + fetcher.heads()) / (double) ms.length);
    }

    private double[] randomBaseline(Manifest manifest, CountingFetcher fetcher, long[] offsets, Result r)
            throws StoreException, CorruptionException {
        fetcher.reset();
        double[] ms = new double[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            long start = System.nanoTime();
            ManifestLookup lookup = manifest.find(offsets[i]);
            if (lookup.kind() != ManifestLookup.Kind.ENTRY) {
                throw new IllegalStateException("no entry holds " + offsets[i]);
            }
            ManifestEntry entry = lookup.entry();
            byte[] object = fetcher.readAll(entry.objectKey(), Integer.MAX_VALUE - 16,
                    OptionalLong.of(Integer.toUnsignedLong(entry.objectCrc32())));
            Record record = walkTo(object, entry, offsets[i]);
            ms[i] = (System.nanoTime() - start) / 1e6;
            if (record.offset() != offsets[i]) {
                throw new IllegalStateException("baseline found " + record.offset() + " for " + offsets[i]);
            }
        }
        if (r != null) {
            kept(ms, fetcher, r.baselineLatencyMs, r.baselineBytesPerRead, r.baselineGetsPerRead);
        }
        return ms;
    }

    /**
     * One ranged GET per offset of the chunk that holds it, as a cache with these chunks would fetch
     * it, guessed from the offset's place among the entry's offsets (no index read): only the latency
     * of moving one chunk, the least a cold tiered read can cost.
     */
    private double[] randomChunkGets(Manifest manifest, CountingFetcher fetcher, long[] offsets, Result r)
            throws StoreException {
        double[] ms = new double[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            ManifestLookup lookup = manifest.find(offsets[i]);
            if (lookup.kind() != ManifestLookup.Kind.ENTRY) {
                throw new IllegalStateException("no entry holds " + offsets[i]);
            }
            ManifestEntry entry = lookup.entry();
            double share = (offsets[i] - entry.baseOffset()) / (double) (entry.lastOffset() - entry.baseOffset() + 1);
            long chunks = Math.max(1, (entry.sizeBytes() + config.chunkBytes - 1) / config.chunkBytes);
            long first = Math.min(chunks - 1, (long) (share * chunks)) * config.chunkBytes;
            int length = (int) (Math.min(entry.sizeBytes(), first + config.chunkBytes) - first);
            long start = System.nanoTime();
            byte[] chunk = fetcher.readRange(entry.objectKey(), ByteRange.of(first, length));
            ms[i] = (System.nanoTime() - start) / 1e6;
            if (chunk.length != length) {
                throw new IllegalStateException("a ranged GET of " + length + " bytes answered " + chunk.length);
            }
        }
        if (r != null) {
            for (double m : ms) {
                r.chunkGetLatencyMs.add(m);
            }
        }
        return ms;
    }

    /** Steps from header to header through a downloaded object to {@code offset} and verifies that record. */
    private static Record walkTo(byte[] object, ManifestEntry entry, long offset) throws CorruptionException {
        ByteBuffer buf = ByteBuffer.wrap(object);
        CorruptionSite site = CorruptionSite.inFile("bench", entry.objectKey(), 0);
        SegmentHeader header = SegmentHeader.decode(buf.duplicate(), site);
        long pos = SegmentHeader.LENGTH;
        while (pos < object.length) {
            RecordHeader h = RecordCodec.decodeHeader(buf.duplicate().position((int) pos), pos, header.version(), site);
            if (h.offset() == offset) {
                return RecordCodec.decodeBody(h, buf.duplicate().position((int) pos).limit((int) (pos + h.totalLength()))
                        .slice(), site);
            }
            pos += h.totalLength();
        }
        throw new IllegalStateException("offset " + offset + " not in " + entry.objectKey());
    }

    private double scanTiered(Path readerDir, CountingFetcher fetcher, long first, long localBase, Result r)
            throws IOException, StoreException, CorruptionException {
        fetcher.reset();
        ChunkCache cache = new ChunkCache(fetcher, config.chunkBytes, ChunkCache.DEFAULT_MAX_BYTES);
        TieredReader reader = new TieredReader(readerDir, fetcher, cache);
        long start = System.nanoTime();
        long next = first;
        long records = 0;
        while (next < localBase) {
            TieredRead read = reader.read(next, 10_000, 8L << 20);
            if (!(read instanceof TieredRead.Records rs) || rs.records().isEmpty()) {
                throw new IllegalStateException("scan stopped at " + next + ": " + read);
            }
            for (TieredRead.SourcedRecord s : rs.records()) {
                if (s.remote() && s.record().offset() < localBase) {
                    records++;
                }
            }
            next = rs.nextOffset();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (records != localBase - first) {
            throw new IllegalStateException("scan read " + records + " remote records, expected " + (localBase - first));
        }
        if (r != null) {
            r.scanTieredSeconds.add(seconds);
            r.scanTieredGets.add((double) fetcher.gets());
            r.scanTieredBytes.add((double) fetcher.bytes());
            r.scanHitRatio.add(cache.stats().hitRate());
        }
        return seconds;
    }

    private double scanBaseline(Manifest manifest, CountingFetcher fetcher, Result r)
            throws StoreException, CorruptionException {
        fetcher.reset();
        long start = System.nanoTime();
        long records = 0;
        for (ManifestEntry entry : manifest.entries()) {
            byte[] object = fetcher.readAll(entry.objectKey(), Integer.MAX_VALUE - 16,
                    OptionalLong.of(Integer.toUnsignedLong(entry.objectCrc32())));
            ByteBuffer buf = ByteBuffer.wrap(object);
            CorruptionSite site = CorruptionSite.inFile("bench", entry.objectKey(), 0);
            SegmentHeader header = SegmentHeader.decode(buf.duplicate(), site);
            long pos = SegmentHeader.LENGTH;
            while (pos < object.length) {
                RecordHeader h = RecordCodec.decodeHeader(buf.duplicate().position((int) pos), pos, header.version(), site);
                RecordCodec.decodeBody(h, buf.duplicate().position((int) pos).limit((int) (pos + h.totalLength())).slice(),
                        site);
                pos += h.totalLength();
                records++;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (r != null) {
            r.scanBaselineSeconds.add(seconds);
            r.scanBaselineGets.add((double) fetcher.gets());
            r.scanBaselineBytes.add((double) fetcher.bytes());
        }
        if (records == 0) {
            throw new IllegalStateException("baseline scan read nothing");
        }
        return seconds;
    }
}
