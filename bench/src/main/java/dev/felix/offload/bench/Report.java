package dev.felix.offload.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The Markdown of the remote sections, and the text that explains each table. */
final class Report {

    private Report() {
    }

    static final String APPENDS_TEXT = """
            ### Appends

            One append call per JMH operation, into a fresh shard directory every iteration, 64 MiB segments
            (the default). A call of 1 record is `ShardLog.append`; a call of several is `ShardLog.appendBatch`
            (one idempotent producer's batch: one write). fsync "per call" is `FsyncPolicy.onCommit()`, one
            fdatasync per call; "off" is `FsyncPolicy.none()`, where only a roll flushes. The raw side writes
            the very same encoded bytes with one `FileChannel.write` per call (and one `force(false)` per call
            when fsync is on) into files of the same 64 MiB, forcing each when it is full, as a roll does. So
            "log / raw" is what the log costs beyond the I/O itself.

            """;

    static final String RECOVERY_TEXT = """
            ### Recovery scan

            One big segment, the newest and only one of its shard, read front to back. The file is in the page
            cache for every side (the machine has the memory for it), so this compares CPU work per byte, not
            disk speed. JMH single-shot runs.

            """;

    static final String REBUILD_TEXT = """
            ### Index rebuild (headers only)

            `ShardLog.rebuildIndexOf` over segments of the same size holding payloads of different sizes: it
            steps from record header to record header without reading payloads, so it should cost per record,
            not per byte. A raw read of every byte of the same file is beside it for reference.

            """;

    static final String MANIFEST_TEXT = """
            Load is `ManifestStore.read` (read the file, decode and check every entry); save is
            `ManifestStore.save` (encode, write a temporary, fsync, atomic move, fsync the directory). The raw
            sides do the same file operations with bytes already encoded, so the ratio is what the codec adds.
            Entries look like offload's: 20-digit keys under a node id and a shard directory.

            """;

