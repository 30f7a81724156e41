package dev.felix.offload.reliability;

import dev.felix.offload.log.format.Record;
import dev.felix.offload.read.ChunkCache;
import dev.felix.offload.read.TieredRead;
import dev.felix.offload.read.TieredReader;
import dev.felix.offload.store.ObjectStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conservation campaign against a broker that rewrites {@code offload.manifest} itself: the
 * daemon ({@code felix-offload run --config}, offload and retention every second, local retention
 * unlinking what it may, orphans swept at once) beside a broker process ({@link RewritingBroker})
 * that appends to three shards and truncates or resets them, each time rewriting the manifest as the
 * spec says (read, temporary, fsync, rename, no comparison), one rewrite in five slow (up to 2 s, an
 * fsync under load, still inside the 5 s settle time the daemon runs with by default).
 *
 * <p>Before the settle time, a rewrite that read the manifest before the offload pass saved an entry
 * and renamed after local retention unlinked that entry's segment erased the only record of it, and
 * the orphan sweep then deleted its object: records lost, every command exiting 0. Afterwards every
 * record the broker acknowledged and did not drop itself (by a truncation or a reset) must read back,
 * byte for byte, from the local log or the store: that is what is checked, from the broker's journal,
 * once the broker made at least {@code felix.reliability.brokerRewrites} rewrites (default 500).
 */
class BrokerRewritesIT {

    static final int REWRITES = Props.integer("felix.reliability.brokerRewrites", 500);
    private static final int SHARDS = 3;

    /** The store the campaign runs on. */
    protected StoreTarget target(Path work) throws IOException {
        return StoreTarget.filesystem(Files.createDirectories(work.resolve("store")));
    }

    protected String name() {
        return "fs";
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void everyRecordTheBrokerKeptReadsBackWhileItRewritesTheManifestBlindly() throws Exception {
        Path work = Files.createDirectories(Props.work().resolve("broker-rewrites-" + name()));
        Path root = work.resolve("root");
        if (Files.exists(work.resolve("root"))) {
            org.apache.commons.io.FileUtils.deleteDirectory(work.toFile());
            Files.createDirectories(work);
        }
        Files.createDirectories(root);
        Path journals = Files.createDirectories(work.resolve("journals"));
        StoreTarget target = target(work);
        Path config = work.resolve("felix.yaml");
        Files.writeString(config, String.join("\n",
                "data-dir: " + root,
                "store: " + target.uri(),
                "node-id: campaign",
                "offload.schedule: '* * * * * ?'",
                "retention.schedule: '* * * * * ?'",
                "scrub.schedule: 'off'",
                "local.retention.bytes: 48KiB",
                "orphans.grace: 0s",
                "offload.unlink-settle: " + System.getProperty("felix.reliability.unlinkSettle", "5s"),
                "http.port: 0",
                "shutdown.grace: 20s",
                "log.level: warn",
                ""), StandardCharsets.UTF_8);
        long seed = Props.seed("broker-rewrites-" + name());
        // The broker keeps its side of the contract even when this machine stalls it: a rewrite renames
        // within the settle time, less a second for the rename itself and the pass's own read.
        String settleText = System.getProperty("felix.reliability.unlinkSettle", "5s");
        Duration settle = settleText.endsWith("ms") ? Duration.ofMillis(Long.parseLong(settleText.replace("ms", "")))
                : Duration.parse("PT" + settleText.toUpperCase(java.util.Locale.ROOT));
        long budgetMs = settle.isZero() ? 0 : Math.max(1, settle.toMillis() - 1000);

        String brokerOut;
        try (Felix.Running daemon = Felix.start(work, target.env(), List.of(), false,
                List.of("run", "--config", config.toString()))) {
            awaitServing(daemon);
            List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-cp", System.getProperty("java.class.path"), RewritingBroker.class.getName(),
                    root.toString(), Integer.toString(SHARDS), Integer.toString(REWRITES), "20", "600", "2000",
                    Long.toString(seed), journals.toString(), Long.toString(budgetMs));
            Process broker = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("broker.out").toFile()).start();
            if (!broker.waitFor(12, TimeUnit.MINUTES)) {
                broker.destroyForcibly();
                throw new AssertionError("the broker did not finish in 12 minutes");
            }
            brokerOut = Files.readString(work.resolve("broker.out"), StandardCharsets.UTF_8);
            assertThat(broker.exitValue()).as("the broker: %s", brokerOut).isZero();
            assertThat(daemon.process.isAlive()).as("the daemon still runs: %s",
                    Files.exists(daemon.err) ? Files.readString(daemon.err) : "").isTrue();
            daemon.process.destroy(); // SIGTERM: it ends its passes at their next safe point
            Felix.Result r = daemon.await(Duration.ofMinutes(2), "the daemon after SIGTERM");
            assertThat(r.exit()).as(r.describe()).isZero();
        }
        int rewrites = Integer.parseInt(brokerOut.replaceAll("(?s).*done rewrites=(\\d+).*", "$1"));
        assertThat(rewrites).as(brokerOut).isGreaterThanOrEqualTo(REWRITES);

