package dev.felix.offload.daemon;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.manifest.ManifestCache;
import dev.felix.offload.manifest.ManifestSummary;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;

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
        return new ShardSurvey.Memo().survey(root);
    }

    /** How the problem of a row for a name that could not be read begins. */
    public static final String UNREADABLE = "unreadable, its counts unknown: ";

    public static ShardStatus of(Path dir) throws IOException {
        return of(DataRoot.Shard.nameOf(dir), dir);
    }

    public static ShardStatus of(String shard, Path dir) throws IOException {
        return new Memo().shard(shard, dir);
    }

    /**
     * Surveys that remember what they read of each shard directory, so a shard that did not change
     * since the last survey costs a few {@code stat} calls: the directory (its time changes whenever a
     * segment is created, removed or renamed, and whenever the manifest is replaced), the newest
     * segment (the only one whose size grows) and the manifest (whose summary comes from the
     * {@link ManifestCache}, decoded once per change). A directory changed within the last
     * two seconds is read in full every time, since a second change within the file system's time
     * granularity would leave its time as it was. One memo per daemon; safe for concurrent surveys.
     */
    public static final class Memo {

        private static final long SETTLED_NANOS = 2_000_000_000L;

        /** What a directory held when it was last read in full. */
        private record Local(long dirModifiedNanos, List<SegmentFile> files, long[] sealedSizes, OptionalLong localBase,
                             String problem) {
        }

        private final java.util.Map<Path, Local> locals = new java.util.concurrent.ConcurrentHashMap<>();
        private final ManifestCache manifests;

        public Memo() {
            this(ManifestCache.shared());
        }

        Memo(ManifestCache manifests) {
            this.manifests = manifests;
        }

        /** Every stream shard of the root, as {@link ShardSurvey#of(DataRoot)} answers. */
        public List<ShardStatus> survey(DataRoot root) throws IOException {
            DataRoot.Listing listing = root.list();
            List<ShardStatus> out = survey(listing.streamShards());
            // A name that may be a shard but could not be read gets a row saying so, never silence: its
            // counts are unknown (shown as 0) and its problem says why.
            for (DataRoot.Unreadable u : listing.unreadable()) {
                out.add(unreadable(u));
            }
            out.sort(java.util.Comparator.comparing(ShardStatus::shard));
            java.util.Set<Path> present = new HashSet<>();
            for (DataRoot.Shard s : listing.shards()) {
                present.add(s.directory());
            }
            locals.keySet().removeIf(p -> !present.contains(p));
            return out;
        }

        /** One page of the survey: its rows by name, and the name to ask for the next page after (null on the last). */
        public record Page(List<ShardStatus> shards, String nextAfter) {
        }

        /**
         * The rows of the {@code limit} shards (stream shards and names that could not be read) whose
         * names come after {@code after} (from the first when null), by name. Only those shards are
         * read, so a page costs the same at any root size; the root is listed, which costs one
         * attribute read per entry.
         */
        public Page page(DataRoot root, String after, int limit) throws IOException {
            if (limit < 1) {
                throw new IllegalArgumentException("a page holds at least one shard, not " + limit);
            }
            DataRoot.Listing listing = root.list();
            java.util.TreeMap<String, Object> byName = new java.util.TreeMap<>();
            for (DataRoot.Shard s : listing.streamShards()) {
                byName.put(s.name(), s);
            }
            for (DataRoot.Unreadable u : listing.unreadable()) {
                byName.putIfAbsent(u.name(), u);
            }
            java.util.SortedMap<String, Object> rest = after == null ? byName : byName.tailMap(after, false);
            List<Object> chosen = new ArrayList<>(Math.min(limit, rest.size()));
            String nextAfter = null;
            for (Object o : rest.values()) {
                if (chosen.size() == limit) {
                    nextAfter = name(chosen.get(limit - 1));
                    break;
                }
                chosen.add(o);
            }
            List<ShardStatus> out = new ArrayList<>(chosen.size());
            for (Object o : chosen) {
                if (o instanceof DataRoot.Shard s) {
                    out.addAll(survey(List.of(s)));
                } else {
                    out.add(unreadable((DataRoot.Unreadable) o));
                }
            }
            return new Page(out, nextAfter);
        }

        private static String name(Object row) {
            return row instanceof DataRoot.Shard s ? s.name() : ((DataRoot.Unreadable) row).name();
        }

        /** The rows of {@code shards}, in their order; a shard directory gone meanwhile is left out. */
        public List<ShardStatus> survey(List<DataRoot.Shard> shards) throws IOException {
            List<ShardStatus> out = new ArrayList<>(shards.size());
            for (DataRoot.Shard s : shards) {
                ShardStatus status;
                try {
                    status = shard(s.name(), s.directory());
                } catch (NoSuchFileException gone) {
                    VANISHED.incrementAndGet();
                    locals.remove(s.directory());
                    if (!Files.isDirectory(s.directory())) {
                        continue;
                    }
                    try {
                        status = shard(s.name(), s.directory());
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
            return out;
        }

        static ShardStatus unreadable(DataRoot.Unreadable u) {
            return new ShardStatus(u.name(), OptionalLong.empty(), 0, 0, OptionalLong.empty(), OptionalLong.empty(), 0,
                    0, 0, 0, UNREADABLE + u.reason());
        }

        ShardStatus shard(String shard, Path dir) throws IOException {
            Local local = local(shard, dir);
            List<SegmentFile> files = local.files();
            long[] sizes = new long[files.size()];
            long localBytes = 0;
            for (int i = 0; i < files.size(); i++) {
                long size;
                if (i < files.size() - 1) {
                    size = local.sealedSizes()[i];
                } else {
                    try {
                        size = Files.size(files.get(i).log()); // the newest grows
                    } catch (NoSuchFileException gone) {
                        locals.remove(dir);
                        throw gone;
                    }
                }
                sizes[i] = size;
                localBytes += Math.max(size, 0);
            }
            String problem = local.problem();
            ManifestSummary manifest = ManifestSummary.EMPTY;
            try {
                manifest = manifests.summary(dir);
            } catch (NoSuchFileException e) {
                if (!Files.isDirectory(dir)) {
                    throw e;
                }
            } catch (CorruptionException e) {
                problem = "manifest unreadable: " + e.getMessage();
            }
            int lagSegments = 0;
            long lagBytes = 0;
            for (int i = 0; i < files.size() - 1; i++) {
                // A sealed segment of no more than a header holds no record: nothing to offload, so no lag.
                if (!manifest.records(files.get(i).id()) && sizes[i] > SegmentHeader.LENGTH) {
                    lagSegments++;
                    lagBytes += sizes[i];
                }
            }
            OptionalLong first = manifest.oldest().map(e -> OptionalLong.of(e.baseOffset())).orElse(OptionalLong.empty());
            OptionalLong last = manifest.newest().map(e -> OptionalLong.of(e.lastOffset())).orElse(OptionalLong.empty());
            int localSegments = 0;
            for (long size : sizes) {
                localSegments += size >= 0 ? 1 : 0;
            }
            return new ShardStatus(shard, local.localBase(), localSegments, localBytes, first, last, manifest.entries(),
                    manifest.bytes(), lagSegments, lagBytes, problem);
        }

        /** The directory's segments, from the memo when the directory has not changed since it was read. */
        private Local local(String shard, Path dir) throws IOException {
            long modified = modifiedNanos(dir);
            Local known = locals.get(dir);
            if (known != null && known.dirModifiedNanos() == modified) {
                return known;
            }
            List<SegmentFile> files = SegmentFile.list(dir);
            long[] sealed = new long[Math.max(0, files.size() - 1)];
            for (int i = 0; i < sealed.length; i++) {
                try {
                    sealed[i] = Files.size(files.get(i).log());
                } catch (NoSuchFileException gone) {
                    sealed[i] = -1; // unlinked since the listing
                }
            }
            OptionalLong localBase = OptionalLong.empty();
            String problem = null;
            try {
                localBase = firstOffset(shard, files);
            } catch (CorruptionException e) {
                problem = "oldest segment header unreadable: " + e.getMessage();
            }
            Local fresh = new Local(modified, List.copyOf(files), sealed, localBase, problem);
            long now = java.time.Instant.now().getEpochSecond() * 1_000_000_000L + java.time.Instant.now().getNano();
            if (now - modified >= SETTLED_NANOS) {
                locals.put(dir, fresh);
            } else {
                locals.remove(dir);
            }
            return fresh;
        }

        /** The base offset of the oldest segment that is still there; empty without one. */
        private static OptionalLong firstOffset(String shard, List<SegmentFile> files) throws IOException,
                CorruptionException {
            for (SegmentFile f : files) {
                try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f.log(),
                        java.nio.file.StandardOpenOption.READ)) {
                    java.nio.ByteBuffer head = java.nio.ByteBuffer.allocate(SegmentHeader.LENGTH);
                    while (head.hasRemaining()) {
                        if (ch.read(head) < 0) {
                            break; // a file shorter than a header: the decode names it truncated
                        }
                    }
                    return OptionalLong.of(SegmentHeader.decode(head.flip(),
                            new dev.felix.offload.log.format.CorruptionSite(shard, f.id(), 0)).baseOffset());
                } catch (NoSuchFileException gone) {
                    // removed since the listing: the next one is the oldest now
                }
            }
            return OptionalLong.empty();
        }

        private static long modifiedNanos(Path dir) throws IOException {
            java.time.Instant t = Files.getLastModifiedTime(dir).toInstant();
            return t.getEpochSecond() * 1_000_000_000L + t.getNano();
        }
    }
}
