package dev.felix.offload.bench;

import dev.felix.offload.bench.jmh.ManifestLoadSaveBenchmark;
import dev.felix.offload.manifest.ManifestCodec;
import org.openjdk.jmh.runner.RunnerException;

import java.util.List;
import java.util.Map;

/** The manifest: load and save at several sizes, beside the same file I/O without the codec. */
final class ManifestSection {

    private final BenchConfig config;
    private final JmhRounds jmh;

    ManifestSection(BenchConfig config, JmhRounds jmh) {
        this.config = config;
        this.jmh = jmh.warmupMillis(config.jmhManifestWarmupMillis);
    }

    Table run() throws RunnerException {
        Table t = new Table("entries", "file", "load µs", "raw read µs", "load / raw", "save µs",
                "raw durable write µs", "save / raw");
        for (String n : config.manifestSizes) {
            int entries = Integer.parseInt(n);
            long fileBytes = ManifestCodec.encode(ManifestLoadSaveBenchmark.manifestOf(entries)).length;
            Map<String, String> params = Map.of("entries", n);
            Map<String, List<Double>> s = jmh.run("manifest " + n, List.of(
                    new JmhRounds.Side("load", ManifestLoadSaveBenchmark.class, "load", params),
                    new JmhRounds.Side("rawLoad", ManifestLoadSaveBenchmark.class, "rawLoad", params),
                    new JmhRounds.Side("save", ManifestLoadSaveBenchmark.class, "save", params),
                    new JmhRounds.Side("rawSave", ManifestLoadSaveBenchmark.class, "rawSave", params)));
            t.row(String.format("%,d", entries), Table.bytes(fileBytes),
                    Table.num(Stats.median(s.get("load"))), Table.num(Stats.median(s.get("rawLoad"))),
                    Table.ratio(Stats.median(LocalLogSection.ratios(s.get("load"), s.get("rawLoad")))),
                    Table.num(Stats.median(s.get("save"))), Table.num(Stats.median(s.get("rawSave"))),
                    Table.ratio(Stats.median(LocalLogSection.ratios(s.get("save"), s.get("rawSave")))));
        }
        return t;
    }
}
