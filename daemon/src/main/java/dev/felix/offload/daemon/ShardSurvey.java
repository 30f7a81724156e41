package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.ShardReader;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Where each shard's data is now, read from its directory and manifest: what the daemon's
 * {@code /shards} and its byte and lag gauges show. Reads only; a shard changing meanwhile is seen
 * as it was at some moment of the survey.
 */
public final class ShardSurvey {

    /**
     * One shard.
     *
     * @param localBase      the oldest offset on local disk, empty without a readable segment
     * @param remoteFirst    the first offset of the oldest manifest entry, empty without entries
     * @param remoteLast     the last offset of the newest manifest entry, empty without entries
     * @param lagSegments    sealed local segments without a manifest entry (waiting for offload)
     * @param lagBytes       their bytes
     * @param problem        what could not be read, or null
     */
    public record ShardStatus(String shard, OptionalLong localBase, int localSegments, long localBytes,
                       OptionalLong remoteFirst, OptionalLong remoteLast, int remoteSegments, long remoteBytes,
                       int lagSegments, long lagBytes, String problem) {
    }

    /** The sums over every shard. */
    public record Totals(long localBytes, long remoteBytes, int lagSegments, long lagBytes, int localSegments,
                  int remoteSegments) {
        public static Totals of(List<ShardStatus> shards) {
            long lb = 0;
            long rb = 0;
            int ls = 0;
            long lgb = 0;
            int lsg = 0;
            int rs = 0;
            for (ShardStatus s : shards) {
                lb += s.localBytes();
                rb += s.remoteBytes();
                ls += s.lagSegments();
                lgb += s.lagBytes();
                lsg += s.localSegments();
                rs += s.remoteSegments();
            }
            return new Totals(lb, rb, ls, lgb, lsg, rs);
        }
    }

    private ShardSurvey() {
    }

    /** Files (or whole shard directories) the broker removed while a survey read them, since start-up. */
    private static final java.util.concurrent.atomic.AtomicLong VANISHED = new java.util.concurrent.atomic.AtomicLong();

    public static long vanished() {
        return VANISHED.get();
    }

    /**
     * Every stream shard as it is now. A file removed between the listing and its opening (a broker's
     * retention or truncation, an offload pass's unlink) is an ordinary event: the shard is looked at
     * again as it is then, and only a file missing on that second look is reported as the shard's
     * problem. A shard directory gone meanwhile (a deleted stream) is left out.
     */
    public static List<ShardStatus> of(DataRoot root) throws IOException {
        List<ShardStatus> out = new ArrayList<>();
        DataRoot.Listing listing = root.list();
        for (DataRoot.Shard s : listing.streamShards()) {
            ShardStatus status;
            try {
                status = of(s.name(), s.directory());
            } catch (NoSuchFileException gone) {
                VANISHED.incrementAndGet();
                if (!Files.isDirectory(s.directory())) {
                    continue;
                }
                try {
                    status = of(s.name(), s.directory());
                } catch (NoSuchFileException still) {
                    if (!Files.isDirectory(s.directory())) {
                        continue;
                    }
                    status = new ShardStatus(s.name(), OptionalLong.empty(), 0, 0, OptionalLong.empty(),
                            OptionalLong.empty(), 0, 0, 0, 0, "a file stayed missing on a second look: " + still.getFile());
                }
            }
            out.add(status);
        }
        // A name that may be a shard but could not be read gets a row saying so, never silence: its
        // counts are unknown (shown as 0) and its problem says why.
        for (DataRoot.Unreadable u : listing.unreadable()) {
            out.add(new ShardStatus(u.name(), OptionalLong.empty(), 0, 0, OptionalLong.empty(), OptionalLong.empty(), 0,
                    0, 0, 0, UNREADABLE + u.reason()));
        }
        out.sort(java.util.Comparator.comparing(ShardStatus::shard));
        return out;
    }

    /** How the problem of a row for a name that could not be read begins. */
    public static final String UNREADABLE = "unreadable, its counts unknown: ";

    public static ShardStatus of(Path dir) throws IOException {
        return of(dir.getFileName().toString(), dir);
    }

    public static ShardStatus of(String shard, Path dir) throws IOException {
        String problem = null;
        List<SegmentFile> files = SegmentFile.list(dir);
        long localBytes = 0;
        List<Long> sizes = new ArrayList<>();
        for (SegmentFile f : files) {
            long size;
            try {
                size = Files.size(f.log());
            } catch (NoSuchFileException gone) {
                size = -1; // unlinked since the listing
            }
            sizes.add(size);
            localBytes += Math.max(size, 0);
        }
        OptionalLong localBase = OptionalLong.empty();
        try {
            localBase = new ShardReader(dir, shard).firstOffset();
        } catch (CorruptionException e) {
            problem = "oldest segment header unreadable: " + e.getMessage();
        }
        Manifest manifest = Manifest.empty();
        try {
            manifest = ManifestStore.read(dir);
        } catch (NoSuchFileException e) {
            // nothing offloaded yet
        } catch (CorruptionException e) {
            problem = "manifest unreadable: " + e.getMessage();
        }
        Set<Long> recorded = new HashSet<>();
        for (ManifestEntry e : manifest.entries()) {
            recorded.add(e.segmentId());
        }
        int lagSegments = 0;
        long lagBytes = 0;
        for (int i = 0; i < files.size() - 1; i++) {
            // A sealed segment of no more than a header holds no record: nothing to offload, so no lag.
            if (!recorded.contains(files.get(i).id()) && sizes.get(i) > dev.felix.offload.log.format.SegmentHeader.LENGTH) {
                lagSegments++;
                lagBytes += sizes.get(i);
            }
        }
        OptionalLong first = manifest.oldestEntry().map(e -> OptionalLong.of(e.baseOffset())).orElse(OptionalLong.empty());
        OptionalLong last = manifest.newestEntry().map(e -> OptionalLong.of(e.lastOffset())).orElse(OptionalLong.empty());
        int localSegments = (int) sizes.stream().filter(s -> s >= 0).count();
        return new ShardStatus(shard, localBase, localSegments, localBytes, first, last, manifest.size(),
                manifest.totals().bytes(), lagSegments, lagBytes, problem);
    }
}