    static String offload(BenchConfig config, RootGenerator.Root root, long segmentBytes, String number,
                          OffloadSection.Rclone rclone, List<OffloadSection.Result> results) {
        StringBuilder sb = new StringBuilder("### " + number + ". Segments of " + Table.bytes(segmentBytes) + "\n\n");
        sb.append(Table.f("%s of sealed segments (%d files of about %s, in %d shards, payloads of %d random bytes), "
                        + "moved to each server by:\n\n", Table.bytes(root.sealedBytes()), root.sealed().size(),
                Table.bytes(segmentBytes), root.shards().size(), config.offloadPayloadBytes));
        sb.append("- **a**: plain AWS SDK v2 `PutObject` of each file (one PUT each), ")
                .append(config.offloadParallelism).append(" files at a time, one long-lived client with the ")
                .append("settings an S3-compatible server needs (path style, no aws-chunked checksum trailers) ")
                .append("and the same Apache HTTP client as the project's store (over plain HTTP the SDK signs ")
                .append("each body's SHA-256);\n");
        sb.append("- **b**: one offload pass (`OffloadPass`, what `felix-offload offload` runs) with the CLI's ")
                .append("defaults: `--verify auto`, `--parallelism ").append(config.offloadParallelism)
                .append("` (shards at a time), the store an `s3://` URI gives by default (one PUT per segment where ")
                .append("the upload rate it measured sends one within 4 s, else parts of 16 MiB, 4 at a time, as above ")
                .append("64 MiB before anything is measured; one store for all runs, so the warm-up run measures); ")
                .append("one read of each segment checks every record and builds its ")
                .append("index, CRC32 and MD5s; the segment and then its index are uploaded create-only (a HEAD first ")
                .append("where the server ignores `If-None-Match`), with uploads of several segments in flight up to ")
                .append("256 MiB; each copy is proven (the server checked its Content-MD5 and answered it as the ETag, ")
                .append("or keeps a CRC32 it checked, or else a read-back) and recorded in the manifest (fsync), ")
                .append("oldest first, those that ended together in one write;\n");
        sb.append("- **c**: `rclone copy --transfers ").append(config.offloadParallelism).append("` of the same files ")
                .append(rclone.available() ? "(" + rclone.version() + ", defaults otherwise: single PUT below its "
                        + "200 MiB cutoff, MD5 compared with the ETag), `AWS_CA_BUNDLE` unset, timed from process "
                        + "start to exit" : "(" + rclone.why() + ")")
                .append(";\n");
        sb.append("- **c1**, where the segments are above the default multipart threshold (64 MiB): the same `rclone copy` ")
                .append("with `--s3-upload-cutoff`, `--s3-chunk-size` and `--s3-upload-concurrency` set to that ")
                .append("threshold, the part size and parts in flight, so the server assembles parts as it does for a ")
                .append("pass that sends parts.\n\n");
        sb.append("MiB/s = sealed segment bytes / wall time; median of the runs, with the slowest and fastest run. ")
                .append("Ratios are of MiB/s within a run (median over runs): below 1 means the offload pass was ")
                .append("slower.\n\n");
        Table t = new Table("server", "a: SDK PutObject MiB/s", "b: offload pass MiB/s", "c: rclone copy MiB/s", "b/a",
                "b/c", "b verified by");
        for (OffloadSection.Result r : results) {
            if (r.failures.containsKey("all")) {
                t.row(r.server, "failed: " + r.failures.get("all"));
                continue;
            }
            t.row(r.server, cell(r, OffloadSection.SDK), cell(r, OffloadSection.PASS), cell(r, OffloadSection.RCLONE),
                    ratio(r, "b/a"), ratio(r, "b/c"), verified(r.verifiedBy));
        }
        sb.append(t.markdown()).append('\n');
        for (OffloadSection.Result r : results) {
            if (r.sent != null) {
                sb.append("- b on ").append(r.server).append(", sent (warm-up included): ").append(r.sent).append('\n');
            }
        }
        sb.append('\n');
        if (config.offloadNoVerifySide || config.offloadSinglePutSide) {
            sb.append("Where the pass's time goes, measured in the same runs: **b0** is the pass with `--verify none`; ")
                    .append("**b1** is the pass (verify auto) with `multipart-threshold` set in the store URI above the ")
                    .append("segment size, so each segment is one PUT whatever is measured, as in (a), but ")
                    .append("with its CRC32 in a header.\n\n");
            sb.append("**b2** is `felix-offload offload` as an operator runs it: the jar in its own JVM with ")
                    .append("`-Xmx256m` (the heap target), its defaults but `--parallelism`, timed from process start ")
                    .append("to exit like rclone, so b2/c compares two commands. Every run uses the same data root, so ")
                    .append("as for an operator's every command after the first, the probe's findings and the upload ")
                    .append("rate the warm-up run measured are kept in it. **b4** is the same command through the ")
                    .append("distribution's launcher (`bin/felix-offload`, `FELIX_OFFLOAD_HEAP=256m`) with the ")
                    .append("class-data-sharing archive it makes on its first start (see 1c): ")
                    .append(config.launcher != null ? "b4/c " + launcherRatios(results) + "." : "not run: " + config.launcherMissing + ".")
                    .append("\n\n");
            Table a = new Table("server", "b0: verify none MiB/s", "b1: single PUT MiB/s", "b2: the jar, -Xmx256m MiB/s",
                    "b4: the launcher MiB/s", "c1: rclone in parts MiB/s", "b/b0", "b0/a", "b1/b", "b1/a", "b2/a",
                    "b2/c", "b4/c", "b4/b2", "b/c1", "b1 verified by");
            for (OffloadSection.Result r : results) {
                if (r.failures.containsKey("all")) {
                    continue;
                }
                a.row(r.server, config.offloadNoVerifySide ? cell(r, OffloadSection.PASS_NO_VERIFY) : "not run",
                        config.offloadSinglePutSide ? cell(r, OffloadSection.PASS_SINGLE_PUT) : "not run",
                        cell(r, OffloadSection.PASS_JAR), cell(r, OffloadSection.PASS_LAUNCHER),
                        cell(r, OffloadSection.RCLONE_PARTS), ratio(r, "b/b0"),
                        ratio(r, "b0/a"), ratio(r, "b1/b"), ratio(r, "b1/a"), ratio(r, "b2/a"), ratio(r, "b2/c"),
                        ratio(r, "b4/c"), ratio(r, "b4/b2"), ratio(r, "b/c1"), verified(r.verifiedBySinglePut));
            }
            sb.append(a.markdown()).append('\n');
        }
        return sb.toString();
    }

