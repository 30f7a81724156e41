package dev.felix.offload.restore;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.pass.ProgressListener;
import dev.felix.offload.restore.StoreCandidates.Candidate;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.StoreException;
import org.slf4j.Logger;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A restore's reading of segment objects: each downloaded whole into its own temporary under the
 * work directory and scanned with every record checksum verified, {@code concurrency} at a time, and
 * taken in the order given, as one at a time took them: the entries, the first refusal and the
 * progress reported are the same whatever the concurrency. Every field of an entry comes from the
 * object's bytes: the base offset from the segment header (which must agree with the key), the last
 * offset and the timestamps from its records, the size and the CRC32 from the bytes themselves.
 */
final class SegmentDownloads {

    private final String shard;
    private final ObjectFetcher fetcher;
    private final int concurrency;
    private final ProgressListener progress;
    private final Logger log;

    SegmentDownloads(String shard, ObjectFetcher fetcher, int concurrency, ProgressListener progress, Logger log) {
        this.shard = shard;
        this.fetcher = fetcher;
        this.concurrency = concurrency;
        this.progress = progress;
        this.log = log;
    }

    /**
     * Reads and scans each candidate into {@code read} (and {@code byKey}), in their order: the first
     * that fails in that order is what this throws, once every download under way has ended (none is
     * left writing under {@code work}).
     */
    void readAll(List<Candidate> candidates, Path work, Map<String, ManifestEntry> read, Map<String, Candidate> byKey)
            throws IOException, StoreException, ObjectRefusedException {
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(concurrency, candidates.size())), r -> {
            Thread t = new Thread(r, "restore-read");
            t.setDaemon(true);
            return t;
        });
        ArrayDeque<Future<ManifestEntry>> pending = new ArrayDeque<>();
        ArrayDeque<Candidate> pendingCandidates = new ArrayDeque<>();
        try {
            int n = 0;
            for (Candidate c : candidates) {
                Path file = work.resolve("segment-" + n++);
                pending.add(pool.submit(() -> {
                    try {
                        fetcher.download(c.key(), file, OptionalLong.empty());
                        return entryOf(c, file);
                    } finally {
                        Files.deleteIfExists(file);
                    }
                }));
                pendingCandidates.add(c);
                while (pending.size() > 2 * concurrency) {
                    take(pending.poll(), pendingCandidates.poll(), read, byKey);
                }
            }
            while (!pending.isEmpty()) {
                take(pending.poll(), pendingCandidates.poll(), read, byKey);
            }
        } finally {
            pool.shutdownNow();
            try {
                if (!pool.awaitTermination(10, TimeUnit.MINUTES)) {
                    log.warn("{}: downloads of the restore still running after 10 minutes", shard);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Takes one candidate's scan, or throws what it failed with. */
    private void take(Future<ManifestEntry> next, Candidate c, Map<String, ManifestEntry> read,
                      Map<String, Candidate> byKey) throws IOException, StoreException, ObjectRefusedException {
        ManifestEntry entry;
        try {
            entry = next.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while restoring " + shard);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ObjectRefusedException r) {
                throw r;
            }
            if (cause instanceof StoreException x) {
                throw x;
            }
            if (cause instanceof IOException x) {
                throw x;
            }
            if (cause instanceof RuntimeException x) {
                throw x;
            }
            if (cause instanceof Error x) {
                throw x;
            }
            throw new IllegalStateException(cause);
        }
        read.put(c.key(), entry);
        byKey.put(c.key(), c);
        progress.uploaded(c.size());
    }

    /** The manifest entry the bytes of {@code file} (the object {@code c}) prove. */
    private ManifestEntry entryOf(Candidate c, Path file) throws IOException, ObjectRefusedException {
        SegmentScan scan = SegmentScan.of(file, shard, c.segmentId(), ScanDepth.RECORDS);
        if (!scan.isClean()) {
            throw new ObjectRefusedException(c.key() + ": not a whole segment: " + scan.failure().getMessage());
        }
        if (scan.validEnd() != scan.fileSize()) {
            throw new ObjectRefusedException(c.key() + ": " + (scan.fileSize() - scan.validEnd())
                    + " bytes after the last record, from byte " + scan.validEnd());
        }
        if (scan.recordCount() == 0) {
            throw new ObjectRefusedException(c.key() + ": a segment without records, which offload never uploads");
        }
        if (scan.header().baseOffset() != c.base()) {
            throw new ObjectRefusedException(c.key() + ": the segment header's base offset is "
                    + Long.toUnsignedString(scan.header().baseOffset()) + ", the key says "
                    + Long.toUnsignedString(c.base()));
        }
        return new ManifestEntry(c.segmentId(), c.base(), scan.nextOffset() - 1, scan.validEnd(),
                scan.oldestTimestamp(), scan.newestTimestamp(), (int) scan.validBytesCrc32(), c.key());
    }
}
