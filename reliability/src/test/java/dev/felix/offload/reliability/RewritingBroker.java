package dev.felix.offload.reliability;

import dev.felix.offload.log.DurableFiles;
import dev.felix.offload.log.FsyncPolicy;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.ShardLog;
import dev.felix.offload.log.ShardLogConfig;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestCodec;
import dev.felix.offload.manifest.ManifestStore;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * A broker in its own process, doing to a data root what the spec says a Felix broker does, beside
 * felix-offload: each of its shards, on a thread of its own, appends records (rolling small
 * segments), and now and then truncates its log near the head or resets it. Each truncation or reset
 * rewrites {@code offload.manifest} first, as the broker does: read the file, drop the entries at or
 * after the cut (all of them for a reset), write a temporary, fsync, rename over the manifest. The
 * rename compares nothing, so it replaces whatever felix-offload saved since the read. The rewrite
 * mostly takes milliseconds, and one in five takes up to {@code slowMs} (an fsync under load): all
 * within the settle time felix-offload is run with. That is the broker's side of the contract
 * (docs/configuration.md, {@code offload.unlink-settle}), and this broker keeps it even on a machine
 * so loaded that its process stalls for seconds: a rewrite that has taken {@code budgetMs} or more
 * by the moment before its rename is given up (its temporary deleted, the manifest left as it is)
 * and made again from a fresh read, and counted as {@code overdue}. A budget of 0 keeps no bound.
 *
 * <p>Every record it was given an offset for, and every truncation and reset, goes to a journal per
 * shard ({@code A offset timestamp length crc32-of-payload}, {@code T cut}, {@code R base}), from which
 * the test knows which acknowledged records the broker dropped and which must read back.
 *
 * <p>Arguments: {@code root shards rewrites minSeconds maxSeconds slowMs seed journalDir budgetMs}. It
 * stops once it made {@code rewrites} rewrites in all and ran {@code minSeconds}, or at
 * {@code maxSeconds}, and prints {@code done rewrites=N truncations=T resets=R records=A slow=S
 * overdue=O longest=Lms} (L: the longest rewrite that went ahead, from its read to its rename).
 */
public final class RewritingBroker {

    private static final int SEGMENT_BYTES = 16 * 1024;
    private static final String BROKER_TEMP = "offload.manifest.broker.tmp";