        List<String> lost = new ArrayList<>();
        long checked = 0;
        long dropped = 0;
        try (ObjectStore store = target.open()) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(journals)) {
                for (Path journal : files) {
                    String shard = journal.getFileName().toString().replaceFirst("^journal-", "").replaceFirst("\\.txt$", "");
                    Kept kept = Kept.replay(journal);
                    dropped += kept.dropped;
                    checked += kept.records.size();
                    lost.addAll(readBack(root.resolve(shard), shard, store, kept.records));
                }
            }
        }
        String summary = "broker rewrites campaign on " + target.describe() + ": " + brokerOut.trim() + "; "
                + checked + " acknowledged records kept by the broker read back, " + dropped
                + " dropped by its truncations and resets, " + lost.size() + " lost";
        Props.summary(summary);
        assertThat(lost).as(summary).isEmpty();
    }

    /** The records the broker acknowledged and did not drop, by offset, from its journal. */
    private record Kept(TreeMap<Long, String> records, long dropped) {
        static Kept replay(Path journal) throws IOException {
            TreeMap<Long, String> records = new TreeMap<>();
            long dropped = 0;
            for (String line : Files.readAllLines(journal, StandardCharsets.UTF_8)) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "A" -> records.put(Long.parseLong(f[1]), f[2] + " " + f[3] + " " + f[4]);
                    case "T" -> {
                        Map<Long, String> gone = records.tailMap(Long.parseLong(f[1]), true);
                        dropped += gone.size();
                        gone.clear();
                    }
                    case "R" -> {
                        dropped += records.size();
                        records.clear();
                    }
                    default -> throw new IllegalStateException("journal line " + line);
                }
            }
            return new Kept(records, dropped);
        }
    }

    /** Every expected record read back in order through the tiered reader; what is missing or differs. */
    private static List<String> readBack(Path dir, String shard, ObjectStore store, TreeMap<Long, String> expected)
            throws Exception {
        List<String> lost = new ArrayList<>();
        if (expected.isEmpty()) {
            return lost;
        }
        TieredReader reader = new TieredReader(shard, dir, store, new ChunkCache(store, 1 << 20, 32L << 20));
        long next = expected.firstKey();
        long end = expected.lastKey() + 1;
        while (next < end) {
            TieredRead r = reader.read(next, 1000, 4L << 20);
            if (r instanceof TieredRead.Records records && !records.records().isEmpty()) {
                for (TieredRead.SourcedRecord sr : records.records()) {
                    Record got = sr.record();
                    String want = expected.get(got.offset());
                    if (want == null) {
                        continue; // not one of the broker's (none should be): a missing one is found by offset
                    }
                    CRC32 crc = new CRC32();
                    crc.update(got.payload());
                    String have = got.timestampMicros() + " " + got.payload().length + " " + Long.toHexString(crc.getValue());
                    if (!have.equals(want)) {
                        lost.add(shard + " offset " + got.offset() + " reads back as " + have + " ("
                                + (sr.remote() ? "remote" : "local") + "), acknowledged as " + want);
                    }
                }
                next = records.nextOffset();
                continue;
            }
            long resume = r instanceof TieredRead.Gap g ? g.nextAvailable()
                    : r instanceof TieredRead.Trimmed t ? t.nextAvailable() : end;
            long missing = expected.subMap(next, true, resume, false).size();
            lost.add(shard + ": offsets " + next + ".." + (resume - 1) + " (" + missing + " acknowledged records) read as "
                    + r);
            next = Math.max(resume, next + 1);
        }
        return lost;
    }

    private static void awaitServing(Felix.Running p) throws InterruptedException, IOException {
        long limit = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (p.process.isAlive() && System.nanoTime() < limit) {
            if (Files.exists(p.out) && Files.readString(p.out, StandardCharsets.UTF_8).contains("serving")) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the daemon did not say it serves: "
                + (Files.exists(p.err) ? Files.readString(p.err, StandardCharsets.UTF_8) : ""));
    }
}