    private static String launcherRatios(List<OffloadSection.Result> results) {
        List<String> out = new ArrayList<>();
        for (OffloadSection.Result r : results) {
            if (!r.failures.containsKey("all")) {
                out.add(r.server + " " + ratio(r, "b4/c") + " (" + cell(r, OffloadSection.PASS_LAUNCHER) + " MiB/s)");
            }
        }
        return String.join(", ", out);
    }

    private static String cell(OffloadSection.Result r, String side) {
        List<Double> v = r.mibps.get(side);
        if (v == null || v.isEmpty()) {
            String why = r.failures.get(side);
            return why == null ? "n/a" : why.replace('|', '/');
        }
        double[] a = Stats.toArray(v);
        String s = Table.num(Stats.median(a)) + " (" + Table.num(Stats.min(a)) + "–" + Table.num(Stats.max(a)) + ")";
        if (r.failures.containsKey(side)) {
            s += " (some runs failed)";
        }
        return s;
    }

    private static String ratio(OffloadSection.Result r, String name) {
        List<Double> v = r.ratios.get(name);
        return v == null || v.isEmpty() ? "n/a" : Table.ratio(Stats.median(v));
    }

    private static String verified(Map<String, Integer> by) {
        List<String> parts = new ArrayList<>();
        by.forEach((k, v) -> parts.add(k + " x" + v));
        return parts.isEmpty() ? "n/a" : String.join(", ", parts);
    }

    static String reads(BenchConfig config, List<ReadsSection.Result> results) {
        StringBuilder sb = new StringBuilder("## 2. Reads below the local base\n\n");
        sb.append("One shard's sealed segments offloaded (untimed); its reader then holds only the manifest and the ")
                .append("newest segment, so everything below is read from the store. **tiered**: `TieredReader` with ")
                .append("a fresh `ChunkCache` per run (").append(Table.bytes(config.chunkBytes))
                .append(" chunks, 256 MiB), so each run starts cold. **whole object**: the baseline, which serves a ")
                .append("read by downloading the whole object holding the offset (one GET, CRC32 checked) and walking ")
                .append("its records to the offset. Requests and bytes are counted at the store interface, so they include ")
                .append("the tiered reader's segment-header and index GETs and the HEAD that sizes a large index ")
                .append("(a segment's first read fetches the run of index entries it needs, a later one the whole index).\n\n");
        sb.append(Table.f("Random reads: %d single-record reads per run at uniformly random offsets, the same offsets "
                + "for both sides; p50 and p99 over all %d measured reads of a side (so p99 is close to the slowest).\n\n",
                config.randomReads, config.randomReads * config.runs));
        sb.append("**one chunk GET**: one ranged GET of the ").append(Table.bytes(config.chunkBytes))
                .append(" chunk holding each offset, the least a cold read can cost; the target is a tiered p50 ")
                .append("within 1.5x of it.\n\n");
        Table t = new Table("server", "reader", "bytes fetched per read", "requests per read", "p50 ms", "p99 ms",
                "p50 tiered / whole object", "p50 tiered / one chunk GET", "bytes tiered / whole object");
        for (ReadsSection.Result r : results) {
            if (r.failure != null) {
                t.row(r.server, "failed: " + r.failure.replace('|', '/'));
                continue;
            }
            double tb = Stats.median(r.tieredBytesPerRead);
            double bb = Stats.median(r.baselineBytesPerRead);
            t.row(r.server, "tiered", Table.bytes((long) tb), Table.num(Stats.median(r.tieredGetsPerRead)),
                    Table.num(Stats.median(r.tieredLatencyMs)), Table.num(Stats.percentile(r.tieredLatencyMs, 99)),
                    Table.ratio(Stats.median(r.latencyRatio)), Table.ratio(Stats.median(r.chunkGetRatio)),
                    Table.ratio(tb / bb));
            t.row("", "whole object", Table.bytes((long) bb), Table.num(Stats.median(r.baselineGetsPerRead)),
                    Table.num(Stats.median(r.baselineLatencyMs)), Table.num(Stats.percentile(r.baselineLatencyMs, 99)),
                    "", "", "");
            t.row("", "one chunk GET", Table.bytes(config.chunkBytes), "1.00",
                    Table.num(Stats.median(r.chunkGetLatencyMs)), Table.num(Stats.percentile(r.chunkGetLatencyMs, 99)),
                    "", "", "");
        }
        sb.append(t.markdown()).append('\n');
        sb.append("Sequential scan of the whole remote range (every record, checksums verified), run by run:\n\n");
        Table s = new Table("server", "remote range", "reader", "median s", "MiB/s", "GETs", "bytes fetched / remote bytes",
                "chunk cache hit ratio", "time tiered / whole object");
        for (ReadsSection.Result r : results) {
            if (r.failure != null) {
                continue;
            }
            String range = Table.f("%s in %d objects, %,d records", Table.bytes(r.remoteBytes), r.objects, r.remoteRecords);
            double ts = Stats.median(r.scanTieredSeconds);
            double bs = Stats.median(r.scanBaselineSeconds);
            s.row(r.server, range, "tiered", Table.num(ts), Table.num(r.remoteBytes / (double) BenchConfig.MiB / ts),
                    Table.num(Stats.median(r.scanTieredGets)),
                    Table.num(Stats.median(r.scanTieredBytes) / r.remoteBytes),
                    Table.f("%.4f", Stats.median(r.scanHitRatio)), Table.ratio(Stats.median(r.scanRatio)));
            s.row("", "", "whole object", Table.num(bs), Table.num(r.remoteBytes / (double) BenchConfig.MiB / bs),
                    Table.num(Stats.median(r.scanBaselineGets)),
                    Table.num(Stats.median(r.scanBaselineBytes) / r.remoteBytes), "", "");
        }
        sb.append(s.markdown()).append('\n');
        return sb.toString();
    }