    private RewritingBroker() {
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int shards = Integer.parseInt(args[1]);
        int rewrites = Integer.parseInt(args[2]);
        long minNanos = Long.parseLong(args[3]) * 1_000_000_000L;
        long maxNanos = Long.parseLong(args[4]) * 1_000_000_000L;
        int slowMs = Integer.parseInt(args[5]);
        long seed = Long.parseLong(args[6]);
        Path journals = Files.createDirectories(Path.of(args[7]));
        long budgetMs = Long.parseLong(args[8]);
        long start = System.nanoTime();
        AtomicInteger made = new AtomicInteger();
        AtomicInteger truncations = new AtomicInteger();
        AtomicInteger resets = new AtomicInteger();
        AtomicInteger slow = new AtomicInteger();
        AtomicInteger records = new AtomicInteger();
        AtomicInteger overdue = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong longest = new java.util.concurrent.atomic.AtomicLong();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int s = 0; s < shards; s++) {
            int index = s;
            Thread t = new Thread(() -> {
                try {
                    new Shard(root, index, new SplittableRandom(seed * 31 + index), journals, slowMs, budgetMs,
                            overdue, longest)
                            .run(() -> {
                                long ran = System.nanoTime() - start;
                                return ran >= maxNanos || made.get() >= rewrites && ran >= minNanos;
                            }, made, truncations, resets, slow, records);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "broker-shard-" + s);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            failures.get(0).printStackTrace();
            System.out.println("failed " + failures.get(0));
            System.exit(1);
        }
        System.out.println("done rewrites=" + made.get() + " truncations=" + truncations.get() + " resets="
                + resets.get() + " records=" + records.get() + " slow=" + slow.get() + " overdue=" + overdue.get()
                + " longest=" + longest.get() + "ms");
    }

    /** One shard's broker thread. */
    private static final class Shard {
        private final Path dir;
        private final SplittableRandom random;
        private final BufferedWriter journal;
        private final int slowMs;
        private final long budgetMs;
        private final AtomicInteger overdue;
        private final java.util.concurrent.atomic.AtomicLong longest;
        private final ShardLogConfig config = ShardLogConfig.defaults().withSegmentSizeBytes(SEGMENT_BYTES)
                .withFsyncPolicy(FsyncPolicy.none());
        private long timestamp = System.currentTimeMillis() * 1000;

        Shard(Path root, int index, SplittableRandom random, Path journals, int slowMs, long budgetMs,
              AtomicInteger overdue, java.util.concurrent.atomic.AtomicLong longest) throws IOException {
            this.dir = root.resolve(new ShardKey("acme", "default", "rewrites", index).directoryName());
            this.random = random;
            this.slowMs = slowMs;
            this.budgetMs = budgetMs;
            this.overdue = overdue;
            this.longest = longest;
            this.journal = Files.newBufferedWriter(journals.resolve("journal-" + dir.getFileName() + ".txt"),
                    StandardCharsets.UTF_8);
        }

        void run(java.util.function.BooleanSupplier done, AtomicInteger made, AtomicInteger truncations,
                 AtomicInteger resets, AtomicInteger slow, AtomicInteger records) throws Exception {
            ShardLog log = open();
            try {
                while (!done.getAsBoolean()) {
                    int n = 40 + random.nextInt(80);
                    for (int i = 0; i < n; i++) {
                        byte[] payload = new byte[50 + random.nextInt(350)];
                        random.nextBytes(payload);
                        timestamp += 1 + random.nextInt(1000);
                        long offset = log.append(timestamp, payload);
                        CRC32 crc = new CRC32();
                        crc.update(payload);
                        journal.write("A " + offset + " " + timestamp + " " + payload.length + " "
                                + Long.toHexString(crc.getValue()) + "\n");
                        records.incrementAndGet();
                    }
                    Thread.sleep(random.nextInt(40));
                    // A truncation or a reset: the manifest first, blindly, then the segments.
                    log.close();
                    boolean reset = random.nextInt(40) == 0;
                    long next;
                    try (ShardLog view = open()) {
                        next = view.nextOffset();
                    }
                    long cut;
                    if (reset) {
                        cut = next + random.nextInt(50); // a new history, above every offset the old one had
                    } else {
                        // Most cuts drop a few records at the head, some reach into the newest sealed segment.
                        long floor = Math.max(newestSealedBase(), next - (random.nextInt(4) == 0 ? 150 : 12));
                        cut = floor >= next ? next : floor + random.nextInt((int) (next - floor));
                    }
                    boolean wasSlow = rewriteManifest(reset, cut);
                    if (wasSlow) {
                        slow.incrementAndGet();
                    }
                    log = apply(reset, cut);
                    if (reset) {
                        journal.write("R " + cut + "\n");
                        resets.incrementAndGet();
                    } else {
                        journal.write("T " + cut + "\n");
                        truncations.incrementAndGet();
                    }
                    made.incrementAndGet();
                }
            } finally {
                log.close();
                journal.close();
            }
        }

        /**
         * Opens the log as it is now; a segment felix-offload unlinks while the open lists and reads the
         * directory only means opening again (this broker closes its log around each rewrite, which a
         * real broker need not).
         */
        private ShardLog open() throws Exception {
            for (int attempt = 1; ; attempt++) {
                try {
                    return ShardLog.open(dir, config);
                } catch (NoSuchFileException gone) {
                    if (attempt == 20) {
                        throw gone;
                    }
                }
            }
        }

        /**
         * Reopens the log and truncates or resets it; a segment felix-offload unlinked between the
         * open and the removal only means opening again and removing what is there now.
         */
        private ShardLog apply(boolean reset, long cut) throws Exception {
            for (int attempt = 1; ; attempt++) {
                ShardLog log = open();
                try {
                    if (reset) {
                        log.reset(cut);
                    } else {
                        log.truncate(cut);
                    }
                    return log;
                } catch (NoSuchFileException gone) {
                    log.close();
                    if (attempt == 10) {
                        throw gone;
                    }
                }
            }
        }

        /**
         * Read, drop, temporary, fsync, rename: no comparison, as the spec describes the broker's
         * rewrite; made again from a fresh read when it would rename past its budget. True when the
         * one that went ahead was slow.
         */
        private boolean rewriteManifest(boolean reset, long cut) throws Exception {
            while (true) {
                long began = System.nanoTime();
                Path file = ManifestStore.fileIn(dir);
                Manifest now;
                try {
                    byte[] bytes = Files.readAllBytes(file);
                    now = ManifestCodec.decode(ByteBuffer.wrap(bytes), CorruptionSite.inFile("broker", "offload.manifest", 0));
                } catch (NoSuchFileException absent) {
                    now = Manifest.empty();
                }
                Manifest next = reset ? now.reset() : now.truncatedAt(cut);
                boolean slow = random.nextInt(5) == 0;
                Thread.sleep(slow ? 200 + random.nextInt(Math.max(1, slowMs - 200)) : random.nextInt(30));
                try {
                    DurableFiles.replace(file, dir.resolve(BROKER_TEMP), ManifestCodec.encode(next), DurableFiles.Sync.FULL,
                            step -> { }, () -> {
                                long took = (System.nanoTime() - began) / 1_000_000;
                                if (budgetMs > 0 && took >= budgetMs) {
                                    throw new Overdue(took);
                                }
                            });
                } catch (Overdue late) {
                    overdue.incrementAndGet();
                    continue;
                }
                longest.accumulateAndGet((System.nanoTime() - began) / 1_000_000, Math::max);
                return slow;
            }
        }

        /** The base of the newest sealed segment (cuts stay at or above it, where offload never unlinks). */
        private long newestSealedBase() throws IOException {
            List<SegmentFile> files = SegmentFile.list(dir);
            if (files.size() < 2) {
                return 0;
            }
            SegmentFile f = files.get(files.size() - 2);
            ByteBuffer head = ByteBuffer.allocate(SegmentHeader.LENGTH);
            try (FileChannel ch = FileChannel.open(f.log(), StandardOpenOption.READ)) {
                while (head.hasRemaining() && ch.read(head) >= 0) {
                    // read the header whole
                }
            } catch (NoSuchFileException gone) {
                return 0;
            }
            return head.getLong(8);
        }
    }

    /** A rewrite that would rename after its budget: given up before the rename. */
    private static final class Overdue extends IOException {
        Overdue(long tookMs) {
            super("the rewrite took " + tookMs + " ms before its rename");
        }
    }
}
