package dev.felix.offload.pass;

import dev.felix.offload.copy.LocalRetention;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.manifest.ManifestCache;
import dev.felix.offload.manifest.ManifestSummary;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shards the last offload pass of this process found with nothing to do, and how their
 * directories looked then, so the next pass skips them while they look the same: a quiet pass over a
 * root of 30,000 shards then costs two {@code stat} calls a shard instead of reading each one's
 * directory, segment headers and manifest.
 *
 * <p>A shard counts as quiet when its pass ended complete, uploaded and unlinked nothing, left
 * nothing pending or settling, its manifest records every sealed segment, and local retention lets
 * none of its segments go (so no unlink waits on anything but a change of the directory). It stays quiet while
 * its directory's modification time is what it was before that pass began (any segment created,
 * removed or renamed, and any replacement of the manifest or a side file, changes it) and its newest
 * segment's size is unchanged (the only file that grows, and what a byte limit on local disk counts).
 * A time read less than two seconds after it was set is not trusted: a second change within the file
 * system's time granularity could leave it as it was.
 *
 * <p>Skipping a shard only postpones its work to the pass after its directory changes; nothing is
 * uploaded, recorded or unlinked on the strength of this memo. One per daemon, shared by its passes.
 */
public final class QuietShards {

    private static final long SETTLED_NANOS = 2_000_000_000L;

    /** A directory's look before a pass. */
    record Look(long dirModifiedNanos, Path newest, long newestSize) {
    }

    private final Map<Path, Look> quiet = new ConcurrentHashMap<>();
    /** The local retention the shards were found quiet under. */
    private volatile LocalRetention retention;

    /** Forgets every shard when a pass runs under another local retention than the one they were found quiet under. */
    void under(LocalRetention now) {
        if (!now.equals(retention)) {
            quiet.clear();
            retention = now;
        }
    }

    /** How {@code dir} looks now; null when it cannot be trusted to stay the same (changed too lately, or unreadable). */
    Look look(Path dir) {
        try {
            long modified = nanos(Files.getLastModifiedTime(dir).toInstant());
            if (nanos(Instant.now()) - modified < SETTLED_NANOS) {
                return null;
            }
            Look known = quiet.get(dir);
            if (known != null && known.dirModifiedNanos() == modified) {
                // The directory did not change: the newest segment is the one it was; only its size may have.
                long size = known.newest() == null ? -1 : Files.size(known.newest());
                return new Look(modified, known.newest(), size);
            }
            List<SegmentFile> files = SegmentFile.list(dir);
            Path newest = files.isEmpty() ? null : files.get(files.size() - 1).log();
            return new Look(modified, newest, newest == null ? -1 : Files.size(newest));
        } catch (NoSuchFileException gone) {
            return null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Whether {@code dir} is known quiet and looks as it did when it was found so ({@code now} from {@link #look}). */
    boolean stillQuiet(Path dir, Look now) {
        return now != null && now.equals(quiet.get(dir));
    }

    /**
     * Notes how the pass over {@code dir} ended: quiet (see the class comment) with the directory as it
     * looked before the pass, or not.
     */
    void ended(Path dir, Look before, ShardResult result, LocalRetention retention) {
        if (before == null || !nothingDone(result) || !nothingLeft(dir, retention)) {
            quiet.remove(dir);
            return;
        }
        quiet.put(dir, before);
    }

    /** Forgets directories not in {@code present} (shards gone from the root). */
    void retainOnly(Collection<Path> present) {
        Set<Path> keep = new HashSet<>(present);
        quiet.keySet().removeIf(p -> !keep.contains(p));
    }

    /** How many shards are held quiet now. */
    public int size() {
        return quiet.size();
    }

    private static boolean nothingDone(ShardResult r) {
        return r.complete() && r.problem() == null && r.uploaded().isEmpty() && r.unlinked().isEmpty()
                && r.pending() == 0 && r.settling() == null;
    }

    /** Whether every sealed segment is recorded and local retention lets none go. */
    private static boolean nothingLeft(Path dir, LocalRetention retention) {
        try {
            List<SegmentFile> files = SegmentFile.list(dir);
            ManifestSummary manifest = ManifestCache.shared().summary(dir);
            long[] sizes = new long[files.size()];
            for (int i = 0; i < files.size(); i++) {
                if (i < files.size() - 1 && !manifest.records(files.get(i).id())) {
                    return false;
                }
                sizes[i] = Files.size(files.get(i).log());
            }
            return retention.removable(sizes) == 0;
        } catch (IOException | dev.felix.offload.log.format.CorruptionException e) {
            return false;
        }
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
