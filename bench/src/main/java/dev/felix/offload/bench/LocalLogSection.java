package dev.felix.offload.bench;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.bench.jmh.AppendBenchmark;
import dev.felix.offload.bench.jmh.IndexRebuildBenchmark;
import dev.felix.offload.bench.jmh.RecoveryBenchmark;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentScan;
import org.openjdk.jmh.runner.RunnerException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The local log: appends, the recovery scan and the index rebuild, each with JMH, beside raw file I/O. */
final class LocalLogSection {

    private final BenchConfig config;
    private final JmhRounds jmh;

    LocalLogSection(BenchConfig config, JmhRounds jmh) {
        this.config = config;
        this.jmh = jmh;
    }

    Table appends() throws RunnerException {
        Table t = new Table("payload", "fsync", "records per append call", "log records/s", "log payload MiB/s",
                "raw records/s", "raw payload MiB/s", "log / raw (throughput)");
        record Combo(int payload, String fsync, int batch) {
        }
        List<Combo> combos = List.of(
                new Combo(100, "off", 1), new Combo(100, "off", config.batchRecords),
                new Combo(100, "batch", config.batchRecords),
                new Combo(16384, "off", config.batchRecords),
                new Combo(16384, "batch", config.batchRecords));
        for (Combo c : combos) {
            Map<String, String> params = Map.of("payload", Integer.toString(c.payload()), "fsync", c.fsync(),
                    "batch", Integer.toString(c.batch()));
            Map<String, List<Double>> s = jmh.run("append " + c.payload() + " B fsync " + c.fsync() + " x" + c.batch(), List.of(
                    new JmhRounds.Side("log", AppendBenchmark.class, "log", params),
                    new JmhRounds.Side("raw", AppendBenchmark.class, "raw", params)));
            double log = Stats.median(s.get("log")) * c.batch();
            double raw = Stats.median(s.get("raw")) * c.batch();
            t.row(Table.bytes(c.payload()), c.fsync().equals("off") ? "off" : "per call", c.batch(),
                    Table.num(log), Table.num(log * c.payload() / BenchConfig.MiB),
                    Table.num(raw), Table.num(raw * c.payload() / BenchConfig.MiB),
                    Table.ratio(Stats.median(ratios(s.get("log"), s.get("raw")))));
        }
        return t;
    }

    Table recovery() throws IOException, RunnerException {
        Path shard = config.work.resolve("recovery").resolve("shard");
        System.out.println("  writing the recovery segment (" + Table.bytes(config.recoveryBytes) + ") ...");
        SegmentFile file = RootGenerator.bigSegment(shard, config.recoveryBytes, config.recoveryPayloadBytes);
        long size = Files.size(file.log());
        long records = SegmentScan.of(file.log(), "shard", 0, ScanDepth.HEADERS).recordCount();
        List<String> args = List.of("-Dbench.recovery.dir=" + shard);
        JmhRounds rounds = jmh.with(args).singleShot();
        Map<String, List<Double>> s = rounds.run("recovery", List.of(
                new JmhRounds.Side("scan", RecoveryBenchmark.class, "scan", Map.of()),
                new JmhRounds.Side("open", RecoveryBenchmark.class, "open", Map.of()),
                new JmhRounds.Side("raw", RecoveryBenchmark.class, "raw", Map.of()),
                new JmhRounds.Side("rawCrc", RecoveryBenchmark.class, "rawCrc", Map.of())));
        Table t = new Table("what (" + Table.bytes(size) + " segment, " + String.format("%,d", records) + " records of "
                + config.recoveryPayloadBytes + " B)", "median ms", "MiB/s", "records/s", "time / raw read");
        row(t, "recovery scan (SegmentScan, every record verified)", s.get("scan"), s.get("raw"), size, records);
        row(t, "ShardLog.open (scan + index rebuild + producer replay)", s.get("open"), s.get("raw"), size, records);
        row(t, "raw read + one CRC-32 over the file", s.get("rawCrc"), s.get("raw"), size, records);
        row(t, "baseline: raw sequential read, 1 MiB reads", s.get("raw"), s.get("raw"), size, records);
        return t;
    }

    private static void row(Table t, String what, List<Double> ms, List<Double> raw, long size, long records) {
        double m = Stats.median(ms);
        t.row(what, Table.num(m), Table.num(size / (double) BenchConfig.MiB / (m / 1000)),
                Table.num(records / (m / 1000)), Table.ratio(Stats.median(ratios(ms, raw))));
    }

    Table indexRebuild() throws IOException, RunnerException {
        Path dir = config.work.resolve("rebuild");
        int[] payloads = {100, 65536, 1024 * 1024};
        Table t = new Table("payload", "segment", "records", "rebuild ms", "records/s", "ns per record",
                "raw read ms", "rebuild / raw read");
        for (int p : payloads) {
            System.out.println("  writing the index rebuild segment for " + Table.bytes(p) + " payloads ...");
            SegmentFile file = RootGenerator.bigSegment(dir.resolve(Integer.toString(p)).resolve("shard"),
                    config.rebuildBytes, p);
            long size = Files.size(file.log());
            long records = SegmentScan.of(file.log(), "shard", 0, ScanDepth.HEADERS).recordCount();
            JmhRounds rounds = jmh.with(List.of("-Dbench.rebuild.dir=" + dir));
            Map<String, String> params = Map.of("payload", Integer.toString(p));
            Map<String, List<Double>> s = rounds.run("index rebuild " + Table.bytes(p), List.of(
                    new JmhRounds.Side("rebuild", IndexRebuildBenchmark.class, "rebuild", params),
                    new JmhRounds.Side("raw", IndexRebuildBenchmark.class, "raw", params)));
            double ms = Stats.median(s.get("rebuild"));
            t.row(Table.bytes(p), Table.bytes(size), String.format("%,d", records), Table.num(ms),
                    Table.num(records / (ms / 1000)), Table.num(ms * 1e6 / records),
                    Table.num(Stats.median(s.get("raw"))), Table.ratio(Stats.median(ratios(s.get("rebuild"), s.get("raw")))));
        }
        return t;
    }

    /** Ratios of paired runs. */
    static List<Double> ratios(List<Double> top, List<Double> bottom) {
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < Math.min(top.size(), bottom.size()); i++) {
            r.add(top.get(i) / bottom.get(i));
        }
        return r;
    }
}