    static String http(BenchConfig config, RootGenerator.Root root, List<HttpClientSection.Result> results) {
        StringBuilder sb = new StringBuilder("## 5. HTTP client and payload signing\n\n");
        sb.append(Table.f("The same %s of sealed segment files put (one PUT each) and then fetched whole, %d at a "
                + "time, by one SDK client per side, each configured as the store configures its own (path style, no "
                + "aws-chunked bodies, no SDK checksums) and differing in one thing. Over plain HTTP the SDK signs "
                + "each body's SHA-256 (reading it twice), whatever its payload-signing setting says; the unsigned "
                + "sides sign with the store's `UnsignedBodySigning` (every header, `UNSIGNED-PAYLOAD` for the body, "
                + "as over HTTPS), which the store uses for bodies whose Content-MD5 the server checks (here the "
                + "bodies carry none, so this is the client's cost alone). The baseline is what the store does today: **%s**. MiB/s: median (slowest–fastest); "
                + "ratios of MiB/s to the baseline within a run, median over runs.\n\n",
                Table.bytes(root.sealedBytes()), config.offloadParallelism, HttpClientSection.BASELINE));
        Table t = new Table("server", "client", "PUT MiB/s", "PUT / baseline", "GET MiB/s", "GET / baseline");
        for (HttpClientSection.Result r : results) {
            boolean first = true;
            for (String side : HttpClientSection.SIDES) {
                String failure = r.failures.get(side);
                List<Double> put = r.putMibps.get(side);
                if (put.isEmpty()) {
                    t.row(first ? r.server : "", side, failure == null ? "n/a" : failure.replace('|', '/'), "", "", "");
                } else {
                    t.row(first ? r.server : "", side, spread(put), median(r.putRatio.get(side)),
                            spread(r.getMibps.get(side)), median(r.getRatio.get(side)));
                }
                first = false;
            }
        }
        sb.append(t.markdown()).append('\n');
        return sb.toString();
    }

    private static String spread(List<Double> v) {
        double[] a = Stats.toArray(v);
        return Table.num(Stats.median(a)) + " (" + Table.num(Stats.min(a)) + "–" + Table.num(Stats.max(a)) + ")";
    }

    private static String median(List<Double> v) {
        return v == null || v.isEmpty() ? "n/a" : Table.ratio(Stats.median(v));
    }
}
